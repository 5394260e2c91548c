"""One submission checked (`meteor-kit check`): its tests run through pytest in this process, the submission in its jail.

The file is read and decoded exactly as `grade` reads it (discovery.prepare): a notebook, a BOM,
a coding line and a link all get the same verdict from both. The diagnosis runs on what is left
of the same budget, if anything is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from grader.core import exercise, runner
from grader.core.results import SubmissionStatus
from grader.core.submission import LoadError, Submission
from grader.judging.diagnose import Diagnosis, diagnose_made
from grader.judging.discovery import Prepared, file_spec, prepare
from grader.sandbox.host import SandboxedSubmission


@dataclass
class Checked:
    report: runner.Report
    diagnosis: Diagnosis | None  # None when every test passed, or no budget was left for it

    @property
    def all_passed(self) -> bool:
        return self.report.status == SubmissionStatus.GRADED and self.report.passed == len(self.report.tests)


def check(ex: exercise.Exercise, path: str, tiers: tuple[str, ...], budget: float) -> Checked:
    """The tests of `ex`'s `tiers` run against the file at `path`, within `budget` seconds in all, and its diagnosis."""
    spec = file_spec(path)
    prepared = prepare(spec)
    made: list[SandboxedSubmission] = []
    try:
        report = runner.run(ex, _factory(spec.path, prepared, ex, budget, made), name=spec.name, tiers=tiers)
    finally:
        for box in made:
            box.close()
    if report.status == "error" and report.message.startswith(runner.TESTS_BROKEN_PREFIX):
        raise runner.TestsBroken(report.message)
    diagnosis = None
    left = budget - sum(box.used() for box in made)
    if report.status == SubmissionStatus.GRADED and report.passed < len(report.tests) and left > 0:
        diagnosis = diagnose_made(ex, _factory(spec.path, prepared, ex, left, []), report, left)
    return Checked(report, diagnosis)


def _factory(
    path: Path | None, prepared: Prepared, ex: exercise.Exercise, budget: float, made: list[SandboxedSubmission]
) -> Callable[[], Submission]:
    """Builds the jailed submission from the code as read, or raises LoadError with the reason."""

    def make() -> Submission:
        if prepared.problem:
            raise LoadError(prepared.problem)
        try:
            box = SandboxedSubmission.of(ex, path, prepared.source, budget, filename=prepared.filename)
        except LoadError as exc:
            if prepared.notebook is None:
                raise
            raise LoadError(prepared.notebook.relabel(str(exc))) from None
        made.append(box)
        return box

    return make
