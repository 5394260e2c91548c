"""Whose each name is, when a student chose part of it: shared by the adapters whose LMS writes ids into names.

A student chooses their name (or login) and their files' names, so either may hold another
student's id: a name read more than one way is read as nobody's (`resolve`), and two
submissions that claim one student are both refused (`contest`), never one picked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from grader.core.safe_text import path_text
from grader.lms.adapter import Entry, Identity, Student


@dataclass(frozen=True)
class Reading:
    """One way to read an entry's name: whose it is (the name or login as written, and the LMS id), and the rest."""

    who: str
    lms_id: str
    parts: dict[str, Any] = field(default_factory=dict, compare=False)


def resolve(options: list[list[Reading]]) -> list[Reading | None]:
    """The reading of each entry's name, or None when it could be more than one student's.

    A name read only one way says whose it is. A name read several ways is read the one way
    left after dropping those whose id another entry's unambiguous name gives to someone else
    (Eve's `Eve_123456_assignsubmission_file_777_900_...` beside Bob's `Bob_123456_...` is
    Eve's, participant 900); if more than one is left, or none, it is nobody's. Agreeing with
    another entry never decides: a student can copy another's whole prefix into their own name.
    """
    given: dict[str, set[str]] = {}
    for readings in options:
        if len(readings) == 1:
            given.setdefault(readings[0].lms_id, set()).add(readings[0].who)
    chosen: list[Reading | None] = []
    for readings in options:
        if len(readings) == 1:
            chosen.append(readings[0])
            continue
        left = [r for r in readings if given.get(r.lms_id, {r.who}) == {r.who}]
        chosen.append(left[0] if len(left) == 1 else None)
    return chosen


def unreadable(entry: Entry, readings: list[Reading], layout: str, what: str) -> Student:
    """An entry whose name could be several students': a row of its own, graded for nobody."""
    ids = sorted({r.lms_id for r in readings}, key=lambda x: (len(x), x))
    listed = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
    student = Student(
        Identity(layout=layout, path="/".join(entry.parts)),
        base=entry.parts if entry.kind == "dir" else (),
        contested=(
            f"its name can be read as more than one student's ({what} {listed}): it is graded for nobody; "
            "check in the LMS whose it is"
        ),
    )
    if entry.kind == "file":
        student.files.append(entry.parts)
    elif entry.kind == "other":
        student.problems.append(entry)
    return student


def contest(students: list[Student], keys: Callable[[Student], list[str]], what: str) -> None:
    """Every submission that claims a student another one claims too is refused, with the others named."""
    claims: dict[str, list[Student]] = {}
    for student in students:
        for key in dict.fromkeys(keys(student)):
            if key:
                claims.setdefault(key, []).append(student)
    for key, claimants in claims.items():
        if len(claimants) < 2:
            continue
        names = sorted(
            (shown(c.identity.display() or c.identity.path or "?") for c in claimants), key=lambda n: (n.casefold(), n)
        )
        listed = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
        for student in claimants:
            if not student.contested:
                student.contested = (
                    f"{len(claimants)} submissions claim {what} {shown(key)} ({listed}): none of them is graded, "
                    "since the download cannot say which is theirs; check in the LMS"
                )


def shown(text: str) -> str:
    """Student text in a message: a name that is not UTF-8 made text, and a long one cut."""
    text = path_text(text)
    return text if len(text) <= 80 else text[:79] + "…"


def display_names(students: list[Student]) -> list[str]:
    """Each student's name in every view: unique and the same on every run of the same download."""
    wanted = [s.identity.display() or s.identity.path or "?" for s in students]
    counts: dict[str, int] = {}
    for name in wanted:
        counts[name] = counts.get(name, 0) + 1
    names = []
    for student, name in zip(students, wanted):
        if counts[name] > 1:  # two students of one name: their id tells them apart
            extra = student.identity.lms_id or student.identity.login or student.identity.path
            if extra and extra != name:
                name = f"{name} ({extra})"
        names.append(name)
    return names
