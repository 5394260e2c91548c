"""How `grade` runs one submission's tests: one interface, and `Plain`, the reference every other way must equal.

`Plain` runs the tests for real, stage by stage (Exercise.stages): every public tier, then every
secret tier, in the child that loaded the file (a tier with `fresh_child` in a new one), so no
child that saw a secret input answers a public test. That is what `--no-memo` does, and what `check` and
`pytest hidden_tests` do through pytest. `Memoized` (grader/judging/memoized/) gives the same
verdicts faster from what earlier submissions answered; only the worker pool (grade.py) chooses
it (an import-linter contract), and without it every class is graded `Plain`.
"""

from __future__ import annotations

import os
import sys
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from grader.core import exercise, runner
from grader.core.submission import CallsByName, LoadError, SubmissionError
from grader.core.tuning import IDLE_FEWER, IDLE_MORE, IDLE_WINDOW, WORKER_MEMORY, WORKERS_PER_JOB
from grader.judging.partial_run import Catalogue, run_tests
from grader.sandbox.host import Answer, SandboxedSubmission

# Answers after which a test makes no further call (see Guard): the test is decided by that one call.
ENDS_TEST = ("timeout", "crash")


@dataclass(frozen=True)
class Settings:
    """What a class is graded with: the exercise, and the limits; the workers get it as they fork."""

    exercise: exercise.Exercise
    timeout: float
    budget: float
    memo: bool = True


class Deferred(Exception):
    """Another worker is exploring the same new behaviour: grade this submission once it has (from the memo)."""


def pool_size(jobs: int) -> int:
    """Workers for --jobs `jobs`: WORKERS_PER_JOB each (tuning.py says why), as many as the memory allows, at least `jobs`."""
    try:
        with open("/proc/meminfo") as f:
            free = next(int(line.split()[1]) << 10 for line in f if line.startswith("MemAvailable:"))
    except (OSError, StopIteration, ValueError, IndexError):
        return jobs
    return max(jobs, min(jobs * WORKERS_PER_JOB, free // WORKER_MEMORY))


class IdleCores:
    """How many of the pool's workers may grade at once: `jobs`, and one more while the cores stand idle (tuning.py)."""

    def __init__(self, jobs: int, workers: int, cores: list[int]) -> None:
        self.jobs, self.workers, self.active = jobs, workers, jobs
        self.cores = {f"cpu{core}" for core in cores}
        self.at, self.last = time.monotonic(), self._read()

    def _read(self) -> tuple[int, int] | None:
        """Idle and all time of our cores so far, in ticks (/proc/stat); None where it cannot be read."""
        try:
            with open("/proc/stat") as f:
                rows = [row for row in map(str.split, f) if row and row[0] in self.cores]
            return sum(int(r[4]) + int(r[5]) for r in rows), sum(sum(map(int, r[1:9])) for r in rows)
        except (OSError, ValueError, IndexError):
            return None

    def allowed(self) -> int:
        now = time.monotonic()
        if self.workers > self.jobs and now - self.at >= IDLE_WINDOW:
            read = self._read()
            if read is not None and self.last is not None and read[1] > self.last[1]:
                idle = (read[0] - self.last[0]) / (read[1] - self.last[1])
                if idle > IDLE_MORE:
                    self.active = min(self.workers, self.active + 1)
                elif idle < IDLE_FEWER:
                    self.active = max(self.jobs, self.active - 1)
            self.at, self.last = now, read
        return self.active


class Explorers:
    """Which worker is running which new behaviour for real, and the submissions waiting for it.

    Two copies of a new behaviour graded at the same moment would both pay a full run. The
    second is put back instead, to be graded once the first is done, from the memo it filled.
    """

    def __init__(self) -> None:
        self.owner: dict[str, tuple[int, int]] = {}  # behaviour key -> (worker id, submission index)
        self.waiting: dict[str, list[int]] = {}
        self.deferred: set[int] = set()
        self.explored: set[str] = set()  # behaviours explored and done: their traces are out

    def claim(self, key: str, worker: int, index: int) -> bool:
        """Whether this worker runs the behaviour now (False: the submission waits for its owner)."""
        owner = self.owner.get(key)
        # Once is enough: if the owner learned nothing the memo can use, waiting again gains nothing.
        if owner is None or owner == (worker, index) or index in self.deferred:
            self.owner.setdefault(key, (worker, index))
            return True
        self.deferred.add(index)
        self.waiting.setdefault(key, []).append(index)
        return False

    def release(self, worker: int, index: int) -> list[int]:
        """That submission is done: the ones waiting on what it explored, to grade next (pending pops from the end)."""
        freed: list[int] = []
        for key in [k for k, o in self.owner.items() if o == (worker, index)]:
            del self.owner[key]
            self.explored.add(key)
            freed += self.waiting.pop(key, [])
        return freed[::-1]


@dataclass
class Ran:
    """One submission's run: its report, how many verdicts came from the memo, what other workers may learn from it."""

    report: runner.Report
    from_memo: int = 0
    learned: bytes | None = None


class Runs(ABC):
    """Runs a submission's tests in its sandbox, in this (trusted) process, one submission after another."""

    path = ""  # how results.json names this way of running them

    def __init__(self, settings: Settings, tests: Catalogue):
        self.settings = settings
        self.tests = tests
        self._template = {t["name"]: t for t in tests.template}
        # Asked with a new behaviour's key before it is run for real (the pool's): False means
        # another worker is running the same one now, and this submission waits (Deferred).
        self.on_explore: Callable[[str], bool] | None = None

    @abstractmethod
    def run(self, name: str, sandbox: SandboxedSubmission, source: str) -> Ran:
        """The verdicts of every test, in stages, from the child the sandbox has just loaded."""

    def learn(self, batches: list[bytes]) -> None:
        """What other workers' runs taught (Ran.learned), before the next submission: nothing, unless it remembers."""
        return None

    def report(self, name: str, status: str, message: str, known: dict[str, runner.TestResult]) -> runner.Report:
        """The verdicts in `known`, as reports list them (Catalogue.template)."""
        ordered = [known.pop(n) for n in self.tests.names if n in known] + list(known.values())
        return runner.Report(name, status, message, runner.scored(self.settings.exercise, ordered))

    def next_stage(self, sandbox: SandboxedSubmission, names: list[str], known: dict[str, runner.TestResult]) -> bool:
        """A fresh child for the stage of `names`, as a full run starts one; False (each test's verdict in
        `known`) when the budget is spent or the submission no longer loads."""
        spent = sandbox.spent()
        error = None if spent else runner.fresh_child(sandbox)
        if spent is None and error is None:
            return True
        status, why = ("not_run", spent) if spent else ("error", f"{runner.LOAD_PREFIX}{error}")
        for test in names:
            known[test] = self._unrun(test, status, why)
        return False

    def run_stage(
        self, sandbox: SandboxedSubmission, names: list[str], known: dict[str, runner.TestResult], caller: Guard
    ) -> tuple[str, str, list[runner.TestResult]]:
        """Run the tests `names` for real in the child the sandbox has, `caller` standing in for it; their verdicts go into `known`.

        Returns the run's status and message, and the verdicts it gave.
        """
        outcome, _ = run_tests(self.settings.exercise, lambda: caller, [self.tests.nodeids[n] for n in names], stop=sandbox.spent)
        for test in outcome.tests:
            known[test.name] = test
        spent = sandbox.spent()
        if outcome.status == "graded" and spent:
            # The run stopped once the budget was spent: the tests after it were not run.
            for test in names:
                if test not in known:
                    known[test] = self._unrun(test, "not_run", spent)
        return outcome.status, outcome.message, outcome.tests

    def _unrun(self, test: str, status: str, why: str) -> runner.TestResult:
        return runner.TestResult(**{**self._template[test], "status": status, "message": why, "output": "", "score": 0.0})


class Plain(Runs):
    """Every test run for real, stage by stage: the reference."""

    path = "plain"

    def run(self, name: str, sandbox: SandboxedSubmission, source: str) -> Ran:
        known: dict[str, runner.TestResult] = {}
        status, message = "graded", ""
        for number, names in enumerate(self.tests.stages):
            if number and not self.next_stage(sandbox, names, known):
                continue
            status, message, _ = self.run_stage(sandbox, names, known, Guard(sandbox))
            if status != "graded":
                break
        return Ran(self.report(name, status, message, known))


def current_test() -> str:
    """The running test's name, from the variable pytest keeps up to date (direct_run keeps it too)."""
    nodeid = os.environ.get("PYTEST_CURRENT_TEST", "")
    return nodeid.split("::")[-1].rsplit(" (", 1)[0]


class Guard(CallsByName):
    """The sandbox as the tests call it in `grade`: a test is decided by its first timeout or crash.

    Hypothesis would otherwise retry while shrinking, each try costing the whole time limit (or a
    new process); so every later call of that test fails at once, as the first did.
    """

    def __init__(self, sandbox: SandboxedSubmission):
        self.sandbox = sandbox
        self._hung: dict[str, SubmissionError] = {}

    def call(self, *args: Any, **kwargs: Any) -> Any:
        test = current_test()
        if test in self._hung:
            error = self._hung[test]
            raise SubmissionError(error.kind, error.message, error.traceback)
        call = [list(args), kwargs]
        answer = self.answer(test, call)
        if answer.output:
            sys.stdout.write(answer.output)
        try:
            return answer.result()
        except SubmissionError as exc:
            if exc.kind in ENDS_TEST:
                self._hung[test] = exc
            raise

    def answer(self, test: str, call: list) -> Answer:
        """The submission's answer to `call`, made by `test`."""
        return next(self.sandbox.evaluate([call]))

    def restart(self) -> None:
        """A fresh child for the next stage's tests (runner.SubmissionProvider); LoadError if it does not load."""
        error = runner.fresh_child(self.sandbox)
        if error is not None:
            raise LoadError(error)

    @property
    def function(self) -> str:
        return self.sandbox.function
