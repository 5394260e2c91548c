"""Helpers for the tests of the student's page: the built site, and what must never be in it."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from grader import web_build

ROOT = web_build.ROOT


def built_site() -> Path:
    """The site `make test` built (rebuilt here if an input changed since)."""
    return web_build.ensure_built(web_build.DEFAULT_OUT)


def site_blobs(site: Path):
    """(name, bytes) of every file of the site, and of every member of its zip files."""
    for path in sorted(site.rglob("*")):
        if not path.is_file():
            continue
        data = path.read_bytes()
        name = path.relative_to(site).as_posix()
        yield name, data
        if path.suffix == ".zip":
            with zipfile.ZipFile(io.BytesIO(data)) as z:
                for member in z.namelist():
                    yield f"{name}!{member}", z.read(member)


def fingerprints(secret: Path, shipped: list[Path], min_length: int = 20) -> list[bytes]:
    """Lines of `secret` long enough to be its own, that no file meant to be shipped contains."""
    public = b"\n".join(p.read_bytes() for p in shipped)
    lines = {line.strip() for line in secret.read_bytes().splitlines()}
    return sorted(
        line for line in lines if len(line) >= min_length and not line.startswith(b"#") and line not in public
    )


def leaks(site: Path, prints: list[bytes]) -> list[str]:
    """Where in the site any of the fingerprints appears."""
    return [f"{name}: {p[:60]!r}" for name, data in site_blobs(site) for p in prints if p in data]


def shipped_sources() -> list[Path]:
    return [ROOT / name for name in web_build.KIT_FILES] + [web_build.PAGE_SESSION]
