"""Helpers for the tests of the student's page: the built site, and what must never be in it."""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

from grader.core import exercise
from grader.export import web as web_build

ROOT = web_build.ROOT
EXERCISE = exercise.load(exercise.KIT_ROOT)  # the kit's own exercise, whose site `make test` builds


def built_site() -> Path:
    """The site `make test` built (rebuilt here if an input changed since)."""
    return web_build.ensure_built(EXERCISE)


def site_blobs(site: Path):
    """(name, bytes) of every file of the site, of every member of its zip files, and of its gzip files unpacked."""
    for path in sorted(site.rglob("*")):
        if not path.is_file():
            continue
        data = path.read_bytes()
        name = path.relative_to(site).as_posix()
        yield name, data
        if path.suffix == ".gz":  # Python's memory snapshot: the leak checks read what it holds
            yield f"{name}!gunzip", gzip.decompress(data)
        if path.suffix == ".zip":
            with zipfile.ZipFile(io.BytesIO(data)) as z:
                for member in z.namelist():
                    yield f"{name}!{member}", z.read(member)


def fingerprints(secret: Path, shipped: list[Path], min_length: int = 20) -> list[bytes]:
    """Lines of `secret` long enough to be its own, that no file meant to be shipped contains."""
    public = b"\n".join(p.read_bytes() for p in shipped)
    lines = {line.strip() for line in secret.read_bytes().splitlines()}
    # A line that is only a string is a message students are meant to read (the formatter gives
    # long ones a line of their own); the code around it is what must never ship.
    text = (b'"', b"'", b'f"', b"f'")
    return sorted(
        line
        for line in lines
        if len(line) >= min_length and not line.startswith(b"#") and not line.startswith(text) and line not in public
    )


def leaks(site: Path, prints: list[bytes]) -> list[str]:
    """Where in the site any of the fingerprints appears."""
    return [f"{name}: {p[:60]!r}" for name, data in site_blobs(site) for p in prints if p in data]


def shipped_sources() -> list[Path]:
    return [ROOT / name for name in web_build.kit_files(EXERCISE)] + [web_build.PAGE_SESSION]


# Hypothesis mixes constants from the "local" modules in sys.modules into what it generates,
# except under Pyodide (sys.platform == "emscripten"), where it turns that off. So a property's
# inputs depend on what else the process imported. To compare like with like, the CPython side
# runs in a fresh process with that turned off too, as under Pyodide.
CPYTHON_DRIVER = """
import json, sys
from grader.core import exercise
from grader.core import hypothesis_adapter, runner
hypothesis_adapter.no_local_constants()
from grader.core.submission import LocalSubmission
for path in sys.argv[1:]:
    code = open(path, encoding="utf-8").read()
    ex = exercise.load(exercise.KIT_ROOT)
    report = runner.run(ex, lambda: LocalSubmission(code, ex.function), "submission.py", tiers=ex.browser_tiers)
    print(json.dumps({"file": path, "report": report.as_json()}), flush=True)
"""


def start_cpython(paths: list[Path]) -> subprocess.Popen:
    """Runs the browser tiers on each file under CPython, like the page does; JSON lines out."""
    return subprocess.Popen(
        [sys.executable, "-c", CPYTHON_DRIVER, *map(str, paths)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )


def start_pyodide(site: Path, paths: list[Path]) -> subprocess.Popen:
    """The same, under Pyodide in Node, with the built site's runtime, wheels and page_session."""
    return subprocess.Popen(
        ["node", str(ROOT / "web" / "tools" / "run-node.mjs"), str(site), *map(str, paths)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT / "web",
    )


def reports(process: subprocess.Popen, timeout: float = 600) -> dict[str, dict]:
    """file -> JSON report, from one of the processes above."""
    out, err = process.communicate(timeout=timeout)
    assert process.returncode == 0, err[-3000:]
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return {str(Path(line["file"]).resolve()): line["report"] for line in lines if "report" in line}


def verdicts(report: dict) -> dict[str, str]:
    return {test["name"]: test["status"] for test in report["tests"]}
