"""Canvas: its "Download Submissions" zip, its gradebook export, and that export filled in.

The download is flat: files named `<login>[_LATE]_<user id>_<submission id>_<original name>`,
a file uploaded again getting `-N` added to its original name (`solution-1.py`, the highest N
the latest). It gives no full name, so a Canvas student is shown by login. The gradebook
export has `Student`, `ID`, `SIS User ID`, `SIS Login ID`, `Section`, one `Title (assignment
id)` column per assignment, and read-only totals; it comes back whole, with one assignment's
column filled in (scaled to its `Points Possible`).
"""

from __future__ import annotations

import dataclasses
import re

from grader.core.results import SubmissionResult
from grader.lms.adapter import LMS, SUFFIXES, Detection, Download, Entry, Fill, Identity, Layout, Student, clip
from grader.lms.claims import Reading, contest, resolve, unreadable
from grader.reports.gradebook import contested as contested_rows
from grader.reports.gradebook import copied, owners, score_for, to_csv
from grader.reports.roster import Match, Roster, RosterError, Table, parse_number, squash
from grader.reports.roster import Student as RosterStudent

# Whether a name looks like Canvas's (for detection); `canvas_readings` reads it.
CANVAS = re.compile(r"^(?P<login>.+?)(?:_LATE|_late)?_(?P<user>\d+)_(?P<sub>\d+)_(?P<original>.+)$", re.S)
# What Canvas writes after the login (and `_LATE`): `_<user id>_<submission id>_<original name>`.
CANVAS_TAIL = re.compile(r"_(?P<user>\d+)_(?P<sub>\d+)_(?P<original>.+)", re.S)
LATE_FLAGS = ("_LATE", "_late")  # Canvas has written both
# Canvas's "-N" on a resubmitted file: before the suffix (`solution-2.py`), or at the very end.
RESUBMITTED = re.compile(r"^(?P<base>.+?)-(?P<n>\d{1,4})(?P<suffix>\.[^.]*)?$", re.S)

CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID")
# Canvas's read-only and identity columns: never an assignment.
CANVAS_NOT_ASSIGNMENTS = re.compile(
    r"^(Student|ID|SIS User ID|SIS Login ID|Integration ID|Root Account|Section|"
    r".*(Current|Final|Unposted Current|Unposted Final|Override) (Score|Grade|Points))$"
)
CANVAS_ASSIGNMENT = re.compile(r"^(?P<title>.*\S)\s*\((?P<id>\d+)\)$")


class Canvas(LMS):
    name = "canvas"
    title = "Canvas"
    roster_kind = "canvas"
    roster_title = "Canvas gradebook CSV"
    roster_header = f"Canvas's ({', '.join(CANVAS_IDENTITY)}, ...)"
    gradebook_file = "gradebook-canvas.csv"
    has_assignments = True

    def detect(self, top: list[Entry], children: dict[str, list[Entry]]) -> Detection | None:
        dirs = [e for e in top if e.kind == "dir"]
        code = [e.parts[-1] for e in top if e.kind == "file" and e.parts[-1].endswith(SUFFIXES)]
        named = sum(bool(CANVAS.match(f)) for f in code)
        if code and named == len(code) and not dirs:
            return Detection(self.name, True, "every file is named <login>_<user id>_<submission id>_<name>")
        if code and named * 2 > len(code):
            return Detection(self.name, False, f"{named} of {len(code)} files are named as Canvas names them")
        return None

    def students(self, download: Download) -> Layout:
        students, others = canvas_students(download.top)
        return Layout(students, others)

    def read_roster(self, table: Table) -> Roster | None:
        header = table.header
        # Canvas leaves out the SIS columns for instructors who may not see them: Student and ID, and a
        # Section or an assignment column, are enough.
        if not (
            "Student" in header
            and "ID" in header
            and ("Section" in header or "SIS Login ID" in header or any(CANVAS_ASSIGNMENT.match(h) for h in header))
        ):
            return None
        students = []
        for i, row in enumerate(table.rows):
            name, lms_id = table.cell(row, "Student"), table.cell(row, "ID")
            # "Points Possible", posting-policy rows and the like have no user id: kept, never a student;
            # nor is the test student that Canvas's Student View creates.
            if not lms_id or name in ("Points Possible", "Student, Test", "Test Student"):
                continue
            students.append(RosterStudent(i, lms_id, name, login=table.cell(row, "SIS Login ID")))
        return Roster(self.roster_kind, table.path, header, table.rows, students, download_name=download_name)

    def assignment_column(self, roster: Roster, wanted: str | None, exercise_id: str, title: str) -> int | None:
        return assignment_column(roster, wanted, exercise_id, title)

    def write_gradebook(
        self, roster: Roster, results: list[SubmissionResult], matched: Match, fill: Fill
    ) -> tuple[str, list[str]]:
        if fill.column is None:
            raise ValueError("a Canvas gradebook needs its assignment's column")
        return canvas_gradebook(roster, results, matched, fill.column, fill.missing), []


# ---------------------------------------------------------------- the download


def canvas_readings(filename: str) -> list[Reading]:
    """Every way to read a Canvas file name `<login>[_LATE]_<user id>_<submission id>_<original name>`.

    A login and an original name can both hold `_<digits>_`, so a name can have several
    readings; `resolve` chooses among them, or none.
    """
    readings = []
    for at in (i for i, c in enumerate(filename) if c == "_"):
        tail = CANVAS_TAIL.fullmatch(filename, at)
        if tail is None:
            continue
        login, late = filename[:at], filename[:at].endswith(LATE_FLAGS)
        login = login[: -len("_LATE")] if late else login
        if not login:
            continue
        original = tail["original"]
        base, version = resubmission(original)
        readings.append(
            Reading(
                login,
                tail["user"],
                {"late": late, "submission": tail["sub"], "original": original, "base": base, "version": version},
            )
        )
    return readings


def canvas_name(filename: str) -> dict | None:
    """The parts of a Canvas file name that can be read only one way, or None."""
    readings = canvas_readings(filename)
    if len(readings) != 1:
        return None
    (reading,) = readings
    return {"login": reading.who, "user": reading.lms_id, **reading.parts}


def resubmission(original: str) -> tuple[str, int]:
    """`solution-2.py` -> (`solution.py`, 2); a name without Canvas's `-N` is version 0."""
    match = RESUBMITTED.match(original)
    if not match:
        return original, 0
    return match["base"] + (match["suffix"] or ""), int(match["n"])


def canvas_students(entries: list[Entry]) -> tuple[list[Student], list[Entry]]:
    """Flat files grouped by student (login and user id); for each name, only its latest upload."""
    options = [canvas_readings(e.parts[-1]) for e in entries]
    students: dict[tuple[str, str], Student] = {}
    latest: dict[tuple[str, str], dict[str, tuple[int, tuple[str, ...]]]] = {}
    others: list[Entry] = []
    unread: list[Student] = []
    for entry, readings, reading in zip(entries, options, resolve(options)):
        if not readings:
            others.append(entry)
            continue
        if reading is None:
            unread.append(unreadable(entry, readings, "canvas", "user id"))
            continue
        key = (reading.who, reading.lms_id)
        student = students.get(key)
        if student is None:
            student = students[key] = Student(
                Identity(login=clip(reading.who), lms_id=reading.lms_id, late=False, layout="canvas")
            )
        if entry.kind != "file":
            student.problems.append(entry)
            continue
        if reading.parts["late"]:
            student.identity = dataclasses.replace(student.identity, late=True)
        versions = latest.setdefault(key, {})
        base, version = reading.parts["base"], reading.parts["version"]
        if base not in versions or version > versions[base][0]:
            versions[base] = (version, entry.parts)
    for key, student in students.items():
        for base, (_, parts) in sorted(latest.get(key, {}).items()):
            student.files.append(parts)
            student.module_of[parts] = base
    found = list(students.values())
    contest(found, lambda s: [s.identity.lms_id or ""], "Canvas user id")
    return found + unread, others


# ---------------------------------------------------------------- the gradebook


def download_name(student: RosterStudent) -> str:
    """Canvas names a download's files after the sortable name squashed: "Martinez, Bob" -> martinezbob."""
    return squash(student.name)


def assignment_column(roster: Roster, wanted: str | None, exercise_id: str, title: str) -> int:
    """The Canvas column to fill: `wanted` (a column, title or id), else the one whose title names the exercise."""
    columns = [
        (i, m) for i, h in enumerate(roster.header) if not CANVAS_NOT_ASSIGNMENTS.match(h) and (m := CANVAS_ASSIGNMENT.match(h))
    ]
    listing = "; ".join(roster.header[i] for i, _ in columns) or "none"
    if wanted:
        folded = wanted.casefold().strip()
        found = [i for i, m in columns if folded in (roster.header[i].casefold(), m.group("title").casefold(), m.group("id"))]
        if len(found) != 1:
            raise RosterError(
                f"--assignment {wanted!r} names {'no' if not found else 'more than one'} assignment column of "
                f"{roster.path}; its assignments: {listing}"
            )
        return found[0]
    names = {exercise_id.casefold(), title.casefold()}
    found = [i for i, m in columns if any(n and n in m.group("title").casefold() for n in names)]
    if len(found) == 1:
        return found[0]
    if not found and len(columns) == 1:
        return columns[0][0]
    if not columns:
        raise RosterError(
            f"the Canvas gradebook {roster.path} has no assignment column (`Title (id)`): create the "
            "assignment in Canvas and export the gradebook again"
        )
    raise RosterError(
        f"which assignment of {roster.path} is this exercise? "
        f"{'several' if found else 'none'} of its columns match {exercise_id!r}: "
        f"{'; '.join(roster.header[i] for i in found) if found else listing}. Choose one with --assignment NAME"
    )


def canvas_gradebook(roster: Roster, results: list[SubmissionResult], matched: Match, column: int, missing: str = "zero") -> str:
    """The export itself, every row and column kept, with the assignment's column filled in."""
    by_row = owners(results, matched)
    contested = contested_rows(results, matched)
    students = {s.row for s in roster.students}
    points = None
    for row in roster.rows:
        if row[roster.column("Student")].strip() == "Points Possible":
            points = parse_number(row[column])
    out = [[copied(h) for h in roster.header]]
    for i, row in enumerate(roster.rows):
        cells = [copied(c) for c in row]
        if i in students:
            cells[column] = "" if i in contested else score_for(by_row.get(i), points, missing)
        out.append(cells)
    return to_csv(out)
