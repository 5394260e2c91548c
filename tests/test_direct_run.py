"""The hidden tests called directly (grader.core.direct_run) give pytest's own verdicts, messages and output."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import KIT_ROOT

from grader.core import direct_run, exercise
from grader.judging import partial_run
from grader.judging.partial_run import collected, prepare_before_fork, run_tests
from grader.sandbox.host import SandboxedSubmission

CATALOGUE = KIT_ROOT / "tests" / "catalogue"
EXERCISE = exercise.load(KIT_ROOT)
PRINTS = """import sys

def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    print("ref", repr(reference)[:20], "\\u00e9\\u2603", end="\\r\\n")
    print("to stderr", file=sys.stderr)
    if not reference.strip():
        raise ValueError("empty \\ud800 reference")
    return 0.5
"""


@pytest.fixture(scope="module", autouse=True)
def prepared():
    prepare_before_fork(EXERCISE)


def both(path: Path | None, source: str | None = None, nodeids=None, stop=None, mode="smallest-drawn"):
    """The same submission run directly and through pytest, each in a fresh sandbox."""
    source = source if source is not None else path.read_text()
    runs = []
    previous = os.environ.get("KIT_COUNTEREXAMPLE")
    os.environ["KIT_COUNTEREXAMPLE"] = mode
    try:
        for direct in (True, False):
            made: list[SandboxedSubmission] = []

            def factory():
                made.append(SandboxedSubmission(path or "submission.py", source=source, timeout=2.0, budget=60.0))
                return made[-1]

            try:
                outcome, ids = run_tests(EXERCISE, factory, nodeids, stop=stop() if stop else None, direct=direct)
            finally:
                for sandbox in made:
                    sandbox.close()
            runs.append((outcome.status, outcome.message, [vars(t) for t in outcome.tests], ids))
    finally:
        if previous is None:
            os.environ.pop("KIT_COUNTEREXAMPLE", None)
        else:
            os.environ["KIT_COUNTEREXAMPLE"] = previous
    return runs


def test_the_exercises_tests_are_called_directly():
    tests = collected(EXERCISE)
    assert tests is not None  # every hidden test of this exercise needs only the submission and its parameters
    assert len(tests.items) == len(tests.nodeids) > 100


@pytest.mark.parametrize(
    "path",
    [
        CATALOGUE / "correct" / "class_based.py",
        CATALOGUE / "wrong" / "no_clipping.py",
        CATALOGUE / "wrong" / "crash_on_empty.py",
        CATALOGUE / "wrong" / "returns_string.py",
        CATALOGUE / "wrong" / "whitespace_only_crashes.py",
        CATALOGUE / "cheat" / "exits_early.py",
        CATALOGUE / "cheat" / "prints_passed.py",
        CATALOGUE / "cheat" / "float_subclass.py",
    ],
    ids=lambda p: p.stem,
)
def test_verdicts_messages_and_output_are_pytests(path):
    direct, through_pytest = both(path)
    assert direct == through_pytest
    assert len(direct[2]) == len(collected(EXERCISE).items)


@pytest.mark.parametrize("name", ["no_clipping", "crash_on_empty"])
def test_shrunk_counterexamples_are_pytests(name):
    direct, through_pytest = both(CATALOGUE / "wrong" / f"{name}.py", mode="shrunk")
    assert direct == through_pytest
    assert any("Falsifying example" in t["message"] for t in direct[2])


def test_printed_output_and_exceptions_are_caught_alike():
    direct, through_pytest = both(None, PRINTS)
    assert direct == through_pytest
    outputs = [t["output"] for t in direct[2] if t["output"]]
    assert outputs and all("to stderr" in o for o in outputs)
    assert any("\r\n" in o and "\u2603" in o for o in outputs)
    assert any(t["status"] == "error" for t in direct[2])


def test_a_selection_runs_in_pytests_order():
    names = list(collected(EXERCISE).nodeids)
    chosen = [collected(EXERCISE).nodeids[n] for n in (names[40], names[3], names[-1], names[77])]
    direct, through_pytest = both(CATALOGUE / "wrong" / "no_clipping.py", nodeids=chosen)
    assert direct[:3] == through_pytest[:3]  # (pytest's run names only the tests it kept; the direct one, all)
    assert [t["name"] for t in direct[2]] == [names[3], names[40], names[77], names[-1]]


def test_a_stop_ends_the_run_after_that_test():
    def stop_after(n):
        def make():
            asked = []

            def stop():
                asked.append(1)
                return "the budget is spent" if len(asked) >= n else None

            return stop

        return make

    direct, through_pytest = both(CATALOGUE / "wrong" / "no_clipping.py", stop=stop_after(7))
    assert direct == through_pytest
    assert len(direct[2]) == 7


def test_a_run_starts_no_pytest_session(monkeypatch):
    collected(EXERCISE)

    def no_session(*args, **kwargs):
        raise AssertionError("a pytest session was started")

    monkeypatch.setattr(pytest, "main", no_session)
    sandbox = SandboxedSubmission(
        CATALOGUE / "wrong" / "no_clipping.py", source=(CATALOGUE / "wrong" / "no_clipping.py").read_text()
    )
    try:
        outcome, _ = run_tests(EXERCISE, lambda: sandbox)
    finally:
        sandbox.close()
    assert outcome.status == "graded" and any(t.status == "fail" for t in outcome.tests)


def test_a_submission_that_cannot_load_errs_in_every_test_alike():
    direct, through_pytest = both(None, "def meteor_score(:\n")
    assert direct == through_pytest
    assert direct[2] and all(t["status"] == "error" and "could not load" in t["message"] for t in direct[2])


TESTS_NEEDING_PYTEST = """
import pytest

pytestmark = pytest.mark.tier("examples")

def test_plain(submission):
    assert submission is not None


@pytest.mark.parametrize("n", [1, 2])
def test_parametrized(submission, n):
    assert n


def test_tmp_path(submission, tmp_path):
    assert tmp_path


@pytest.mark.skip(reason="no")
def test_skipped(submission):
    pass


@pytest.mark.xfail
def test_xfail(submission):
    pass


def test_request(submission, request):
    assert request


@pytest.fixture
def helper():
    return 1


def test_own_fixture(submission, helper):
    assert helper
"""


def test_a_test_that_needs_more_of_pytest_is_left_to_pytest(tmp_path):
    (tmp_path / "problem").mkdir()
    (tmp_path / "problem" / "exercise.toml").write_text((KIT_ROOT / "problem" / "exercise.toml").read_text())
    (tmp_path / "hidden_tests").mkdir()
    (tmp_path / "hidden_tests" / "conftest.py").write_text("from grader.core.tests_plugin import *  # noqa: F403\n")
    (tmp_path / "hidden_tests" / "test_needs.py").write_text(TESTS_NEEDING_PYTEST)
    grab = direct_run._Grab()
    pytest.main(
        [str(tmp_path / "hidden_tests"), "-q", "-p", "no:cacheprovider", "-p", "no:xdist", *partial_run.FAST], plugins=[grab]
    )
    direct = {item.name: direct_run._direct(item) for item in grab.items}
    assert direct == {
        "test_plain": True,
        "test_parametrized[1]": True,
        "test_parametrized[2]": True,
        "test_tmp_path": False,
        "test_skipped": False,
        "test_xfail": False,
        "test_request": False,
        "test_own_fixture": False,
    }


def test_each_call_is_made_in_the_test_pytest_says_is_running():
    """Grading files each call under the running test (runs.current_test): the direct run says which, as pytest does."""
    from grader.judging.runs import Guard

    class Filing(Guard):
        def __init__(self, sandbox):
            super().__init__(sandbox)
            self.calls: dict[str, list] = {}

        def answer(self, test, call):
            self.calls.setdefault(test, []).append(call)
            return super().answer(test, call)

    path = CATALOGUE / "wrong" / "no_clipping.py"
    calls = []
    for direct in (True, False):
        sandbox = SandboxedSubmission(path, source=path.read_text())
        filing = Filing(sandbox)
        try:
            run_tests(EXERCISE, lambda: filing, direct=direct)
        finally:
            sandbox.close()
        calls.append(filing.calls)
    assert calls[0] == calls[1]
    assert "" not in calls[0] and len(calls[0]) == len(collected(EXERCISE).items)
