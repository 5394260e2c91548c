"""The third step of a grade: instructors' changes (`--adjust FILE`, TOML), per student and per diagnosis.

After the verdicts and the points (grader/core/scoring.py), before the scaling to a gradebook
(grader/core/scaling.py). The grader's `score` is never changed: an adjusted result gains
`adjusted_score` and `adjustments` (each with its change and reason), and every output shows
both. A run applies its own --adjust file from scratch, so results kept from an earlier run (or
merged from shards) never carry the adjustments of another run twice.
"""

from __future__ import annotations

import math
import os
import stat
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from grader.core.results import Adjustment, AdjustSummary, SubmissionResult

ADJUST_LIMIT = 5_000_000  # bytes
TEXT_LIMIT = 2_000  # characters in a reason or comment
STUDENT_KEYS = {"who", "score", "change", "reason"}
DIAGNOSIS_KEYS = {"change", "comment"}


class AdjustError(Exception):
    """An adjustments file that cannot be used: the command stops before grading, with this one line."""


@dataclass(frozen=True)
class StudentChange:
    who: str  # a submission's name, or a student's LMS id, login, e-mail or full name
    reason: str
    score: float | None = None  # the new score...
    change: float | None = None  # ...or points added (negative: taken away)


@dataclass(frozen=True)
class DiagnosisChange:
    mistake: str  # as results.json's diagnosis names it (`diagnosis.mistake`), or "(no known mistake)"
    comment: str
    change: float = 0.0


@dataclass
class Plan:
    path: str
    students: list[StudentChange] = field(default_factory=list)
    diagnoses: list[DiagnosisChange] = field(default_factory=list)


def read_plan(path: Path) -> Plan:
    """The adjustments in `path`, checked: unknown keys, missing reasons and bad numbers are errors."""
    try:
        # A FIFO or a device would block the read, or never end it.
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise AdjustError(f"the adjustments file {path} is not a regular file")
        with open(path, "rb") as f:
            data = f.read(ADJUST_LIMIT + 1)
    except OSError as exc:
        raise AdjustError(f"cannot read the adjustments file {path}: {exc.strerror or exc}") from None
    if len(data) > ADJUST_LIMIT:
        raise AdjustError(f"the adjustments file {path} is larger than {ADJUST_LIMIT // 1_000_000} MB")
    try:
        document = tomllib.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise AdjustError(f"the adjustments file {path} is not UTF-8 (byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise AdjustError(f"the adjustments file {path} is not valid TOML: {exc}") from None
    return parse_plan(document, str(path))


def parse_plan(document: dict, path: str = "adjustments") -> Plan:
    plan = Plan(path)
    unknown = set(document) - {"student", "diagnosis"}
    if unknown:
        raise AdjustError(
            f"{path}: unknown section(s) {', '.join(sorted(map(repr, unknown)))}; use [[student]] and [diagnosis.NAME]"
        )
    students = document.get("student", [])
    if not isinstance(students, list):
        raise AdjustError(f"{path}: write each student's change as a [[student]] table")
    for n, entry in enumerate(students, start=1):
        where = f"{path}: [[student]] number {n}"
        if not isinstance(entry, dict):
            raise AdjustError(f"{where} is not a table")
        _known_keys(entry, STUDENT_KEYS, where)
        who, reason = _text(entry, "who", where), _text(entry, "reason", where)
        if ("score" in entry) == ("change" in entry):
            raise AdjustError(
                f"{where} ({who}): give either score = (the new score) or change = (points added), not both or neither"
            )
        score = _points(entry, "score", where) if "score" in entry else None
        if score is not None and score < 0:
            raise AdjustError(f"{where} ({who}): score = {score:g} is below 0")
        plan.students.append(StudentChange(who, reason, score, _points(entry, "change", where) if "change" in entry else None))
    whos = [s.who.casefold() for s in plan.students]
    twice = sorted({w for w in whos if whos.count(w) > 1})
    if twice:
        raise AdjustError(f"{path}: more than one [[student]] for {', '.join(map(repr, twice))}: put the changes in one")
    diagnoses = document.get("diagnosis", {})
    if not isinstance(diagnoses, dict):
        raise AdjustError(f"{path}: write each diagnosis's change as a [diagnosis.NAME] table")
    for mistake, entry in diagnoses.items():
        where = f"{path}: [diagnosis.{mistake}]"
        if not isinstance(entry, dict):
            raise AdjustError(f"{where} is not a table")
        _known_keys(entry, DIAGNOSIS_KEYS, where)
        plan.diagnoses.append(
            DiagnosisChange(
                mistake, _text(entry, "comment", where), _points(entry, "change", where) if "change" in entry else 0.0
            )
        )
    return plan


def _known_keys(entry: dict, allowed: set[str], where: str) -> None:
    unknown = set(entry) - allowed
    if unknown:
        raise AdjustError(
            f"{where}: unknown key(s) {', '.join(sorted(map(repr, unknown)))}; allowed: {', '.join(sorted(allowed))}"
        )


def _text(entry: dict, key: str, where: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        raise AdjustError(f'{where}: {key} = "..." is required (a non-empty string)')
    if len(value) > TEXT_LIMIT:
        raise AdjustError(f"{where}: {key} is longer than {TEXT_LIMIT} characters")
    return value.strip()


def _points(entry: dict, key: str, where: str) -> float:
    value = entry[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise AdjustError(f"{where}: {key} must be a number of points, not {value!r}")
    return float(value)


# ---------------------------------------------------------------- applying a plan


def apply(
    results: Sequence[SubmissionResult], plan: Plan | None, identities: dict[int, list[str]] | None = None
) -> tuple[list[SubmissionResult], AdjustSummary | None]:
    """The results with each adjustment of `plan` added to those it names, and what the plan did (None without one).

    Any adjustment a result carries (kept from an earlier run, or merged) is dropped first.
    `identities`: more names per result, by index (its roster row's).
    """
    stripped = [
        replace(r, adjustments=None, adjusted_score=None) if r.adjustments is not None or r.adjusted_score is not None else r
        for r in results
    ]
    if plan is None:
        return stripped, None
    identities = identities or {}
    changes: dict[int, list[dict[str, Any]]] = {}
    unused = []
    diagnosed: dict[str, list[int]] = {}
    for i, r in enumerate(stripped):
        if r.diagnosis is not None:
            diagnosed.setdefault(r.diagnosis.key, []).append(i)
    for d in plan.diagnoses:
        hit = diagnosed.get(d.mistake, [])
        if not hit:
            unused.append(f"[diagnosis.{d.mistake}]: no submission has this diagnosis")
        for i in hit:
            changes.setdefault(i, []).append({"by": "diagnosis", "diagnosis": d.mistake, "change": d.change, "reason": d.comment})
    named: dict[str, list[int]] = {}  # every name of every result, once: not one scan of the class per entry
    for i, r in enumerate(stripped):
        for name in _names(r, identities.get(i, [])):
            named.setdefault(name, []).append(i)
    for s in plan.students:
        hit = named.get(_fold(s.who), [])
        if not hit:
            unused.append(f"[[student]] who = {s.who!r}: matches no submission")
            continue
        if len(hit) > 1:
            shown = ", ".join(stripped[i].submission for i in hit[:5])
            unused.append(
                f"[[student]] who = {s.who!r}: matches {len(hit)} submissions ({shown}); name one (its submission name)"
            )
            continue
        changes.setdefault(hit[0], []).append(
            {"by": "student", "who": s.who, "score": s.score, "change": s.change, "reason": s.reason}
        )
    clamped = []
    adjusted = list(stripped)
    for i, entries in changes.items():
        r = stripped[i]
        top, score = r.max_score, r.score
        for e in entries:
            if e.get("score") is not None:
                e["change"] = e["score"] - score
                score = e["score"]
            else:
                score += e["change"]
        if not 0 <= score <= top:
            kept = min(max(score, 0.0), top)
            clamped.append(f"{r.submission}: {score:g} is outside 0..{top:g}, so {kept:g}")
            entries.append({"by": "limit", "change": kept - score, "reason": f"a score stays within 0..{top:g}"})
            score = kept
        adjusted[i] = replace(r, adjustments=[Adjustment(**e) for e in entries], adjusted_score=round(score, 6))
    return adjusted, AdjustSummary(plan.path, len(changes), unused, clamped)


def _fold(text: str) -> str:
    return " ".join(text.casefold().split())


def _names(result: SubmissionResult, more: list[str]) -> set[str]:
    """What a `who` may name this result by: its submission (with or without .py), its identity, its roster row."""
    submission = result.submission
    stem = submission.rsplit(".", 1)[0] if submission.lower().endswith((".py", ".ipynb")) else submission
    student = result.student
    names = [
        submission,
        stem,
        stem.rsplit("/", 1)[-1],
        *((student.name, student.lms_id, student.login, student.email) if student is not None else ()),
        *more,
    ]
    return {_fold(n) for n in names if n}
