"""The files a class grading leaves in --out, each replaced atomically: never seen half-written."""

from __future__ import annotations

import csv
import io
import json
import os
from dataclasses import replace
from pathlib import Path

from grader.core.exercise import Exercise
from grader.core.results import ClassRun, SubmissionResult, Unwritten
from grader.core.safe_text import clean, for_csv, safe_name, unique_name
from grader.reports.atomic import attempt, replace_folder, sweep, write_atomic
from grader.reports.gradescope import to_gradescope

CSV_COLUMNS = ("submission", "score", "max_score", "status", "passed", "tests")
# Who each row is, after the columns above so that readers of the old ones still work (grader/lms/adapter.py's Identity).
IDENTITY_COLUMNS = ("name", "lms_id", "login", "email", "late", "submitted_at", "layout", "path", "note")
# The folders of --out that each run replaces whole (grader/judging/intake.py refuses submissions inside them).
REPLACED = ("gradescope", "report")


def grades_csv(results: list[SubmissionResult]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    # Columns are only added: who each row is (always, so its columns never move), then the adjusted
    # score and its reasons when --adjust changed any.
    adjusted = any(r.adjustments is not None for r in results)
    writer.writerow(CSV_COLUMNS + IDENTITY_COLUMNS + (("adjusted_score", "adjustments") if adjusted else ()))
    for r in results:
        row = [for_csv(r.submission), f"{r.score:g}", f"{r.max_score:g}", for_csv(r.status), r.passed, len(r.tests)]
        row += _identity_cells(r)
        if adjusted:
            row += [f"{r.final_score:g}", for_csv(" | ".join(a.describe() for a in r.adjustments or []))]
        writer.writerow(row)
    return buffer.getvalue()


def _identity_cells(result: SubmissionResult) -> list[str]:
    """IDENTITY_COLUMNS' cells: who the student is (blank where the download does not say), then the note."""
    who = result.student
    values = (
        (who.name, who.lms_id, who.login, who.email, who.late, who.submitted_at, who.layout, who.path) if who else (None,) * 8
    )
    cells = ["" if v is None else ("true" if v is True else "false" if v is False else for_csv(str(v))) for v in values]
    return cells + [for_csv(result.note)]


def write_outputs(out: Path, run: ClassRun, ex: Exercise) -> list[Unwritten]:
    """Every file of the class graded on `ex` into `out`; what could not be written, each with its error.

    A writer that fails (a disk full, a name the file system refuses) costs its own file only:
    the others are written, its error goes into the report, results.json and the summary, and
    results.json is written last, whatever failed before it.
    """
    from grader.reports import class_report

    # Student text may hold lone surrogates, which no UTF-8 file can store: one such string
    # must not stop the class's files from being written. (ClassRun.from_json makes text valid.)
    document = run.as_json()
    cleaned = clean(document)
    if cleaned is not document:
        run = ClassRun.from_json(cleaned)
    out.mkdir(parents=True, exist_ok=True)
    sweep(out)
    unwritten = list(run.unwritten or [])  # from the LMS files, written before
    results = run.submissions
    # The student pages are the slowest files to make: a second process writes them meanwhile.
    try:
        reporter = os.fork()
    except OSError:
        reporter = None
    if reporter == 0:
        try:
            _write_pages(out, run, ex.title)
        except BaseException:
            os._exit(1)
        os._exit(0)
    attempt(
        unwritten, "gradescope/", lambda: replace_folder(out / "gradescope", lambda into: _write_gradescope(into, results, ex))
    )
    attempt(unwritten, "grades.csv", lambda: write_atomic(out / "grades.csv", grades_csv(results)))
    rows = [json.dumps(r) for r in document["submissions"]] if cleaned is document else None  # results.json's, meanwhile
    if reporter is None or os.waitpid(reporter, 0)[1] != 0:
        sweep(out)  # what a killed second process left
        attempt(unwritten, "report/", lambda: _write_pages(out, run, ex.title))  # no second process, or it failed: here, then
    # report.html after every other writer, so that it names any that failed.
    shown = replace(run, unwritten=unwritten or None)
    attempt(unwritten, "report.html", lambda: write_atomic(out / "report.html", class_report.render(shown, ex.title)))
    # Last: results.json is what other tools wait for.
    write_atomic(out / "results.json", results_json(replace(run, unwritten=unwritten or None), rows))
    return unwritten


def _write_gradescope(folder: Path, results: list[SubmissionResult], ex: Exercise) -> None:
    """One folder per submission holding Gradescope's results.json."""
    used: set[str] = set()
    for r in results:
        name = unique_name(safe_name(r.submission), used)
        (folder / name).mkdir()
        (folder / name / "results.json").write_text(json.dumps(to_gradescope(r, ex)), encoding="utf-8")


def _write_pages(out: Path, run: ClassRun, title: str) -> None:
    """report/, one page per student (the folder of pages report.html links to); `title`: the exercise's."""
    from grader.reports import class_report

    def fill(folder: Path) -> None:
        for name, page in class_report.pages(run, title).items():
            (folder / name).write_text(page, encoding="utf-8")

    replace_folder(out / class_report.PAGES, fill)


def write_report(out: Path, run: ClassRun, title: str) -> None:
    """report/ and report.html, in this process; `title`: the exercise's."""
    from grader.reports import class_report

    _write_pages(out, run, title)
    write_atomic(out / "report.html", class_report.render(run, title))


def results_json(run: ClassRun, rows: list[str] | None = None) -> str:
    """results.json: the document with one submission per line, so that `grep NAME` finds a student's whole result.

    Indented JSON goes through Python's pure-Python encoder, which took a third of a second
    for a class of 500; one line per submission uses the C encoder. `rows`: those lines, made already.
    """
    document = (replace(run, submissions=[]) if rows is not None else run).as_json()
    head = {k: v for k, v in document.items() if k != "submissions"}
    lines = [f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
    body = ",\n".join(f"    {r}" for r in (rows if rows is not None else map(json.dumps, document["submissions"])))
    return "{\n" + "\n".join(lines) + '\n  "submissions": [\n' + body + ("\n" if body else "") + "  ]\n}\n"
