"""Grading one submission on the trusted side: its file read, loaded in its jail, its tests run, its failures diagnosed.

How the tests run is the `Runs` it is given (grader/judging/runs.py): `Plain` unless the worker
pool (grade.py) gives it `Memoized`.
"""

from __future__ import annotations

import dataclasses
import time

from grader.core import exercise, runner
from grader.core.submission import SUBMISSION_FILENAME, LoadError
from grader.judging.discovery import SOURCE_LIMIT, Prepared, Spec, prepare
from grader.judging.partial_run import Catalogue
from grader.judging.runs import Plain, Runs, Settings
from grader.sandbox.host import Jail, SandboxedSubmission


class Grader:
    """Grades submissions one after another in this (trusted) process, one jail for all of them."""

    def __init__(self, settings: Settings, tests: Catalogue, runs: Runs | None = None):
        self.settings = settings
        self.tests = tests
        self.runs = runs if runs is not None else Plain(settings, tests)
        self.ex = settings.exercise
        self.jail: Jail | None = None  # one jail for all this grader's submissions, one at a time

    def close(self) -> None:
        if self.jail is not None:
            self.jail.close()
            self.jail = None

    def grade(self, spec: Spec) -> tuple[dict, bytes | None]:
        """The submission's result (as results.json holds it), and what other workers may learn from its run."""
        prepared = prepare(spec)
        result, learned = self._grade(spec, prepared)
        # The code as graded, for the class report's side-by-side view (a notebook's code cells).
        result["source"] = prepared.source[:SOURCE_LIMIT] if prepared.source else None
        if prepared.note:
            result["note"] = prepared.note
        return result, learned

    def _grade(self, spec: Spec, prepared: Prepared) -> tuple[dict, bytes | None]:
        started = time.monotonic()
        if prepared.problem:
            return self._unloadable(spec.name, prepared.problem, started), None
        if self.jail is None:
            self.jail = Jail()
        try:
            # One file name for every submission's tracebacks: a crash that two students share
            # then reads the same, and the memo can recognise it.
            sandbox = SandboxedSubmission(
                spec.path,
                self.ex.function,
                self.settings.timeout,
                source=prepared.source,
                filename=SUBMISSION_FILENAME,
                budget=self.settings.budget,
                signature=self.ex.signature,
                jail=self.jail,
                modules=prepared.modules,
            )
        except LoadError as exc:
            message = str(exc)
            if prepared.notebook is not None:
                message = prepared.notebook.relabel(message)
            return self._unloadable(spec.name, message, started), None
        try:
            ran = self.runs.run(spec.name, sandbox, prepared.source or "")
            result = ran.report.as_json()
            result["duration"] = round(time.monotonic() - started, 3)
            result["from_memo"] = ran.from_memo
            result["diagnosis"] = _diagnosis(self.ex, sandbox, result)
            return result, ran.learned
        finally:
            sandbox.close()

    def _unloadable(self, name: str, reason: str, started: float) -> dict:
        report = runner.Report.could_not_load(name, reason, self.tests.template)
        report.duration = round(time.monotonic() - started, 3)
        result = report.as_json()
        result["from_memo"] = 0
        result["diagnosis"] = None
        return result


def _diagnosis(ex: exercise.Exercise, sandbox: SandboxedSubmission, result: dict) -> dict | None:
    """What misconception explains the failures (None when nothing failed)."""
    if result["status"] != "graded" or result["passed"] == len(result["tests"]):
        return None
    from grader.judging.diagnose import diagnose_submission

    try:
        # A fresh child, as `check` probes it: what the tests asked before cannot change the diagnosis.
        sandbox.restart()
        found = diagnose_submission(ex, sandbox, result["tests"])
    except LoadError:
        return None
    if found is None:
        return None
    return found.as_json() if hasattr(found, "as_json") else dataclasses.asdict(found)
