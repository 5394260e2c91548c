"""Moodle: its "Download all submissions" zip, its offline grading worksheet, and its feedback-files zip.

The download has a folder per student, `<Full Name>_<participant id>_assignsubmission_file_/`
(and `_assignsubmission_onlinetext_/` folders holding onlinetext.html, which is not code); older
Moodles put the same prefix on flat file names. The worksheet has `Identifier` (`Participant
<id>`), `Full name`, `Grade`, `Maximum Grade`, `Last modified (grade)` and `Feedback comments`;
it comes back with Grade scaled to each row's maximum and the comments filled in.
"""

from __future__ import annotations

import html
import io
import re
import time
import zipfile
from collections.abc import Callable

from grader.core.results import SubmissionResult, SubmissionStatus
from grader.core.safe_text import for_csv
from grader.lms.adapter import LMS, SUFFIXES, Detection, Download, Entry, Fill, Identity, Layout, Student, clip
from grader.lms.claims import Reading, contest, resolve, unreadable
from grader.reports.gradebook import contested as contested_rows
from grader.reports.gradebook import copied, owners, score_for, to_csv
from grader.reports.roster import Match, Roster, Table, parse_number
from grader.reports.roster import Student as RosterStudent

# A folder's name is all Moodle's: the id is the one next to the `_assignsubmission_` at its end.
MOODLE_DIR = re.compile(r"^(?P<name>.+)_(?P<id>\d+)_assignsubmission_(?P<plugin>[a-z]+)_?$", re.S)
# A flat file's name is Moodle's prefix and the student's own file name (`moodle_readings`).
MOODLE_FILE = re.compile(r"^(?P<name>.+?)_(?P<id>\d+)_assignsubmission_(?P<plugin>[a-z]+)_(?P<original>.+)$", re.S)
MOODLE_TAIL = re.compile(r"_(?P<id>\d+)_assignsubmission_(?P<plugin>[a-z]+)_(?P<original>.+)", re.S)
# The same names as a submission's name, for matching a result graded from a plain folder.
MOODLE_FOLDER = re.compile(r"^.+_(\d+)_assignsubmission_[a-z]+_?$", re.S)
MOODLE_FLAT = re.compile(r"_(\d+)_assignsubmission_[a-z]+_.")

MOODLE_COLUMNS = ("Identifier", "Full name", "Grade", "Maximum Grade", "Last modified (grade)")
PARTICIPANT = re.compile(r"^Participant (\d+)$")
NO_SUBMISSION = "No submission was received."
FEEDBACK_FILE = "feedback.html"


class Moodle(LMS):
    name = "moodle"
    title = "Moodle"
    roster_kind = "moodle"
    roster_title = "Moodle grading worksheet"
    roster_header = f"Moodle's grading worksheet ({', '.join(MOODLE_COLUMNS)}, ...)"
    gradebook_file = "gradebook-moodle.csv"
    feedback_bundle = "feedback-moodle.zip"

    def detect(self, top: list[Entry], children: dict[str, list[Entry]]) -> Detection | None:
        files = [e.parts[-1] for e in top if e.kind == "file"]
        dirs = [e.parts[-1] for e in top if e.kind == "dir"]
        named = sum(bool(MOODLE_DIR.match(d)) for d in dirs) + sum(bool(MOODLE_FILE.match(f)) for f in files)
        total = len(dirs) + len([f for f in files if f.endswith(SUFFIXES)])
        # Most of its entries, not one: a student of another LMS can name a file as Moodle names them.
        if not named or named * 2 <= total:
            return None
        return Detection(self.name, named == total, "its entries are named <Full Name>_<id>_assignsubmission_...")

    def students(self, download: Download) -> Layout:
        students, others, ignored = moodle_students(download.top, download.below)
        if ignored:
            download.tell(f"meteor-kit grade: {len(ignored)} Moodle online-text folder(s) ignored: onlinetext.html is not code")
        return Layout(students, others)

    def read_roster(self, table: Table) -> Roster | None:
        if not all(name in table.header for name in MOODLE_COLUMNS):
            return None
        students = []
        for i, row in enumerate(table.rows):
            found = PARTICIPANT.match(table.cell(row, "Identifier"))
            if not found:
                continue
            students.append(
                RosterStudent(
                    i,
                    found.group(1),
                    table.cell(row, "Full name"),
                    email=table.cell(row, "Email address"),
                    maximum=parse_number(table.cell(row, "Maximum Grade")),
                )
            )
        return Roster(self.roster_kind, table.path, table.header, table.rows, students, id_in_name=moodle_participant)

    def write_gradebook(
        self, roster: Roster, results: list[SubmissionResult], matched: Match, fill: Fill
    ) -> tuple[str, list[str]]:
        by_result = matched.by_result
        comments = {by_result[i].row: comment(r) for i, r in enumerate(results) if i in by_result}
        return moodle_gradebook(roster, results, matched, comments, fill.missing)

    def write_feedback(self, pages: list[tuple[RosterStudent, str]]) -> bytes:
        return moodle_zip(pages)


# ---------------------------------------------------------------- the download


def moodle_readings(entry: Entry) -> list[Reading]:
    """Every way to read a Moodle name: a folder's one (anchored at its end), a flat file's each `_<id>_assignsubmission_`.

    Moodle writes a full name with its underscores made spaces, but a download is not
    trusted to: either the name or the student's own file name may hold `_<id>_assignsubmission_`.
    """
    leaf = entry.parts[-1]
    if entry.kind == "dir":
        folder = MOODLE_DIR.match(leaf)
        return [Reading(folder["name"], folder["id"], {"plugin": folder["plugin"], "folder": True})] if folder else []
    readings = []
    for at in (i for i, c in enumerate(leaf) if c == "_"):
        tail = MOODLE_TAIL.fullmatch(leaf, at)
        if tail is not None and at > 0:
            readings.append(Reading(leaf[:at], tail["id"], {"plugin": tail["plugin"], "original": tail["original"]}))
    return readings


def moodle_students(
    top: list[Entry], below: Callable[[tuple[str, ...]], list[Entry]]
) -> tuple[list[Student], list[Entry], list[str]]:
    """A student per `_assignsubmission_file_` folder (and per prefix of flat files); online-text folders noted."""
    students: dict[tuple[str, ...], Student] = {}
    others: list[Entry] = []
    ignored: list[str] = []
    unread: list[Student] = []
    options = [moodle_readings(e) for e in top]
    for entry, readings, reading in zip(top, options, resolve(options)):
        if not readings:
            others.append(entry)
            continue
        if reading is None:
            unread.append(unreadable(entry, readings, "moodle", "participant"))
            continue
        if reading.parts["plugin"] != "file":
            ignored.append(entry.parts[-1])
            continue
        if reading.parts.get("folder"):  # a folder is a claim of its own: two folders for one id are contested
            found = students[entry.parts] = Student(
                Identity(name=clip(reading.who), lms_id=reading.lms_id, layout="moodle", path="/".join(entry.parts)),
                base=entry.parts,
            )
            found.take(below(entry.parts))
            continue
        found = students.setdefault(
            ("", reading.who, reading.lms_id),
            Student(Identity(name=clip(reading.who), lms_id=reading.lms_id, layout="moodle")),
        )
        if entry.kind == "file":
            found.files.append(entry.parts)
            found.module_of[entry.parts] = reading.parts["original"]
        else:
            found.problems.append(entry)
    claims = list(students.values())
    contest(claims, lambda s: [s.identity.lms_id or ""], "participant")
    return claims + unread, others, ignored


# ---------------------------------------------------------------- the worksheet


def moodle_participant(submission: str) -> str | None:
    """The participant id a Moodle folder or flat file name in `submission` gives, read one way only, or None."""
    for part in submission.split("/"):
        folder = MOODLE_FOLDER.match(part)
        if folder:
            return folder.group(1)
    flat = MOODLE_FLAT.findall(submission.rsplit("/", 1)[-1])
    return flat[0] if len(flat) == 1 else None  # two ids in one name: either could be a student's forgery


def comment(result: SubmissionResult) -> str:
    """The Feedback comments cell: the score's story in a few lines."""
    parts = ["Submitted late."] if result.student is not None and result.student.late else []
    if result.adjusted_score is not None:
        parts.append(f"The tests gave {result.score:g}; adjusted: " + "; ".join(a.describe() for a in result.adjustments or []))
    if result.diagnosis is not None and result.diagnosis.text:
        parts.append(result.diagnosis.text)
    if result.status != SubmissionStatus.GRADED:
        parts.append(result.message)
    return " ".join(parts)[:4000]


def moodle_gradebook(
    roster: Roster, results: list[SubmissionResult], matched: Match, comments: dict[int, str], missing: str = "zero"
) -> tuple[str, list[str]]:
    """The worksheet, and warnings (rows whose grade is locked, or has no numeric maximum)."""
    by_row = owners(results, matched)
    contested = contested_rows(results, matched)
    students = {s.row: s for s in roster.students}
    grade, feedback = roster.column("Grade"), _optional(roster, "Feedback comments")
    locked = _optional(roster, "Grade can be changed")
    out = [[copied(h) for h in roster.header]]
    warnings = []
    for i, row in enumerate(roster.rows):
        cells = [copied(c) for c in row]
        student = students.get(i)
        if student is not None and locked is not None and row[locked].strip().casefold() == "no":
            warnings.append(f"{student.name or student.lms_id}: Moodle says the grade cannot be changed; row left as it was")
        elif student is not None:
            if student.maximum is None:
                warnings.append(f"{student.name or student.lms_id}: Maximum Grade is not a number (a scale?); grade left blank")
                cells[grade] = ""
            else:
                cells[grade] = "" if i in contested else score_for(by_row.get(i), student.maximum, missing)
            if feedback is not None:
                # Moodle keeps feedback comments as HTML: student text in it must not become markup.
                text = contested.get(i) or comments.get(i, NO_SUBMISSION if i not in by_row else "")
                cells[feedback] = for_csv(html.escape(text, quote=False))
        out.append(cells)
    return to_csv(out), warnings


def _optional(roster: Roster, name: str) -> int | None:
    return roster.header.index(name) if name in roster.header else None


# ---------------------------------------------------------------- feedback files


def moodle_folder(student: RosterStudent) -> str:
    """`<Full name>_<participant id>_assignsubmission_file_`, as Moodle's zip import parses it.

    Moodle splits the folder's name on `_` and reads the participant id second: an underscore
    in the name would shift it, so names lose theirs (and anything that is not a letter,
    digit, space or `.-'`), which Moodle never reads back.
    """
    name = re.sub(r"[^\w .'-]|_", " ", student.name)
    name = " ".join(name.split())[:80].strip(". ") or "Participant"
    return f"{name}_{int(student.lms_id)}_assignsubmission_file_"


def moodle_zip(pages: list[tuple[RosterStudent, str]]) -> bytes:
    """The zip for Moodle's "Upload multiple files in a zip": one folder per student holding feedback.html."""
    buffer = io.BytesIO()
    stamp = time.localtime()[:6]
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for student, page in pages:
            if not student.lms_id.isdigit():
                continue
            info = zipfile.ZipInfo(f"{moodle_folder(student)}/{FEEDBACK_FILE}", date_time=stamp)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, page)
    return buffer.getvalue()
