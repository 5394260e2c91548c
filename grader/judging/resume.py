"""Running the same `grade` command again: results kept for submissions whose code and kit are unchanged.

A result is reused when its key matches: the code as graded (or the reason it cannot be),
the settings that change verdicts, and the kit's version, a digest of every file that judges
(the grader, the hidden tests, the exercise, the reference). A submission that was not
graded, or on which the grader itself failed, is always graded again; so is one that ran out
of time anywhere (a test timed out or was not run for its spent budget, or its load timed
out): time is the one verdict a busy machine can change, so it is never taken on trust.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import replace
from pathlib import Path

from grader.core import exercise
from grader.core.results import Status, Student, SubmissionResult, SubmissionStatus
from grader.judging.discovery import Prepared, Spec, helper_note, who

# What decides a verdict: a change to any of these grades the whole class again.
JUDGES = ("grader", "hidden_tests", "problem", "solutions")
REGRADE = {SubmissionStatus.NOT_GRADED}
# Test statuses that say time ran out: a neighbour's load can cause them, so they are checked again.
OUT_OF_TIME = {Status.TIMEOUT, Status.NOT_RUN}
# How the sandbox says a load ran out of time (grader/sandbox/host.py); such a result's tests are errors.
LOAD_OUT_OF_TIME = (
    "loading the file took longer than",
    "loading the file did not end within",
    "loading the file used up",
    "the machine was too busy to load the file",
)


@functools.cache
def kit_version(ex: exercise.Exercise) -> str:
    """A digest of every file that judges `ex`'s submissions: the engine's and the exercise's."""
    digest = hashlib.sha256()
    for folder in JUDGES:
        root = exercise.ENGINE_ROOT if folder == "grader" else ex.root
        for path in sorted((root / folder).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def key(ex: exercise.Exercise, prepared: Prepared, timeout: float, budget: float) -> str:
    """The key of one submission's result for `ex`: its code as read, the settings that change verdicts, the kit."""
    # Helper modules change what a submission does: they are part of its key.
    settings = {"timeout": timeout, "budget": budget, **({"modules": prepared.modules} if prepared.modules else {})}
    text = json.dumps([kit_version(ex), prepared.source, prepared.problem, settings], sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


def kept(earlier: SubmissionResult, spec: Spec) -> SubmissionResult:
    """A result of the last run, kept: named and placed as the submission is now (its file may have moved)."""
    now = who(spec, helper_note(earlier.note, spec))
    student = Student.from_json(now["student"]) if now["student"] else None
    return replace(earlier, submission=spec.name, path=now["path"], student=student, note=now["note"], reused=True)


def previous(out: Path) -> dict[str, SubmissionResult]:
    """The results of the last run in `out` that can be reused, by key (none if unreadable)."""
    try:
        document = json.loads((out / "results.json").read_text(encoding="utf-8"))
        results = document["submissions"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    kept = {}
    for r in results:
        # The file is read as hostile: a result that does not read back whole is graded again.
        if not isinstance(r, dict) or not isinstance(r.get("tests"), list):
            continue
        try:
            result = SubmissionResult.from_json(r)
        except (KeyError, TypeError, ValueError, AttributeError):
            continue
        if (
            result.key
            and result.status not in REGRADE
            and not result.message.startswith("the grader failed")
            and not out_of_time(result)
        ):
            kept[result.key] = result
    return kept


def out_of_time(result: SubmissionResult) -> bool:
    """Whether any verdict of `result` says time ran out (a test's, or the load's)."""
    if any(t.status in OUT_OF_TIME for t in result.tests):
        return True
    return any(words in result.message for words in LOAD_OUT_OF_TIME)
