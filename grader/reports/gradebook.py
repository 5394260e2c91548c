"""What every gradebook written back into an LMS shares: cells copied safely, the score cell, the CSV, unmatched.csv.

Each LMS's own format is written by its adapter (grader/lms/), from its own export. Cells
copied from the roster are kept as they are when they are numbers; any other text is
neutralised as grades.csv's is (a leading quote before `=`, `+`, `-`, `@`).
"""

from __future__ import annotations

import csv
import io
import re

from grader.core.results import SubmissionResult
from grader.core.safe_text import for_csv
from grader.core.scaling import gradebook_score
from grader.reports.roster import Match

# Kept as exported: a number, and "-" (an LMS's "never" in a date column), which no spreadsheet runs.
AS_EXPORTED = re.compile(r"^(-?\d+(\.\d+)?|-)$")


def copied(text: str) -> str:
    """A cell copied from the roster: a number as it is, any other text never a formula."""
    return text if AS_EXPORTED.match(text.strip()) else for_csv(text)


def score_for(result: SubmissionResult | None, maximum: float | None, missing: str) -> str:
    """The cell for one student: the score scaling.gradebook_score gives (scaled to the LMS's maximum), or blank."""
    score = gradebook_score(result, maximum, missing)
    return "" if score is None else f"{score:g}"


def to_csv(rows: list[list[str]]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    # Excel reads a CSV without a BOM as the local code page; the LMSes skip it.
    return "\ufeff" + buffer.getvalue()


def owners(results: list[SubmissionResult], matched: Match) -> dict[int, SubmissionResult]:
    """Each roster row's result."""
    return {s.row: results[i] for i, s in matched.by_result.items()}


def contested(results: list[SubmissionResult], matched: Match) -> dict[int, str]:
    """Each roster row that several submissions claim equally: the sentence that says so (its grade stays blank)."""
    said = {}
    for student, claimants in matched.contested:
        names = ", ".join(results[i].submission for i in claimants[:5])
        said[student.row] = (
            f"{len(claimants)} submissions claim this student equally ({names}): "
            "the grade is left blank until an instructor decides which is theirs."
        )
    return said


def unmatched_csv(results: list[SubmissionResult], matched: Match) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(("submission", "path", "name", "lms_id", "login", "email", "reason"))
    for i, why in matched.unmatched:
        r = results[i]
        who = r.student
        identity = (who.name, who.lms_id, who.login, who.email) if who is not None else (None, None, None, None)
        writer.writerow([for_csv(str(x or "")) for x in (r.submission, r.path, *identity, why)])
    return buffer.getvalue()
