"""What every gradebook written back into an LMS shares: cells copied safely, scores scaled, the CSV, unmatched.csv.

Each LMS's own format is written by its adapter (grader/lms/), from its own export. Cells
copied from the roster are kept as they are when they are numbers; any other text is
neutralised as grades.csv's is (a leading quote before `=`, `+`, `-`, `@`).
"""

from __future__ import annotations

import csv
import io
import re

from grader.core.safe_text import for_csv
from grader.reports.adjust import final_score
from grader.reports.roster import Match

# Kept as exported: a number, and "-" (an LMS's "never" in a date column), which no spreadsheet runs.
AS_EXPORTED = re.compile(r"^(-?\d+(\.\d+)?|-)$")


def copied(text: str) -> str:
    """A cell copied from the roster: a number as it is, any other text never a formula."""
    return text if AS_EXPORTED.match(text.strip()) else for_csv(text)


def points(value: float) -> str:
    return f"{round(value, 2):g}"


def score_for(result: dict | None, maximum: float | None, missing: str) -> str:
    """The cell for one student: scaled to the LMS's maximum; blank when there is no score to give."""
    if result is None:
        return "0" if missing == "zero" else ""
    if result.get("status") == "not_graded":
        return ""  # the run never reached it: no score rather than a wrong one
    top = result.get("max_score") or 0
    share = final_score(result) / top if top else 0.0
    return points(share * maximum if maximum is not None else final_score(result))


def to_csv(rows: list[list[str]]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    # Excel reads a CSV without a BOM as the local code page; the LMSes skip it.
    return "\ufeff" + buffer.getvalue()


def owners(results: list[dict], matched: Match) -> dict[int, dict]:
    """Each roster row's result."""
    return {s.row: results[i] for i, s in matched.by_result.items()}


def contested(results: list[dict], matched: Match) -> dict[int, str]:
    """Each roster row that several submissions claim equally: the sentence that says so (its grade stays blank)."""
    said = {}
    for student, claimants in matched.contested:
        names = ", ".join(str(results[i].get("submission", "")) for i in claimants[:5])
        said[student.row] = (
            f"{len(claimants)} submissions claim this student equally ({names}): "
            "the grade is left blank until an instructor decides which is theirs."
        )
    return said


def unmatched_csv(results: list[dict], matched: Match) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(("submission", "path", "name", "lms_id", "login", "email", "reason"))
    for i, why in matched.unmatched:
        r = results[i]
        who = r.get("student") or {}
        writer.writerow(
            [
                for_csv(str(x or ""))
                for x in (
                    r.get("submission"),
                    r.get("path"),
                    who.get("name"),
                    who.get("lms_id"),
                    who.get("login"),
                    who.get("email"),
                    why,
                )
            ]
        )
    return buffer.getvalue()
