"""A gradebook an LMS exported (`--roster FILE`): its rows read safely, its students, and who submitted what.

Which LMS wrote it, and so who its students are, is each LMS's adapter's to say (grader/lms/);
this module reads the CSV and matches results with the students an adapter found.

A roster is trusted no more than a submission: it passed through spreadsheets and e-mail, and
its names are the students' own. It is read as bytes, at most ROSTER_LIMIT of them, decoded
as UTF-8 (a BOM is fine; bytes that are not UTF-8 become U+FFFD, with a warning), with any
line ends, and a cell of more than CELL_LIMIT characters is refused.
"""

from __future__ import annotations

import csv
import io
import os
import re
import stat
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from grader.core.results import Student as ResultStudent
from grader.core.results import SubmissionResult
from grader.core.safe_text import valid

ROSTER_LIMIT = 50_000_000  # bytes: a gradebook of 100,000 students with 50 columns is well under this
CELL_LIMIT = 100_000  # characters in one cell (csv's own default limit is 131,072)
PLAIN_LAYOUT = "folder"  # results.json's student.layout when no LMS's layout was read from the download


class RosterError(Exception):
    """A roster that cannot be used: the command stops before grading, with this one line."""


@dataclass
class Student:
    """One student on the roster."""

    row: int  # index into Roster.rows
    lms_id: str  # the LMS's own id of the student (a user id, a participant number, an SID, or an e-mail)
    name: str
    login: str = ""
    email: str = ""
    maximum: float | None = None  # this row's own maximum grade, where the LMS gives one per row


@dataclass
class Table:
    """A roster's cells as read, before any LMS has said what they are."""

    path: str
    header: list[str]
    rows: list[list[str]]  # every non-blank row after the header, padded to the header's width
    warnings: list[str] = field(default_factory=list)

    def cell(self, row: list[str], name: str) -> str:
        """The cell of column `name` in `row`, stripped; "" when there is no such column."""
        return row[self.header.index(name)].strip() if name in self.header else ""


@dataclass
class Roster:
    kind: str  # which gradebook format it is: its adapter's roster_kind
    path: str
    header: list[str]
    rows: list[list[str]]  # every row after the header, as read (an LMS's "Points Possible" row too)
    students: list[Student]
    warnings: list[str] = field(default_factory=list)
    # What an LMS's own names add to matching, set by its adapter: the key its download's file names
    # give a student (already squashed, see `squash`), and the LMS id a download's file or folder name holds.
    download_name: Callable[[Student], str] | None = field(default=None, repr=False, compare=False)
    id_in_name: Callable[[str], str | None] | None = field(default=None, repr=False, compare=False)

    def column(self, name: str) -> int:
        return self.header.index(name)


def read_table(path: Path) -> Table:
    """The cells of the CSV file `path`, read as a roster is (see `parse_table`)."""
    try:
        # A FIFO or a device would block the read, or never end it.
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise RosterError(f"the roster {path} is not a regular file")
        with open(path, "rb") as f:
            data = f.read(ROSTER_LIMIT + 1)
    except OSError as exc:
        raise RosterError(f"cannot read the roster {path}: {exc.strerror or exc}") from None
    if len(data) > ROSTER_LIMIT:
        raise RosterError(f"the roster {path} is larger than {ROSTER_LIMIT // 1_000_000} MB; is it a gradebook?")
    return parse_table(data, str(path))


def parse_table(data: bytes, path: str = "roster") -> Table:
    """A roster's bytes as a header and rows: decoded leniently, refused when it cannot be a gradebook."""
    warnings = []
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8-sig", errors="replace")
        warnings.append(
            f"the roster is not valid UTF-8 (first bad byte at {exc.start}): those bytes became U+FFFD; "
            "save it as CSV UTF-8 to keep every name"
        )
    text = valid(text)  # a str handed in may hold lone surrogates
    if "\x00" in text:
        raise RosterError(f"the roster {path} holds NUL bytes: it is not a CSV file (an .xlsx? export it as CSV)")
    rows = _rows(text, path)
    while rows and not any(cell.strip() for cell in rows[0]):
        rows.pop(0)
    if not rows:
        raise RosterError(f"the roster {path} is empty")
    header = [unicodedata.normalize("NFC", cell.strip()) for cell in rows[0]]
    body = [row + [""] * (len(header) - len(row)) for row in rows[1:] if any(cell.strip() for cell in row)]
    return Table(path, header, body, warnings)


def _rows(text: str, path: str) -> list[list[str]]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=False)
    rows = []
    try:
        for row in reader:
            if any(len(cell) > CELL_LIMIT for cell in row):
                raise RosterError(
                    f"the roster {path} has a cell of more than {CELL_LIMIT:,} characters on line "
                    f"{reader.line_num}: not a gradebook"
                )
            rows.append(row)
    except csv.Error as exc:
        raise RosterError(f"the roster {path} is not a readable CSV file (line {reader.line_num}: {exc})") from None
    return rows


def refuse_duplicates(roster: Roster) -> None:
    seen: dict[str, Student] = {}
    twice = []
    for s in roster.students:
        if s.lms_id in seen:
            twice.append(s.lms_id)
        seen[s.lms_id] = s
    if twice:
        shown = ", ".join(repr(x[:40]) for x in sorted(set(twice))[:10])
        raise RosterError(
            f"the roster {roster.path} lists the same student id more than once ({shown}): a grade could "
            "land on the wrong row; export the gradebook again"
        )


def parse_number(text: str) -> float | None:
    """A number as a gradebook writes it ("100.00", "7,5"), or None."""
    try:
        value = float(text.replace(",", "."))
    except ValueError:
        return None
    return value if value == value and abs(value) != float("inf") else None


# ---------------------------------------------------------------- matching


@dataclass
class Match:
    """Who submitted what: each result's roster row, the rows nobody matched, the results nobody owns."""

    by_result: dict[int, Student]  # index into the results -> student
    missing: list[Student]
    unmatched: list[tuple[int, str]]  # (index into the results, why)
    # Students that two or more submissions claim equally: (student, those results); none of them is placed.
    contested: list[tuple[Student, list[int]]] = field(default_factory=list)


def _fold(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", str(text)).casefold().split())


def _exact(text: str) -> str:
    return " ".join(unicodedata.normalize("NFC", str(text)).split())


def squash(text: str) -> str:
    """A name as an LMS may write it in a download's file name: lower case, letters and digits only."""
    return re.sub(r"[\W_]", "", _fold(text))


def _stem(submission: str) -> str:
    name = submission.rsplit("/", 1)[-1]
    return re.sub(r"\.(py|ipynb)$", "", name, flags=re.IGNORECASE)


# How strongly a key places a result, lower first: each kind of key exactly, then case-folded.
ID, LOGIN, NAME, FOLDER, STEM, SQUASHED = 0, 2, 4, 6, 8, 11
KEY_NAMES = {ID: "its id", LOGIN: "its login or e-mail", NAME: "its name", FOLDER: "its folder's participant id"}


def _both(rank: int, kind: str, value: str) -> list[tuple[int, str]]:
    """A key exactly as written (rank), and case-folded (rank + 1): an exact `bob` beats a `Bob`."""
    return [(rank, f"{kind}={_exact(value)}"), (rank + 1, f"{kind}~{_fold(value)}")]


def _keys(student: Student) -> list[tuple[int, str]]:
    """The keys a result can match this student by (the ranks are the result's to give)."""
    keys = _both(ID, "id", student.lms_id)
    for field_name, value in (("login", student.login), ("email", student.email), ("name", student.name)):
        if value:
            keys += _both(0, field_name, value)
    return keys


def _result_keys(result: SubmissionResult, roster: Roster) -> list[tuple[int, str]]:
    """(rank, key) pairs a result offers, strongest first: its `student` identity, then its submission's name."""
    who = result.student or ResultStudent()
    keys = []
    if who.lms_id not in (None, ""):
        keys += _both(ID, "id", str(who.lms_id).strip())
    for field_name, value in (("login", who.login), ("email", who.email)):
        if value:
            keys += _both(LOGIN, field_name, value)
    if who.name:
        keys += _both(NAME, "name", who.name)
    submission = result.submission
    if result.student is not None and who.layout not in (None, PLAIN_LAYOUT):
        # Read from an LMS's own names: the submission's name is the student's display name, which a
        # student chose ("123456" as a full name) and which must not stand for an id.
        if who.login:
            keys.append((SQUASHED, "squashed:" + squash(who.login)))
        return sorted(keys)
    # No identity from a layout: the submission's own name (a file named after the student).
    participant = roster.id_in_name(submission) if roster.id_in_name is not None else None
    if participant is not None:
        keys += _both(FOLDER, "id", participant)
    stem = _stem(submission)
    for field_name in ("id", "login", "email", "name"):
        keys += _both(STEM, field_name, stem.strip())
    keys.append((SQUASHED, "squashed:" + squash(stem)))
    return sorted(keys)


def match(results: list[SubmissionResult], roster: Roster) -> Match:
    """Each result's student on the roster: by LMS id, then login or e-mail, then name, then the file's name.

    An exact key beats the same key case-folded; two results that reach one student equally
    strongly place neither (the student is `contested`), and the others that reach them are listed.
    """
    index: dict[str, list[Student]] = {}
    for s in roster.students:
        for _, key in _keys(s):
            index.setdefault(key, []).append(s)
        named = roster.download_name(s) if roster.download_name is not None and s.name else ""
        if named:  # the name an LMS's download gives the student's files ("Martinez, Bob" -> martinezbob)
            index.setdefault("squashed:" + named, []).append(s)
    claims: dict[int, list[tuple[int, int]]] = {}  # roster row -> [(rank, result index)]
    unmatched: list[tuple[int, str]] = []
    for i, r in enumerate(results):
        found = None
        ambiguous = False
        for rank, key in _result_keys(r, roster):
            people = {id(s): s for s in index.get(key, [])}
            if len(people) == 1:
                found = (rank, next(iter(people.values())))
                break
            if len(people) > 1:
                ambiguous = True  # two students share that name: try a stronger key, never guess
        if found is None:
            unmatched.append((i, "matches more than one student on the roster" if ambiguous else "matches nobody on the roster"))
            continue
        claims.setdefault(found[1].row, []).append((found[0], i))
    by_result: dict[int, Student] = {}
    contested: list[tuple[Student, list[int]]] = []
    rows = {s.row: s for s in roster.students}
    for row, claimants in claims.items():
        claimants.sort()
        student = rows[row]
        who = student.name or student.lms_id
        best = [i for rank, i in claimants if rank == claimants[0][0]]
        shown = ", ".join(results[i].submission for i in best[:5]) + (", ..." if len(best) > 5 else "")
        if len(best) > 1:  # a tie: no guess, and every output says so
            contested.append((student, best))
            how = KEY_NAMES.get(claimants[0][0] // 2 * 2, "its file's name")
            for i in best:
                unmatched.append(
                    (i, f"{len(best)} submissions claim {who} equally ({shown}, by {how}): none is placed; grade by hand")
                )
        else:
            by_result[best[0]] = student
        for _, i in claimants[len(best) :]:
            unmatched.append((i, f"its student ({who}) already has a submission: {shown}"))
    missing = [s for s in roster.students if s.row not in claims]
    return Match(by_result, missing, sorted(unmatched), contested)
