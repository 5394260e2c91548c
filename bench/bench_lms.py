"""Benchmark of reading an LMS download: unpacking its zip and finding each student's file, before any grading.

    .venv/bin/python bench/bench_lms.py [--students 1000] [--rounds 3]

A made-up Canvas download (each student: a solution, a helper, a test file and an older upload)
and a Moodle one (a folder each, the same files) are zipped; each round times, in this process:
unpacking the zip (grader/judging/archive.py), recognising the layout and picking each student's file
(grader/judging/intake.py, which parses candidates with ast), and for comparison `discover` on a plain
folder of one file per student, as the kit did before. Medians of the rounds; the figures
are compared as ratios within one run (the machine is shared). Writes bench/out/bench_lms.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader.judging.archive import unpack, unpacked
from grader.judging.discovery import discover
from grader.judging.intake import discover_all

SOLUTION = (ROOT / "tests" / "catalogue" / "correct" / "functional.py").read_text()
HELPER = "def tokenize(text):\n    return text.lower().split()\n"
TEST = "def test_x():\n    assert True\n"


def canvas_files(students: int) -> dict[str, str]:
    files = {}
    for i in range(students):
        prefix = f"student{i:05d}{'_LATE' if i % 7 == 0 else ''}_{10000 + i}_{90000 + i}_"
        files[prefix + "meteor.py"] = SOLUTION
        files[prefix + "meteor-1.py"] = SOLUTION
        files[prefix + "tokens.py"] = HELPER
        files[prefix + "test_meteor.py"] = TEST
    return files


def moodle_files(students: int) -> dict[str, str]:
    files = {}
    for i in range(students):
        folder = f"Student Number{i:05d}_{20000 + i}_assignsubmission_file_/"
        files[folder + "meteor.py"] = SOLUTION
        files[folder + "tokens.py"] = HELPER
        files[folder + "test_meteor.py"] = TEST
    return files


def write_zip(path: Path, files: dict[str, str]) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in files.items():
            z.writestr(name, text)


def timed(action) -> tuple[float, object]:
    started = time.perf_counter()
    value = action()
    return time.perf_counter() - started, value


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--students", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    figures: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        plain = work / "plain"
        plain.mkdir()
        for i in range(args.students):
            (plain / f"student{i:05d}.py").write_text(SOLUTION)
        for layout, files in (("canvas", canvas_files(args.students)), ("moodle", moodle_files(args.students))):
            write_zip(work / f"{layout}.zip", files)
        for _ in range(args.rounds):
            for layout in ("canvas", "moodle"):
                target = tempfile.mkdtemp(dir=scratch)
                seconds, _ = timed(lambda: unpack(str(work / f"{layout}.zip"), target))
                shutil.rmtree(target)
                figures.setdefault(f"{layout}: unpack the zip", []).append(seconds)
                # For scale only (never used by the kit): zipfile's own extractall of the same zip.
                target = tempfile.mkdtemp(dir=scratch)
                seconds, _ = timed(lambda: zipfile.ZipFile(work / f"{layout}.zip").extractall(target))
                shutil.rmtree(target)
                figures.setdefault(f"{layout}: zipfile.extractall, for scale", []).append(seconds)
                with unpacked(str(work / f"{layout}.zip")) as download:
                    roots = {str(work / f"{layout}.zip"): (download.root, download.skipped)}
                    seconds, specs = timed(
                        lambda: discover_all([str(work / f"{layout}.zip")], None, lambda _: None, "meteor_score", None, roots)
                    )
                    assert len(specs) == args.students and all(s.helpers for s in specs)
                figures.setdefault(f"{layout}: recognise and pick ({args.students} students)", []).append(seconds)
            seconds, specs = timed(lambda: discover([str(plain)]))
            assert len(specs) == args.students
            figures.setdefault(f"plain folder: discover ({args.students} files)", []).append(seconds)
    medians = {k: statistics.median(v) for k, v in figures.items()}
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    for key, value in medians.items():
        print(f"{key:55} {value * 1000:8.0f} ms")
    out = ROOT / "bench" / "out"
    out.mkdir(exist_ok=True)
    (out / "bench_lms.json").write_text(json.dumps({"medians_s": medians, "load": load, "students": args.students}, indent=1))


if __name__ == "__main__":
    main()
