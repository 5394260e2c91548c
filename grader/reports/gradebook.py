"""The gradebook to import back into the LMS, written from its own export (see grader/reports/roster.py).

Canvas: the export itself, every row and column kept, with the assignment's column filled in
(scaled to its Points Possible). Moodle: the grading worksheet with Grade (scaled to each
row's Maximum Grade) and Feedback comments filled in. Anything else: a plain CSV keyed by the
LMS id. Cells copied from the roster are kept as they are when they are numbers; any other
text is neutralised as grades.csv's is (a leading quote before `=`, `+`, `-`, `@`).
"""

from __future__ import annotations

import csv
import html
import io
import re

from grader.core.safe_text import for_csv
from grader.reports.adjust import describe, final_score
from grader.reports.roster import CANVAS_ASSIGNMENT, CANVAS_NOT_ASSIGNMENTS, Match, Roster, RosterError, parse_number

# Kept as exported: a number, and Moodle's "-" for "never" (`Last modified (grade)`), which no spreadsheet runs.
AS_EXPORTED = re.compile(r"^(-?\d+(\.\d+)?|-)$")
FILES = {"canvas": "gradebook-canvas.csv", "moodle": "gradebook-moodle.csv", "plain": "gradebook.csv"}
PLAIN_COLUMNS = ("lms_id", "name", "login", "email", "score", "max_score", "status", "late", "submission", "adjustments")
NO_SUBMISSION = "No submission was received."
CONTESTED = "contested"  # the plain gradebook's status for a student two submissions claim equally


def assignment_column(roster: Roster, wanted: str | None, exercise_id: str, title: str) -> int:
    """The Canvas column to fill: `wanted` (a column, title or id), else the one whose title names the exercise."""
    columns = [(i, CANVAS_ASSIGNMENT.match(h)) for i, h in enumerate(roster.header) if not CANVAS_NOT_ASSIGNMENTS.match(h)]
    columns = [(i, m) for i, m in columns if m]
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


def _cell(text: str) -> str:
    """A cell copied from the roster: a number as it is, any other text never a formula."""
    return text if AS_EXPORTED.match(text.strip()) else for_csv(text)


def _points(value: float) -> str:
    return f"{round(value, 2):g}"


def _score_for(result: dict | None, maximum: float | None, missing: str) -> str:
    """The cell for one student: scaled to the LMS's maximum; blank when there is no score to give."""
    if result is None:
        return "0" if missing == "zero" else ""
    if result.get("status") == "not_graded":
        return ""  # the run never reached it: no score rather than a wrong one
    top = result.get("max_score") or 0
    share = final_score(result) / top if top else 0.0
    return _points(share * maximum if maximum is not None else final_score(result))


def _csv(rows: list[list[str]]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    # Excel reads a CSV without a BOM as the local code page; Canvas and Moodle both skip it.
    return "\ufeff" + buffer.getvalue()


def _owners(results: list[dict], matched: Match) -> dict[int, dict]:
    return {s.row: results[i] for i, s in matched.by_result.items()}


def _contested(results: list[dict], matched: Match) -> dict[int, str]:
    """Each roster row that several submissions claim equally: the sentence that says so (its grade stays blank)."""
    said = {}
    for student, claimants in matched.contested:
        names = ", ".join(str(results[i].get("submission", "")) for i in claimants[:5])
        said[student.row] = (
            f"{len(claimants)} submissions claim this student equally ({names}): "
            "the grade is left blank until an instructor decides which is theirs."
        )
    return said


def canvas(roster: Roster, results: list[dict], matched: Match, column: int, missing: str = "zero") -> str:
    owners = _owners(results, matched)
    contested = _contested(results, matched)
    students = {s.row for s in roster.students}
    points = None
    for row in roster.rows:
        if row[roster.column("Student")].strip() == "Points Possible":
            points = parse_number(row[column])
    out = [[_cell(h) for h in roster.header]]
    for i, row in enumerate(roster.rows):
        cells = [_cell(c) for c in row]
        if i in students:
            cells[column] = "" if i in contested else _score_for(owners.get(i), points, missing)
        out.append(cells)
    return _csv(out)


def moodle(
    roster: Roster, results: list[dict], matched: Match, comments: dict[int, str], missing: str = "zero"
) -> tuple[str, list[str]]:
    """The worksheet, and warnings (rows whose grade is locked, or has no numeric maximum)."""
    owners = _owners(results, matched)
    contested = _contested(results, matched)
    by_row = {s.row: s for s in roster.students}
    grade, feedback = roster.column("Grade"), _optional(roster, "Feedback comments")
    locked = _optional(roster, "Grade can be changed")
    out = [[_cell(h) for h in roster.header]]
    warnings = []
    for i, row in enumerate(roster.rows):
        cells = [_cell(c) for c in row]
        student = by_row.get(i)
        if student is not None and locked is not None and row[locked].strip().casefold() == "no":
            warnings.append(f"{student.name or student.lms_id}: Moodle says the grade cannot be changed; row left as it was")
        elif student is not None:
            if student.maximum is None:
                warnings.append(f"{student.name or student.lms_id}: Maximum Grade is not a number (a scale?); grade left blank")
                cells[grade] = ""
            else:
                cells[grade] = "" if i in contested else _score_for(owners.get(i), student.maximum, missing)
            if feedback is not None:
                # Moodle keeps feedback comments as HTML: student text in it must not become markup.
                text = contested.get(i) or comments.get(i, NO_SUBMISSION if i not in owners else "")
                cells[feedback] = for_csv(html.escape(text, quote=False))
        out.append(cells)
    return _csv(out), warnings


def _optional(roster: Roster, name: str) -> int | None:
    return roster.header.index(name) if name in roster.header else None


def plain(roster: Roster, results: list[dict], matched: Match, missing: str = "zero") -> str:
    owners = _owners(results, matched)
    contested = {student.row: claimants for student, claimants in matched.contested}
    out = [list(PLAIN_COLUMNS)]
    for s in roster.students:
        r = owners.get(s.row)
        late = ((r or {}).get("student") or {}).get("late")
        if s.row in contested:  # no score until an instructor decides which submission is theirs
            names = " | ".join(str(results[i].get("submission", "")) for i in contested[s.row])
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
                    _score_for(r, None, missing),
                    f"{r['max_score']:g}" if r else "",
                    (r or {}).get("status", "") if r else "missing",
                    "" if late is None else str(bool(late)).lower(),
                    str(r.get("submission", "")) if r else "",
                    " | ".join(describe(e) for e in (r or {}).get("adjustments", [])),
                )
            ]
        )
    return _csv(out)


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
