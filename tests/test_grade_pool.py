"""The worker pool: which way its workers run the tests, the files it grades first, the workers it adds while cores idle."""

from __future__ import annotations

import pytest
from conftest import KIT_ROOT

from grader.core import exercise
from grader.judging import runs
from grader.judging.grade import Settings, Spec, paths, runs_for
from grader.judging.partial_run import catalogue, prepare_before_fork
from grader.judging.runs import Explorers, IdleCores, Plain, pool_size

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


def test_a_waiting_submission_is_handed_back_when_its_behaviours_owner_is_done():
    explorers = Explorers()
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
    from grader.judging.discovery import prepare
    from grader.judging.similarity import first_of_each_kind

    wrong = (CATALOGUE / "wrong" / "no_clipping.py").read_text()
    right = (KIT_ROOT / "solutions" / "reference.py").read_text()
    hangs = "def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n    while True:\n        pass\n"
    texts = [wrong, "# Ann\n" + wrong, right, "\n\n" + wrong, right + "\n# mine\n", hangs]
    sources = [prepare(write(tmp_path, f"s{i}.py", text)).source for i, text in enumerate(texts)]
    # The file with a `while` loop, where calls hang most, goes first though it is last in the
    # class; then one file of each other kind; then the copies.
    assert first_of_each_kind(list(range(len(texts))), sources) == [5, 0, 2, 1, 3, 4]
    assert first_of_each_kind([1, 3, 4], sources) == [1, 4, 3]
    # Spaces around operators and indentation are layout too; a name or a number is not.
    tight = [hangs, hangs.replace(", ", ",").replace("    ", "  "), hangs.replace("gamma", "gama"), hangs.replace("0.5", "0.6")]
    assert first_of_each_kind([0, 1, 2, 3], tight) == [0, 2, 3, 1]


def test_without_the_memo_a_worker_runs_every_test_plain_and_says_so(tests):
    plain = Settings(EXERCISE, timeout=2.0, budget=60.0, memo=False)
    assert type(runs_for(plain, tests)) is Plain
    assert paths(plain)["tests"] == "plain"


def test_a_plain_run_grades_each_stage_in_its_own_child_as_the_tiers_are_ordered(tmp_path, tests):
    """Plain, the reference: every public tier in the child that loaded the file, each secret tier in a fresh one."""
    from grader.judging.grade import Grader
    from grader.sandbox.host import SandboxedSubmission

    spawns: list[int] = []
    spawn = SandboxedSubmission._spawn

    def counted(self, *args, **kwargs):
        spawns.append(1)
        return spawn(self, *args, **kwargs)

    settings = Settings(EXERCISE, timeout=2.0, budget=60.0, memo=False)
    grader = Grader(settings, tests, Plain(settings, tests))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(SandboxedSubmission, "_spawn", counted)
        try:
            result, learned = grader.grade(write(tmp_path, "reference.py", (KIT_ROOT / "solutions" / "reference.py").read_text()))
        finally:
            grader.close()
    assert result["passed"] == len(result["tests"]) == len(tests.names) and result["from_memo"] == 0
    assert learned is None  # nothing to pass on to other workers
    assert len(spawns) == len(tests.stages)  # the load, then one fresh child per later stage (no diagnosis: it passed)


def test_the_pool_has_up_to_two_workers_a_job_as_memory_allows(monkeypatch):
    assert 3 <= pool_size(3) <= 6
    monkeypatch.setattr(runs, "WORKER_MEMORY", 1 << 60)  # no room for one more
    assert pool_size(3) == 3


def test_extra_workers_grade_while_the_cores_stand_idle_and_stop_when_they_are_busy(monkeypatch):
    """IdleCores: one more worker a window while over 15 % of the cores' time was idle, one fewer under 5 %."""
    clock, ticks = [0.0], [(0, 0)]
    monkeypatch.setattr(runs.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(IdleCores, "_read", lambda self: ticks[0])
    cores = IdleCores(jobs=2, workers=4, cores=[0, 1])

    def window(idle: int, total: int = 100) -> int:
        clock[0] += 0.5
        ticks[0] = (ticks[0][0] + idle, ticks[0][1] + total)
        return cores.allowed()

    assert cores.allowed() == 2  # no window has passed yet
    assert [window(50), window(50), window(50)] == [3, 4, 4]  # a sleeping call left a core idle: at most 4
    assert [window(10), window(2), window(2), window(2)] == [4, 3, 2, 2]  # busy again: back to --jobs, no fewer
    clock[0] += 0.1
    ticks[0] = (ticks[0][0] + 100, ticks[0][1] + 100)
    assert cores.allowed() == 2  # within a window: nothing is decided
    monkeypatch.setattr(IdleCores, "_read", lambda self: None)  # no /proc/stat: --jobs workers
    assert [window(90), window(90)] == [2, 2]


def test_idle_cores_reads_this_machines_counters():
    read = IdleCores(jobs=1, workers=2, cores=[0])._read()
    assert read is not None and 0 <= read[0] <= read[1]
