"""The memoized side in the worker pool: a new behaviour run for real once, and what workers learn passed on as bytes.

The memoized side's own tests (grader/judging/memoized/).
"""

from __future__ import annotations

import gc

import pytest
from conftest import KIT_ROOT

from grader.core import exercise
from grader.judging.grade import Deferred, Grader, Settings, Spec, grade_all, runs_for
from grader.judging.memoized import Memoized
from grader.judging.partial_run import catalogue, prepare_before_fork

CATALOGUE = KIT_ROOT / "tests" / "catalogue"
EXERCISE = exercise.load(KIT_ROOT)
SETTINGS = Settings(EXERCISE, timeout=2.0, budget=60.0)


@pytest.fixture(scope="module")
def tests():
    prepare_before_fork(EXERCISE)
    return catalogue(EXERCISE)


def write(tmp_path, name: str, text: str) -> Spec:
    path = tmp_path / name
    path.write_text(text)
    return Spec(name, path)


def memoized(settings: Settings, tests, learned: bytes | None = None) -> Grader:
    """A grader as a worker of the pool has it, having learned what another worker's run taught."""
    runs = runs_for(settings, tests)
    assert isinstance(runs, Memoized)
    if learned is not None:
        runs.memo.learn_packed(learned)
    return Grader(settings, tests, runs)


def test_two_copies_of_a_new_behaviour_graded_together_are_explored_once(tmp_path):
    text = (CATALOGUE / "wrong" / "no_clipping.py").read_text()
    # Copies as students hand them in: other comments, other blank lines.
    specs = [write(tmp_path, "a.py", "# Ann\n" + text), write(tmp_path, "b.py", "# Bo, late\n\n" + text)]
    memo = grade_all(specs, SETTINGS, jobs=2)
    assert gc.get_freeze_count() == 0  # frozen for the run only: a caller that grades again collects what it left
    fresh = grade_all(specs, Settings(EXERCISE, SETTINGS.timeout, SETTINGS.budget, memo=False), jobs=2)
    tests = len(memo[0]["tests"])
    explored = [r["submission"] for r in memo if r["from_memo"] < tests]
    assert len(explored) == 1, [(r["submission"], r["from_memo"]) for r in memo]
    assert [r["tests"] for r in memo] == [r["tests"] for r in fresh]
    assert [r["diagnosis"] for r in memo] == [r["diagnosis"] for r in fresh]


def test_a_behaviour_is_keyed_by_its_answers_not_its_text(tmp_path, tests):
    grader = memoized(SETTINGS, tests)
    keys: list[str] = []
    no_clipping = (CATALOGUE / "wrong" / "no_clipping.py").read_text()
    # The same behaviour written differently: the memo's walk meets the same answers.
    renamed = no_clipping.replace("candidate", "hyp").replace("reference", "ref_text")
    assert renamed != no_clipping
    try:
        _, learned = grader.grade(write(tmp_path, "reference.py", (KIT_ROOT / "solutions" / "reference.py").read_text()))
        assert learned
        for name, text in [
            ("a.py", no_clipping),
            ("b.py", renamed),
            ("c.py", (CATALOGUE / "wrong" / "no_lowercase.py").read_text()),
        ]:
            other = memoized(SETTINGS, tests, learned)  # the memo a worker has after one run shared with it
            other.runs.on_explore = lambda key: keys.append(key) or True
            try:
                other.grade(write(tmp_path, name, text))
            finally:
                other.close()
    finally:
        grader.close()
    assert len(keys) == 3
    assert keys[0] == keys[1] and keys[2] != keys[0]


def test_a_submission_told_to_wait_is_not_graded_and_learns_nothing(tmp_path, tests):
    grader = memoized(SETTINGS, tests)
    grader.runs.on_explore = lambda key: False
    try:
        with pytest.raises(Deferred):
            grader.grade(write(tmp_path, "a.py", (CATALOGUE / "wrong" / "no_clipping.py").read_text()))
        assert grader.runs.memo.nodes == 0
    finally:
        grader.close()


def test_a_submission_that_hangs_where_no_run_did_is_never_told_to_wait(tmp_path, tests):
    """Waiting for another that hung alike saves nothing: each of its timeouts is waited for again.

    Ten hanging files in a class of 300 waited for each other this way, and took a minute each, one after the other.
    """
    settings = Settings(EXERCISE, timeout=0.5, budget=2.0)
    grader = memoized(settings, tests)
    try:
        _, learned = grader.grade(write(tmp_path, "reference.py", (KIT_ROOT / "solutions" / "reference.py").read_text()))
    finally:
        grader.close()
    asked: list[str] = []
    hanging = "def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n    while True:\n        pass\n"
    wrong = (CATALOGUE / "wrong" / "no_clipping.py").read_text()
    for name, text, waits in [("hangs.py", hanging, False), ("wrong.py", wrong, True)]:
        other = memoized(settings, tests, learned)
        other.runs.on_explore = lambda key: asked.append(key) or False  # the owner of every behaviour is busy
        try:
            if waits:
                with pytest.raises(Deferred):
                    other.grade(write(tmp_path, name, text))
            else:
                result, _ = other.grade(write(tmp_path, name, text))
                assert result["tests"][0]["status"] == "timeout"
        finally:
            other.close()
    assert len(asked) == 1  # the wrong one asked; the hanging one went on


def test_a_workers_traces_travel_as_bytes_the_parent_passes_on_and_another_worker_learns_from(tmp_path, tests):
    import multiprocessing

    from grader.judging.grade import _worker
    from grader.judging.memoized.memo import Memo

    text = (CATALOGUE / "wrong" / "no_clipping.py").read_text()
    first, copy = write(tmp_path, "a.py", text), write(tmp_path, "b.py", "# a copy\n" + text)
    context = multiprocessing.get_context("fork")

    def ask(task: tuple) -> tuple:
        parent, child = context.Pipe()
        worker = context.Process(target=_worker, args=(child, SETTINGS, tests), daemon=True)
        worker.start()
        child.close()
        parent.send(task)
        while True:
            message = parent.recv()
            if message[0] != "exploring":
                break
            parent.send(True)
        parent.send(None)
        worker.join(timeout=30)
        return message

    index, result, new = ask((0, first, []))
    assert index == 0 and result["from_memo"] == 0
    assert isinstance(new, bytes)  # the parent keeps them as they came, unread
    learned = Memo()
    learned.learn_packed(new)
    assert learned.nodes > 0 and learned.profile_count == 1  # its tests' calls, and its run's kind

    # Another worker, handed those bytes with its task, grades the copy from the memo alone.
    _, again, nothing = ask((1, copy, [new]))
    assert again["from_memo"] == len(again["tests"])
    assert again["tests"] == result["tests"]
    assert nothing is None  # it learned nothing new: nothing to pass on
