"""Every file `meteor-kit grade` writes, compared with the golden folders in tests/golden/grade/.

One scenario per folder, as Exercism's runner does: `class/` in, `expected/` out. The run goes
through the real command; only what changes from run to run (durations, the isolation mode of
this machine, the memo's bookkeeping) is normalised. UPDATE_GOLDEN=1 rewrites `expected/`.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import BIN, KIT_ROOT

GOLDEN = KIT_ROOT / "tests" / "golden" / "grade"
SCENARIOS = sorted(p.name for p in GOLDEN.iterdir() if (p / "class").is_dir())
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
VOLATILE = {"duration", "execution_time"}  # seconds: they differ on every run
# The memo's and resume's, and which way the tests ran (memoized or plain, replay or plain hypothesis): not the grade's.
BOOKKEEPING = {"key", "from_memo", "reused", "paths"}
MODES = ("bubblewrap", "separate-uid", "none")


def _stable(value, parent: str = ""):
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key in BOOKKEEPING:
                continue
            if key in VOLATILE and isinstance(item, (int, float)):
                item = 0
            elif key == "isolation" and item in MODES:
                item = "ISOLATION"
            elif key == "isolation_note":
                item = ""
            out[key] = _stable(item, key)
        return out
    if isinstance(value, list):
        return [_stable(item, parent) for item in value]
    return value


def _html(text: str, styles: dict[str, str]) -> str:
    # The isolation banner says which mode this machine gave: its own tests check it.
    text = re.sub(
        r'<div class="banner[^"]*" id="isolation"[^>]*>.*?</div>', '<div id="isolation">ISOLATION</div>', text, flags=re.S
    )

    # Every page of the report carries the same stylesheet: kept once, under its digest, as the
    # golden file _styles/<digest>.css, so a golden folder does not repeat it per student.
    def once(match: re.Match) -> str:
        name = f"_styles/{hashlib.sha256(match.group(1).encode()).hexdigest()[:12]}.css"
        styles[name] = match.group(1)
        return f"<style>@import {name}</style>"

    return re.sub(r"<style>(.*?)</style>", once, text, flags=re.S)


def normalised(out: Path) -> dict[str, str]:
    """Every file under `out`, as text that is the same on every run of the same class."""
    files: dict[str, str] = {}
    styles: dict[str, str] = {}
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        name = path.relative_to(out).as_posix()
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".json":
            text = json.dumps(_stable(json.loads(text)), indent=1, ensure_ascii=False, sort_keys=True) + "\n"
        elif path.suffix == ".html":
            text = _html(text, styles)
        files[name] = text
    return files | styles


def grade(scenario: str, work: Path) -> dict[str, str]:
    klass = work / "class"
    shutil.copytree(GOLDEN / scenario / "class", klass)
    done = subprocess.run(
        [str(BIN / "meteor-kit"), "grade", "class", "--out", "out", "--jobs", "2"],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode in (0, 1), done.stderr[-3000:]
    return normalised(work / "out")


@pytest.mark.pinned_hypothesis
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_grade_writes_the_golden_files(scenario, tmp_path):
    got = grade(scenario, tmp_path)
    expected_dir = GOLDEN / scenario / "expected"
    if UPDATE:
        shutil.rmtree(expected_dir, ignore_errors=True)
        for name, text in got.items():
            (expected_dir / name).parent.mkdir(parents=True, exist_ok=True)
            (expected_dir / name).write_text(text, encoding="utf-8")
    expected = {
        p.relative_to(expected_dir).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(expected_dir.rglob("*"))
        if p.is_file()
    }
    assert sorted(got) == sorted(expected)
    for name, text in expected.items():
        if got[name] != text:
            diff = "".join(list(difflib.unified_diff(text.splitlines(True), got[name].splitlines(True), "expected", "got"))[:80])
            pytest.fail(f"{scenario}/{name} differs from its golden file:\n{diff}")


def test_every_output_format_has_a_golden_file():
    names = {p.relative_to(GOLDEN / s / "expected").as_posix() for s in SCENARIOS for p in (GOLDEN / s / "expected").rglob("*")}
    assert {"results.json", "grades.csv", "report.html"} <= names
    assert any(n.startswith("gradescope/") and n.endswith("/results.json") for n in names)
    assert any(n.startswith("report/") and n.endswith(".html") for n in names)


def test_the_normalisation_keeps_what_a_grade_is():
    """Durations and the mode are masked; scores, verdicts and messages are not."""
    document = {
        "isolation": "bubblewrap",
        "duration": 3.2,
        "submissions": [
            {"submission": "a.py", "score": 7.0, "duration": 1.5, "key": "k", "tests": [{"status": "fail", "message": "m"}]}
        ],
    }
    assert _stable(document) == {
        "isolation": "ISOLATION",
        "duration": 0,
        "submissions": [{"submission": "a.py", "score": 7.0, "duration": 0, "tests": [{"status": "fail", "message": "m"}]}],
    }
