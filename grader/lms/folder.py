"""The fallback: a folder of plain submissions, and a roster that is any CSV with an id column.

A download no LMS recognises is graded as a plain folder (grader/judging/discovery.py). A roster
with `SID`, `Student ID`, `Email`, `Email address`, `lms_id`, `Login` or `Username` (the grades
export of an LMS without a format of its own) comes back as `gradebook.csv`, one row per student,
keyed by the LMS id.
"""

from __future__ import annotations

from grader.core.results import SubmissionResult
from grader.core.safe_text import for_csv
from grader.lms.adapter import LMS, Detection, Download, Entry, Fill, Layout
from grader.reports.gradebook import owners, score_for, to_csv
from grader.reports.roster import PLAIN_LAYOUT, Match, Roster, Student, Table

PLAIN_IDS = ("SID", "Student ID", "Email", "Email address", "lms_id", "Login", "Username")
PLAIN_COLUMNS = ("lms_id", "name", "login", "email", "score", "max_score", "status", "late", "submission", "adjustments")
CONTESTED = "contested"  # the status of a student two submissions claim equally


class Folder(LMS):
    name = PLAIN_LAYOUT
    title = "a plain folder"
    roster_kind = "plain"
    roster_title = "a CSV keyed by SID/e-mail"
    roster_header = f"a CSV with one of {', '.join(PLAIN_IDS)}"
    gradebook_file = "gradebook.csv"

    def detect(self, top: list[Entry], children: dict[str, list[Entry]]) -> Detection | None:
        return Detection(self.name, True, "no LMS layout recognised")

    def students(self, download: Download) -> Layout | None:
        return None  # no layout: intake discovers the folder's files as any plain folder's

    def read_roster(self, table: Table) -> Roster | None:
        folded = {h.casefold(): h for h in table.header}
        if not any(name.casefold() in folded for name in PLAIN_IDS):
            return None

        def get(row: list[str], *names: str) -> str:
            for name in names:
                if name.casefold() in folded:
                    value = table.cell(row, folded[name.casefold()])
                    if value:
                        return value
            return ""

        students = []
        for i, row in enumerate(table.rows):
            email = get(row, "Email", "Email address")
            lms_id = get(row, "lms_id", "SID", "Student ID") or email or get(row, "Login", "Username")
            if not lms_id:
                continue
            name = get(row, "Name", "Full name") or " ".join(x for x in (get(row, "First Name"), get(row, "Last Name")) if x)
            students.append(Student(i, lms_id, name, login=get(row, "Login", "Username"), email=email))
        return Roster(self.roster_kind, table.path, table.header, table.rows, students)

    def write_gradebook(
        self, roster: Roster, results: list[SubmissionResult], matched: Match, fill: Fill
    ) -> tuple[str, list[str]]:
        return plain_gradebook(roster, results, matched, fill.missing), []


def plain_gradebook(roster: Roster, results: list[SubmissionResult], matched: Match, missing: str = "zero") -> str:
    by_row = owners(results, matched)
    contested = {student.row: claimants for student, claimants in matched.contested}
    out = [list(PLAIN_COLUMNS)]
    for s in roster.students:
        r = by_row.get(s.row)
        late = r.student.late if r is not None and r.student is not None else None
        if s.row in contested:  # no score until an instructor decides which submission is theirs
            names = " | ".join(results[i].submission for i in contested[s.row])
            out.append([for_csv(x) for x in (s.lms_id, s.name, s.login, s.email, "", "", CONTESTED, "", names, "")])
            continue
        out.append(
            [
                for_csv(x)
                for x in (
                    s.lms_id,
                    s.name,
                    s.login,
                    s.email,
                    score_for(r, None, missing),
                    f"{r.max_score:g}" if r else "",
                    r.status if r else "missing",
                    "" if late is None else str(bool(late)).lower(),
                    r.submission if r else "",
                    " | ".join(a.describe() for a in (r.adjustments or [] if r else [])),
                )
            ]
        )
    return to_csv(out)
