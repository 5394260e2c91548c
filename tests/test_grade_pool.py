"""The worker pool: two copies of a new behaviour graded at the same moment are run for real once."""

from __future__ import annotations

import io

import pytest
from conftest import KIT_ROOT

from grader.core import exercise
from grader.judging.grade import Deferred, Grader, Settings, Spec, _Explorers, grade_all
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


def test_two_copies_of_a_new_behaviour_graded_together_are_explored_once(tmp_path):
    text = (CATALOGUE / "wrong" / "no_clipping.py").read_text()
    # Copies as students hand them in: other comments, other blank lines.
    specs = [write(tmp_path, "a.py", "# Ann\n" + text), write(tmp_path, "b.py", "# Bo, late\n\n" + text)]
    memo = grade_all(specs, SETTINGS, jobs=2)
    fresh = grade_all(specs, Settings(EXERCISE, SETTINGS.timeout, SETTINGS.budget, memo=False), jobs=2)
    tests = len(memo[0]["tests"])
    explored = [r["submission"] for r in memo if r["from_memo"] < tests]
    assert len(explored) == 1, [(r["submission"], r["from_memo"]) for r in memo]
    assert [r["tests"] for r in memo] == [r["tests"] for r in fresh]
    assert [r["diagnosis"] for r in memo] == [r["diagnosis"] for r in fresh]


def test_a_behaviour_is_keyed_by_its_answers_not_its_text(tmp_path, tests):
    grader = Grader(SETTINGS, tests)
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
            other = Grader(SETTINGS, tests)  # the memo a worker has after one run shared with it
            for item in learned:
                other.memo.learn(item)
            other.on_explore = lambda key: keys.append(key) or True
            try:
                other.grade(write(tmp_path, name, text))
            finally:
                other.close()
    finally:
        grader.close()
    assert len(keys) == 3
    assert keys[0] == keys[1] and keys[2] != keys[0]


def test_a_submission_told_to_wait_is_not_graded_and_learns_nothing(tmp_path, tests):
    grader = Grader(SETTINGS, tests)
    grader.on_explore = lambda key: False
    try:
        with pytest.raises(Deferred):
            grader.grade(write(tmp_path, "a.py", (CATALOGUE / "wrong" / "no_clipping.py").read_text()))
        assert grader.memo.nodes == 0
    finally:
        grader.close()


def test_a_submission_that_hangs_where_no_run_did_is_never_told_to_wait(tmp_path, tests):
    """Waiting for another that hung alike saves nothing: each of its timeouts is waited for again.

    Ten hanging files in a class of 300 waited for each other this way, and took a minute each, one after the other.
    """
    settings = Settings(EXERCISE, timeout=0.5, budget=2.0)
    grader = Grader(settings, tests)
    try:
        _, learned = grader.grade(write(tmp_path, "reference.py", (KIT_ROOT / "solutions" / "reference.py").read_text()))
    finally:
        grader.close()
    asked: list[str] = []
    hanging = "def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n    while True:\n        pass\n"
    wrong = (CATALOGUE / "wrong" / "no_clipping.py").read_text()
    for name, text, waits in [("hangs.py", hanging, False), ("wrong.py", wrong, True)]:
        other = Grader(settings, tests)
        for item in learned:
            other.memo.learn(item)
        other.on_explore = lambda key: asked.append(key) or False  # the owner of every behaviour is busy
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


def test_a_waiting_submission_is_handed_back_when_its_behaviours_owner_is_done():
    explorers = _Explorers()
    assert explorers.claim("k", worker=0, index=0)
    assert not explorers.claim("k", worker=1, index=1)
    assert not explorers.claim("k", worker=1, index=2)
    assert explorers.claim("other", worker=1, index=3)
    assert explorers.release(1, 3) == []
    assert explorers.release(0, 0) == [2, 1]  # pending pops from the end: 1 comes first
    # Told to wait once, it runs the next time whatever the others do.
    assert explorers.claim("k", worker=2, index=4)
    assert explorers.claim("k", worker=1, index=1)


def test_one_file_of_each_kind_is_graded_first_those_with_a_loop_before_and_the_copies_after(tmp_path):
    from grader.cli.grade import _first_of_each_kind
    from grader.judging.discovery import prepare

    wrong = (CATALOGUE / "wrong" / "no_clipping.py").read_text()
    right = (KIT_ROOT / "solutions" / "reference.py").read_text()
    hangs = "def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n    while True:\n        pass\n"
    texts = [wrong, "# Ann\n" + wrong, right, "\n\n" + wrong, right + "\n# mine\n", hangs]
    prepared = [prepare(write(tmp_path, f"s{i}.py", text)) for i, text in enumerate(texts)]
    # The file with a `while` loop, where calls hang most, goes first though it is last in the
    # class; then one file of each other kind; then the copies.
    assert _first_of_each_kind(list(range(len(texts))), prepared) == [5, 0, 2, 1, 3, 4]
    assert _first_of_each_kind([1, 3, 4], prepared) == [1, 4, 3]


def test_the_workers_beyond_jobs_are_as_many_as_the_memory_allows(monkeypatch):
    from grader.judging import grade

    def available(kib: int):
        text = f"MemTotal: 99999999 kB\nMemAvailable: {kib} kB\n"
        return lambda *args, **kwargs: io.StringIO(text)

    monkeypatch.setattr(grade, "open", available(24 * 2**20), raising=False)  # 24 GiB
    assert grade._extra_workers() == grade.EXTRA_WORKERS
    monkeypatch.setattr(grade, "open", available(2 * 2**20), raising=False)  # 2 GiB: 8 of 256 MiB
    assert grade._extra_workers() == 8
    monkeypatch.setattr(grade, "open", available(1000), raising=False)  # next to nothing: one still waits on a hang
    assert grade._extra_workers() == 1


def test_a_workers_traces_travel_as_bytes_the_parent_passes_on_and_another_worker_learns_from(tmp_path, tests):
    import multiprocessing

    from grader.judging.grade import _worker
    from grader.judging.memo import Memo

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
            if message[0] == "exploring":
                parent.send(True)
            elif message[0] != "slow":
                break
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
