"""The third exercise, top_words (tests/exercises/top_words, made with `meteor-kit new`): its catalogue graded, and its audit."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import KIT_ROOT

TOP_WORDS = KIT_ROOT / "tests" / "exercises" / "top_words"
CATALOGUE = KIT_ROOT / "tests" / "exercises" / "top_words-catalogue"
KIT = [sys.executable, "-m", "grader.cli"]


def declared(path: Path) -> dict[str, str]:
    """What a catalogue file says of itself (MISTAKE, RULE), read without running it."""
    found = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) in ("MISTAKE", "RULE"):
            found[node.targets[0].id] = ast.literal_eval(node.value)
    return found


def kit(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*KIT, *args], capture_output=True, text=True, timeout=900, cwd=KIT_ROOT)


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[str, dict]:
    """`meteor-kit grade --exercise` of the whole catalogue: each submission's result, by its path in the catalogue."""
    out = tmp_path_factory.mktemp("graded")
    done = kit("grade", "--exercise", str(TOP_WORDS), str(CATALOGUE), "--out", str(out), "--jobs", "2")
    assert done.returncode == 0, done.stderr
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["exercise"] == "top_words"
    return {s["submission"]: s for s in results["submissions"]}


def test_grade_gives_the_correct_solutions_full_marks(graded):
    correct = sorted(p.relative_to(CATALOGUE).as_posix() for p in (CATALOGUE / "correct").glob("*.py"))
    assert len(correct) >= 3
    for name in correct:
        result = graded[name]
        assert result["score"] == result["max_score"] > 0, name
        assert result["diagnosis"] is None, name


def test_grade_names_each_one_mistake_file_by_its_own_model(graded):
    wrong = sorted((CATALOGUE / "wrong").glob("*.py"))
    assert len(wrong) >= 10
    for path in wrong:
        result = graded[path.relative_to(CATALOGUE).as_posix()]
        assert result["score"] < result["max_score"], path.name
        assert result["diagnosis"]["mistake"] == declared(path)["MISTAKE"], (path.name, result["diagnosis"])
        assert "top_words(" in result["diagnosis"]["text"]


def test_grade_points_a_mistake_no_model_makes_at_its_rule(graded):
    heldout = sorted((CATALOGUE / "heldout").glob("*.py"))
    assert heldout
    for path in heldout:
        result = graded[path.relative_to(CATALOGUE).as_posix()]
        assert result["score"] < result["max_score"], path.name
        assert result["diagnosis"]["kind"] == "rules", (path.name, result["diagnosis"])
        assert result["diagnosis"]["rules"][0] == declared(path)["RULE"], (path.name, result["diagnosis"])


def test_the_audit_passes_on_the_exercise_and_its_catalogue():
    done = kit("audit", "--exercise", str(TOP_WORDS), "--catalogue", str(CATALOGUE), "--jobs", "2", "--json")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["passed"] and report["exercise"] == "top_words"
    status = {check["id"]: check["status"] for check in report["checks"]}
    assert status.pop("page") == "skipped"  # no --browser
    assert {"reference", "strength", "cheats", "diagnosis", "catalogue"} <= set(status)
    assert set(status.values()) == {"pass"}, status
