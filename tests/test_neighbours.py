"""A neighbour cannot change a grade: a correct file scores the same alone and beside a CPU hog, in every mode."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import KIT_ROOT, as_nobody
from containers import LIKE_GRADESCOPE, NO_BWRAP

NEIGHBOURS = Path(__file__).parent / "hostile" / "neighbours"
# The reference, whose first call spends 0.5 s of CPU time: correct, and on the slow side of a 1 s limit.
SLOW_FIRST_CALL = """
import time as _time

_first = [True]
_reference = meteor_score


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    if _first[0]:
        _first[0] = False
        started = _time.process_time()
        while _time.process_time() - started < 0.5:
            pass
    return _reference(reference, candidate, alpha, beta, gamma)
"""
MODES = ["bubblewrap", "bubblewrap-unprivileged", "separate-uid", "like-gradescope"]


def _grade(mode: str, klass: Path, out: Path) -> dict[str, float]:
    command = [sys.executable, "-m", "grader.cli", "grade", str(klass), "--out", str(out), "--jobs", "2", "--timeout", "1"]
    command += ["--budget", "5"]
    env = {**os.environ}
    if mode == "bubblewrap-unprivileged":
        command = as_nobody(command)
        env["HOME"] = str(klass.parent)
    elif mode == "separate-uid":
        command = [*NO_BWRAP, *command]
    elif mode == "like-gradescope":
        command = [*LIKE_GRADESCOPE, *command]
    run = subprocess.run(command, capture_output=True, text=True, timeout=900, env=env, cwd=str(klass.parent))
    assert run.returncode == 0, run.stderr[-3000:]
    results = json.loads((out / "results.json").read_text())
    return {r["submission"]: r["score"] for r in results["submissions"]}


@pytest.fixture(scope="module")
def scratch():
    path = Path(tempfile.mkdtemp(prefix="meteor-neighbours-", dir="/tmp"))
    path.chmod(0o777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.needs_root("three of its modes need root (a uid of its own, a chroot), the fourth runs as uid 65534")
@pytest.mark.parametrize("mode", MODES)
def test_a_correct_file_scores_the_same_alone_and_beside_a_cpu_hog(mode, scratch):
    victim = (KIT_ROOT / "solutions" / "reference.py").read_text() + SLOW_FIRST_CALL
    scores = {}
    for shape, files in (("alone", {"victim.py": victim}), ("beside", {"victim.py": victim, "a_hog.py": None})):
        klass = scratch / mode / shape / "class"
        klass.mkdir(parents=True)
        for name, text in files.items():
            target = klass / name
            if text is None:
                shutil.copy(NEIGHBOURS / "cpu_hog.py", target)
            else:
                target.write_text(text)
        for path in [scratch / mode, scratch / mode / shape, *klass.parent.rglob("*")]:
            path.chmod(0o777 if path.is_dir() else 0o666)
        scores[shape] = _grade(mode, klass, klass.parent / "out")
    assert scores["beside"]["a_hog.py"] == 0.0
    assert scores["alone"]["victim.py"] == scores["beside"]["victim.py"] == 113.0, scores
