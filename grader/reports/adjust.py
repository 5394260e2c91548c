"""Instructors' changes to grades (`--adjust FILE`, TOML): per student, and per diagnosis.

The grader's `score` is never changed: an adjusted result gains `adjusted_score` and
`adjustments` (each with its change and reason), and every output shows both. A run applies
its own --adjust file from scratch, so results kept from an earlier run (or merged from
shards) never carry the adjustments of another run twice.
"""

from __future__ import annotations

import math
import os
import stat
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from grader.reports.tally import mistake_key

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


@dataclass
class Outcome:
    adjusted: int  # results whose score or comments changed
    unused: list[str]  # adjustments that matched nobody: listed everywhere, never ignored in silence
    clamped: list[str]  # results whose adjusted score went past 0 or the maximum


def strip(result: dict) -> None:
    """Remove the adjustments an earlier run left on a result (kept or merged results)."""
    result.pop("adjusted_score", None)
    result.pop("adjustments", None)


def final_score(result: dict) -> float:
    """The score every output uses: the adjusted one where there is one."""
    return result.get("adjusted_score", result.get("score") or 0.0)


def apply(results: list[dict], plan: Plan | None, identities: dict[int, list[str]] | None = None) -> Outcome:
    """Add each adjustment of `plan` to the results it names. `identities`: more names per result (its roster row's)."""
    for r in results:
        strip(r)
    if plan is None:
        return Outcome(0, [], [])
    identities = identities or {}
    changes: dict[int, list[dict]] = {}
    unused = []
    diagnosed: dict[str | None, list[int]] = {}
    for i, r in enumerate(results):
        diagnosed.setdefault(mistake_key(r.get("diagnosis")), []).append(i)
    for d in plan.diagnoses:
        hit = diagnosed.get(d.mistake, [])
        if not hit:
            unused.append(f"[diagnosis.{d.mistake}]: no submission has this diagnosis")
        for i in hit:
            changes.setdefault(i, []).append({"by": "diagnosis", "diagnosis": d.mistake, "change": d.change, "reason": d.comment})
    named: dict[str, list[int]] = {}  # every name of every result, once: not one scan of the class per entry
    for i, r in enumerate(results):
        for name in _names(r, identities.get(i, [])):
            named.setdefault(name, []).append(i)
    for s in plan.students:
        hit = named.get(_fold(s.who), [])
        if not hit:
            unused.append(f"[[student]] who = {s.who!r}: matches no submission")
            continue
        if len(hit) > 1:
            shown = ", ".join(str(results[i].get("submission", "")) for i in hit[:5])
            unused.append(
                f"[[student]] who = {s.who!r}: matches {len(hit)} submissions ({shown}); name one (its submission name)"
            )
            continue
        i = hit[0]
        changes.setdefault(i, []).append(
            {"by": "student", "who": s.who, "score": s.score, "change": s.change, "reason": s.reason}
        )
    clamped = []
    for i, entries in changes.items():
        r = results[i]
        top = r.get("max_score") or 0.0
        score = r.get("score") or 0.0
        for e in entries:
            if e.get("score") is not None:
                e["change"] = e["score"] - score
                score = e["score"]
            else:
                score += e["change"]
        if not 0 <= score <= top:
            kept = min(max(score, 0.0), top)
            clamped.append(f"{r.get('submission', '')}: {score:g} is outside 0..{top:g}, so {kept:g}")
            entries.append({"by": "limit", "change": kept - score, "reason": f"a score stays within 0..{top:g}"})
            score = kept
        r["adjustments"] = [{k: v for k, v in e.items() if v is not None} for e in entries]
        r["adjusted_score"] = round(score, 6)
    return Outcome(len(changes), unused, clamped)


def _fold(text: str) -> str:
    return " ".join(text.casefold().split())


def _names(result: dict, more: list[str]) -> set[str]:
    """What a `who` may name this result by: its submission (with or without .py), its identity, its roster row."""
    submission = str(result.get("submission", ""))
    stem = submission.rsplit(".", 1)[0] if submission.lower().endswith((".py", ".ipynb")) else submission
    student = result.get("student") or {}
    names = [
        submission,
        stem,
        stem.rsplit("/", 1)[-1],
        *(str(student.get(k) or "") for k in ("name", "lms_id", "login", "email")),
        *more,
    ]
    return {_fold(n) for n in names if n}


def describe(entry: dict) -> str:
    """One adjustment as a line a person reads: "diagnosis no_clipping: +5: reason"."""
    change = entry.get("change", 0.0)
    points = f"{change:+g}" if change else "±0"
    if entry.get("by") == "student" and entry.get("score") is not None:
        points = f"set to {entry['score']:g} ({change:+g})"
    origin = {"diagnosis": f"diagnosis {entry.get('diagnosis', '')}", "student": "instructor", "limit": "limit"}.get(
        entry.get("by", ""), str(entry.get("by", ""))
    )
    return f"{origin}: {points}: {entry.get('reason', '')}"
