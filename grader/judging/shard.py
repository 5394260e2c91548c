"""Which shard of `grade --shard K/N` a submission belongs to: the same answer on every machine."""

from __future__ import annotations

import argparse
import hashlib


def in_shard(name: str, shard: tuple[int, int]) -> bool:
    """Whether submission `name` belongs to shard K of N: by a digest of its name, the same on every machine."""
    k, n = shard
    return int.from_bytes(hashlib.sha256(name.encode("utf-8", "surrogatepass")).digest()[:8], "big") % n == k - 1


def parse_shard(text: str) -> tuple[int, int]:
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not K/N: {text!r}") from None
    if not 1 <= k <= n:
        raise argparse.ArgumentTypeError(f"K must be from 1 to N: {text!r}")
    return k, n
