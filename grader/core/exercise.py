"""The exercise's metadata, read from problem/exercise.toml (the one source of truth)."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

KIT_ROOT = Path(__file__).resolve().parents[2]
TIERS = ("examples", "hidden", "properties", "private")


@dataclass(frozen=True)
class Tier:
    name: str
    points: float
    browser: bool
    description: str


@dataclass(frozen=True)
class Exercise:
    id: str
    title: str
    difficulty: str
    function: str
    signature: str
    call_timeout: float
    budget: float
    browser_test_timeout: float
    memory_mb: int
    hypothesis_examples: int
    private_examples: int
    tiers: dict[str, Tier]
    scoring: dict = field(default_factory=dict)  # when points are paid: read by grader/core/scoring.py
    submission_file: str | None = None  # `[submission] file`: a glob naming the file graded among a student's files

    @property
    def browser_tiers(self) -> tuple[str, ...]:
        return tuple(name for name, tier in self.tiers.items() if tier.browser)


def parse(data: dict) -> Exercise:
    limits = data["limits"]
    tiers = {
        name: Tier(name, float(t["points"]), bool(t["browser"]), t.get("description", ""))
        for name, t in data["tiers"].items()
    }
    unknown = set(tiers) - set(TIERS)
    if unknown:
        raise ValueError(f"exercise.toml names unknown tiers: {sorted(unknown)}")
    return Exercise(
        id=data["id"],
        title=data["title"],
        difficulty=data["difficulty"],
        function=data["function"],
        signature=data["signature"],
        call_timeout=float(limits["call_timeout"]),
        budget=float(limits["budget"]),
        browser_test_timeout=float(limits["browser_test_timeout"]),
        memory_mb=int(limits["memory_mb"]),
        hypothesis_examples=int(data["hypothesis"]["examples"]),
        private_examples=int(data["hypothesis"]["private_examples"]),
        tiers=tiers,
        scoring=data.get("scoring", {}),
        submission_file=data.get("submission", {}).get("file") or None,
    )


@lru_cache(maxsize=None)
def load(path: Path | None = None) -> Exercise:
    path = path or KIT_ROOT / "problem" / "exercise.toml"
    with open(path, "rb") as f:
        return parse(tomllib.load(f))
