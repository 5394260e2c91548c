"""grader/core (what the page runs too) and grader/reports type-check: mypy, as pyproject.toml's [tool.mypy] configures it."""

from __future__ import annotations

import shutil
import subprocess
import textwrap
from pathlib import Path

from conftest import BIN, KIT_ROOT


def mypy(root: Path) -> subprocess.CompletedProcess:
    # No cache: nothing is written into the kit, and each run checks everything.
    return subprocess.run([str(BIN / "mypy"), "--cache-dir", "/dev/null"], cwd=root, capture_output=True, text=True, timeout=600)


def test_the_core_and_the_reports_type_check():
    done = mypy(KIT_ROOT)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "Success: no issues found" in done.stdout


def test_a_renderer_reading_a_result_as_a_dictionary_fails_the_check(tmp_path):
    """The check is not vacuous: `.get` on a typed result, in grader/reports, is caught."""
    shutil.copytree(KIT_ROOT / "grader", tmp_path / "grader", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(KIT_ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "grader" / "reports" / "sneaky.py").write_text(
        textwrap.dedent("""
        from grader.core.results import SubmissionResult


        def score(result: SubmissionResult) -> float:
            return result.get("score", 0.0)
        """)
    )
    done = mypy(tmp_path)
    assert done.returncode != 0
    assert 'grader/reports/sneaky.py:6: error: "SubmissionResult" has no attribute "get"' in done.stdout
