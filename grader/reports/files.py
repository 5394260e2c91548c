"""The files a class grading leaves in --out, each replaced atomically: never seen half-written."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import tempfile
from pathlib import Path

from grader.core.safe_text import clean, for_csv, safe_name
from grader.reports.adjust import describe, final_score
from grader.reports.gradescope import to_gradescope

CSV_COLUMNS = ("submission", "score", "max_score", "status", "passed", "tests")
# Who each row is, after the columns above so that readers of the old ones still work (grader/lms.py).
IDENTITY_COLUMNS = ("name", "lms_id", "login", "email", "late", "submitted_at", "layout", "path", "note")


def write_atomic(path: Path, text: str | bytes) -> None:
    """Write a sibling temporary file, then rename it over `path` (rename is atomic). Bytes are written as they are."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.fchmod(fd, 0o666 & ~_umask())  # mkstemp's 0600 would hide the results from other readers
    try:
        with os.fdopen(fd, "wb") if isinstance(text, bytes) else os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def _umask() -> int:
    """The process's umask (reading it means setting it: set it straight back)."""
    umask = os.umask(0)
    os.umask(umask)
    return umask


def grades_csv(results: list[dict]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    # Columns are only added: who each row is (always, so its columns never move), then the adjusted
    # score and its reasons when --adjust changed any.
    adjusted = any("adjustments" in r for r in results)
    writer.writerow(CSV_COLUMNS + IDENTITY_COLUMNS + (("adjusted_score", "adjustments") if adjusted else ()))
    for r in results:
        row = [
            for_csv(r["submission"]),
            f"{r['score']:g}",
            f"{r['max_score']:g}",
            for_csv(r["status"]),
            r["passed"],
            len(r["tests"]),
        ]
        row += _identity_cells(r)
        if adjusted:
            row += [f"{final_score(r):g}", for_csv(" | ".join(describe(e) for e in r.get("adjustments", [])))]
        writer.writerow(row)
    return buffer.getvalue()


def _identity_cells(result: dict) -> list[str]:
    student = result.get("student") or {}
    cells = []
    for column in IDENTITY_COLUMNS[:-1]:
        value = student.get(column)
        cells.append("" if value is None else ("true" if value is True else "false" if value is False else for_csv(str(value))))
    return cells + [for_csv(str(result.get("note") or ""))]


def write_outputs(out: Path, document: dict) -> None:
    # Student text may hold lone surrogates, which no UTF-8 file can store: one such string
    # must not stop the class's files from being written.
    document = clean(document)
    out.mkdir(parents=True, exist_ok=True)
    results = document["submissions"]
    # The class report is the slowest file to make: a second process renders it meanwhile.
    try:
        reporter = os.fork()
    except OSError:
        reporter = None
    if reporter == 0:
        try:
            _write_report(out, document)
        except BaseException:
            os._exit(1)
        os._exit(0)
    # Gradescope files go into a new tree that replaces the old one in one rename, so a
    # regrade never mixes this run's files with those of a submission no longer graded.
    staging = Path(tempfile.mkdtemp(prefix=".gradescope.", dir=out))
    staging.chmod(0o777 & ~_umask())  # mkdtemp's 0700 would hide the results from other readers
    used: set[str] = set()
    for r in results:
        name = safe_name(r["submission"])
        while name in used:
            name += "_"
        used.add(name)
        (staging / name).mkdir()
        (staging / name / "results.json").write_text(json.dumps(_gradescope(r)), encoding="utf-8")
    target = out / "gradescope"
    if target.exists():
        old = Path(tempfile.mkdtemp(prefix=".gradescope-old.", dir=out))
        os.replace(target, old / "gradescope")
        os.replace(staging, target)
        shutil.rmtree(old)
    else:
        os.replace(staging, target)
    write_atomic(out / "grades.csv", grades_csv(results))
    if reporter is None or os.waitpid(reporter, 0)[1] != 0:
        _write_report(out, document)  # no second process, or it failed: here, then
    # Last: results.json is what other tools wait for.
    write_atomic(out / "results.json", results_json(document))


def _gradescope(result: dict) -> dict:
    """Gradescope's result, with the adjusted score and its reasons where --adjust changed it."""
    shown = to_gradescope(result)
    if "adjusted_score" in result:
        shown["score"] = final_score(result)
        lines = "\n".join(f"- {describe(e)}" for e in result["adjustments"])
        shown["output"] = clean(f"{shown['output']}\n\nThe tests gave {result['score']:g}; adjusted:\n{lines}")
    return shown


def results_json(document: dict) -> str:
    """The document with one submission per line: `grep NAME` finds a student's whole result.

    Indented JSON goes through Python's pure-Python encoder, which took a third of a second
    for a class of 500; one line per submission uses the C encoder.
    """
    head = {k: v for k, v in document.items() if k != "submissions"}
    lines = [f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
    rows = ",\n".join(f"    {json.dumps(r)}" for r in document["submissions"])
    return "{\n" + "\n".join(lines) + '\n  "submissions": [\n' + rows + ("\n" if rows else "") + "  ]\n}\n"


def _write_report(out: Path, document: dict) -> None:
    """report.html and report/, one page per student."""
    from grader.reports import class_report

    class_report.write(out, document, write_atomic)
