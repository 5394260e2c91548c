"""Benchmark of --roster and --adjust: matching, adjusting and writing the LMS files for a large class.

    .venv/bin/python bench/bench_passback.py [--size 1000] [--rounds 3]

A made-up class (tests/big_class.py) and a made-up Canvas gradebook and Moodle worksheet for
it (every student but one in ten on the roster, one in twenty submissions matching nobody),
with an adjustments file of one change per diagnosis and one per tenth student. Times
`passback.apply` and `passback.write` (the gradebook, unmatched.csv, two feedback files per
student, Moodle's zip), against `write_outputs` (results.json, grades.csv, Gradescope files,
the report) in the same round: the ratio is the steadier figure on a shared machine.
Prints a table and writes bench/out/bench_passback.json.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import statistics
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader.core import exercise
from grader.core.adjustments import parse_plan
from grader.core.results import ClassRun
from grader.judging import passback
from grader.lms.registry import parse_roster
from grader.reports.files import write_outputs

EXERCISE = exercise.load(ROOT)
from tests.big_class import big_class


def rosters(subs: list[dict]) -> dict[str, bytes]:
    canvas, moodle = io.StringIO(), io.StringIO()
    c, m = csv.writer(canvas), csv.writer(moodle)
    c.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Quiz (1)", "METEOR score (2)", "Current Score"])
    c.writerow(["    Points Possible", "", "", "", "", "10", "50", "(read only)"])
    m.writerow(
        [
            "Identifier",
            "Full name",
            "Email address",
            "Status",
            "Grade",
            "Maximum Grade",
            "Grade can be changed",
            "Last modified (submission)",
            "Last modified (grade)",
            "Feedback comments",
        ]
    )
    for i, s in enumerate(subs):
        if i % 20 == 19:
            continue  # a submission matching nobody
        stem = s["submission"][:-3]
        c.writerow([stem, str(1000 + i), f"S{i}", stem, "A", "7", "", "70"])
        m.writerow([f"Participant {1000 + i}", stem, f"s{i}@example.edu", "Submitted", "", "100.00", "Yes", "", "-", ""])
    for i in range(len(subs) // 10):  # students without a submission
        c.writerow([f"Absent {i}", str(900000 + i), "", f"absent{i}", "A", "", "", ""])
        m.writerow([f"Participant {900000 + i}", f"Absent {i}", "", "No submission", "", "100.00", "Yes", "", "-", ""])
    return {"canvas": canvas.getvalue().encode(), "moodle": moodle.getvalue().encode()}


def plan_for(run: ClassRun):
    mistakes = sorted({s.diagnosis.key for s in run.submissions if s.diagnosis is not None})
    text = "".join(f'[diagnosis."{m}"]\ncomment = "About {m}."\nchange = 1\n' for m in mistakes)
    text += "".join(f'[[student]]\nwho = "{s.submission}"\nchange = -2\nreason = "late"\n' for s in run.submissions[::10])
    return parse_plan(tomllib.loads(text))


def one_round(run: ClassRun, roster: bytes, plan) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder)
        started = time.perf_counter()
        pb = passback.Passback(roster=parse_roster(roster), plan=plan)
        if pb.roster.kind == "canvas":
            pb.column = pb.roster.header.index("METEOR score (2)")
        run, matched = passback.apply(run, pb)
        applied = time.perf_counter()
        run = passback.write(out, run, pb, matched, EXERCISE)
        written = time.perf_counter()
        write_outputs(out, run, EXERCISE)
        outputs = time.perf_counter()
        files = sum(len(f) for _, _, f in os.walk(out / "feedback"))
    return {
        "apply": applied - started,
        "write": written - applied,
        "outputs": outputs - written,
        "feedback_files": files,
        "matched": run.lms.matched if run.lms else 0,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    document = big_class(args.size)
    subs = document["submissions"]
    run = ClassRun.from_json(document)
    plan = plan_for(run)
    table = {}
    for kind, roster in rosters(subs).items():
        rounds = [one_round(run, roster, plan) for _ in range(args.rounds)]
        table[kind] = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
    load = os.getloadavg()[0]
    print(f"{args.size} submissions, median of {args.rounds} rounds, load average {load:.2f}")
    print("| roster | match + adjust | LMS files | write_outputs (same round) | ratio | feedback files |")
    print("| --- | --- | --- | --- | --- | --- |")
    for kind, row in table.items():
        print(
            f"| {kind} | {row['apply']:.3f} s | {row['write']:.3f} s | {row['outputs']:.3f} s | "
            f"{(row['apply'] + row['write']) / row['outputs']:.2f} | {row['feedback_files']:.0f} |"
        )
    (ROOT / "bench" / "out").mkdir(exist_ok=True)
    (ROOT / "bench" / "out" / "bench_passback.json").write_text(
        json.dumps({"size": args.size, "load": load, "table": table}, indent=2)
    )


if __name__ == "__main__":
    main()
