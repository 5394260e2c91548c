"""The page's Python side (web/py/page_session.py) in CPython: how a run ends early, and how the warm-up gives way."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest
from _pytest.terminal import TerminalReporter

from grader.core import replay

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = (ROOT / "solutions" / "reference.py").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def page_session():
    """The module as the page's worker imports it; it points replay at the site's file, which is put back."""
    before = os.environ.get(replay.ENV_FILE)
    sys.path.insert(0, str(ROOT / "web" / "py"))
    try:
        import page_session

        yield page_session
    finally:
        sys.path.remove(str(ROOT / "web" / "py"))
        if before is None:
            os.environ.pop(replay.ENV_FILE, None)
        else:
            os.environ[replay.ENV_FILE] = before


@pytest.fixture
def interruptions(monkeypatch):
    """Every time pytest reported an interrupted session (a long traceback, its source parsed)."""
    seen: list[str] = []
    report = TerminalReporter.pytest_keyboard_interrupt

    def spy(self, excinfo):
        seen.append(repr(excinfo.value))
        return report(self, excinfo)

    monkeypatch.setattr(TerminalReporter, "pytest_keyboard_interrupt", spy)
    return seen


def halting_at(start: int):
    """A run's `post` and `halted`: the page presses Stop as the `start`th test starts."""
    state = {"starts": 0}

    def post(kind: str, data: str) -> None:
        if kind == "start":
            state["starts"] += 1

    def halted() -> str:
        return "you pressed Stop" if state["starts"] >= start else ""

    return post, halted


def test_stop_ends_the_run_after_the_current_test_as_a_graded_run_not_an_interrupted_one(page_session, interruptions):
    post, halted = halting_at(10)
    result = json.loads(page_session.run_tests(REFERENCE, post, halted))
    statuses = [t["status"] for t in result["tests"]]
    assert result["status"] == "graded" and result["message"] == "", result["message"]
    assert statuses[:9] == ["pass"] * 9 and statuses[9] == "not_run"  # halted as the 10th began: its calls are not run
    assert set(statuses[10:]) == {"not_run"} and len(statuses) == 57
    assert any("you pressed Stop" in a for a in result["advice"])
    assert not result["restart"]
    assert interruptions == []


@pytest.mark.parametrize("asked_after", [0, 3, 40], ids=["at_once", "in_the_first_test", "later"])
def test_the_warm_up_gives_way_without_pytests_interruption_report(page_session, interruptions, asked_after):
    calls = {"n": 0}

    def halted() -> str:
        calls["n"] += 1
        return "the page asked for a run" if calls["n"] > asked_after else ""

    unwound = page_session.warm_up_run(halted)
    assert unwound > 0  # it was asked, and measured how long it took to give way
    assert interruptions == []
    # And the next run is a whole one.
    result = json.loads(page_session.run_tests(REFERENCE, lambda kind, data: None))
    assert result["status"] == "graded" and result["passed"] == len(result["tests"]) == 57


def test_the_beginner_advice_speaks_of_the_exercise_the_page_holds(page_session, monkeypatch):
    from grader.core import exercise

    wer = exercise.load(ROOT / "tests" / "exercises" / "wer")
    monkeypatch.setattr(page_session, "EXERCISE", wer)
    guard = page_session.Guard()
    guard.all_returned = ["None", "None"]  # a function without a return, which also calls input()
    result = {"message": "", "tests": [{"message": "EOFError: EOF when reading a line"}]}
    said = page_session.advice("def word_error_rate(r, h):\n    input()\n", result, guard)
    assert len(said) == 2, said
    assert "input()" in said[0] and wer.signature in said[0]
    assert said[1].startswith(f"{wer.function} returned None every time")
    # Nothing of the kit's own exercise: its function, its texts, its score.
    assert not re.search(r"meteor|sentence|\bscore\b", " ".join(said), re.IGNORECASE), said
