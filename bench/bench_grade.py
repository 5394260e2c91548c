"""Benchmark of `meteor-kit grade`: a generated class, graded with --jobs 2, against the obvious loop.

    .venv/bin/python bench/bench_grade.py [--size 500] [--sample 12] [--timeout 1] [--budget 5]

The class mixes correct solutions, wrong ones (a few common bugs, as a class has) and a few
that hang. Both figures come from the same run on the same machine, so their ratio holds
even when the machine is busy. Prints a table and writes bench/out/bench_grade.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CATALOGUE = ROOT / "tests" / "catalogue"
BIN = Path(sys.executable).parent

# The bugs students make most often in this exercise (a class has a handful, not fifty).
COMMON_BUGS = [
    "no_lowercase",
    "no_clipping",
    "no_rounding",
    "split_on_space",
    "penalty_not_subtracted",
    "crash_on_empty",
    "chunks_in_reference",
    "two_decimals",
    "p_r_swapped",
    "truncation",
]
HANGERS = {
    "spins": "def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n    while True:\n        pass\n",
    "ignores_signals": (
        "import signal\nfor s in (signal.SIGTERM, signal.SIGINT, signal.SIGALRM, signal.SIGXCPU):\n"
        "    signal.signal(s, signal.SIG_IGN)\n\n"
        "def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n    while True:\n        pass\n"
    ),
    "sleeps": "import time\n\ndef meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n    time.sleep(3600)\n",
}


def make_class(directory: Path, size: int, seed: int = 1) -> dict[str, int]:
    """Write `size` submissions: about 60% correct, 39% wrong, and 3 that hang."""
    rng = random.Random(seed)
    correct = sorted((CATALOGUE / "correct").glob("*.py")) + [ROOT / "solutions" / "reference.py"]
    wrong = [CATALOGUE / "wrong" / f"{name}.py" for name in COMMON_BUGS]
    counts = {"correct": 0, "wrong": 0, "hangs": 0}
    hang_at = set(rng.sample(range(size), min(len(HANGERS), size)))
    hangers = iter(HANGERS.values())
    for i in range(size):
        if i in hang_at:
            kind, text = "hangs", next(hangers)
        elif rng.random() < 0.6:
            kind, text = "correct", rng.choice(correct).read_text()
        else:
            kind, text = "wrong", rng.choice(wrong).read_text()
        counts[kind] += 1
        # Every file differs in its text, as students' files do.
        (directory / f"student_{i:04d}.py").write_text(f"# student {i}: {rng.random()}\n{text}")
    return counts


class PeakMemory:
    """The largest total resident memory of a process and all its descendants, sampled."""

    def __init__(self, pid: int):
        self.pid, self.peak, self._stop = pid, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            self.peak = max(self.peak, tree_rss(self.pid))

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


def tree_rss(root: int) -> int:
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(entry)
        children.setdefault(int(fields[1]), []).append(pid)
        rss[pid] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack += children.get(pid, [])
    return total


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=500)
    parser.add_argument("--sample", type=int, default=12, help="submissions timed with the pytest loop")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=1.0)
    parser.add_argument("--budget", type=float, default=5.0)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench_grade."))
    try:
        klass = work / "class"
        klass.mkdir()
        counts = make_class(klass, args.size)
        out = work / "out"
        command = [
            str(BIN / "meteor-kit"),
            "grade",
            str(klass),
            "--out",
            str(out),
            "--jobs",
            str(args.jobs),
            "--timeout",
            str(args.timeout),
            "--budget",
            str(args.budget),
        ]
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        memory = PeakMemory(process.pid)
        summary = process.communicate()[0]
        grade_seconds = time.perf_counter() - started
        peak = memory.stop()
        results = json.loads((out / "results.json").read_text())["submissions"]
        # The obvious alternative: one pytest process per submission, on a sample of the same class.
        sample = sorted(klass.iterdir())
        sample = [p for p in sample if "while True" not in p.read_text() and "sleep(3600)" not in p.read_text()]
        sample = random.Random(2).sample(sample, min(args.sample, len(sample)))
        started = time.perf_counter()
        for path in sample:
            subprocess.run(
                [
                    str(BIN / "python"),
                    "-m",
                    "pytest",
                    str(ROOT / "hidden_tests"),
                    "-q",
                    "-p",
                    "no:cacheprovider",
                    "--submission",
                    str(path),
                ],
                cwd=ROOT,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        loop_seconds = (time.perf_counter() - started) / len(sample)
        figures = {
            "submissions": args.size,
            "mix": counts,
            "jobs": args.jobs,
            "timeout": args.timeout,
            "budget": args.budget,
            "cores": os.cpu_count(),
            "grade_seconds": round(grade_seconds, 2),
            "grade_per_second": round(args.size / grade_seconds, 1),
            "pytest_loop_seconds_per_submission": round(loop_seconds, 2),
            "pytest_loop_per_second": round(1 / loop_seconds, 2),
            "ratio": round((args.size / grade_seconds) * loop_seconds, 1),
            "peak_memory_mb": round(peak / 2**20),
            "statuses": {s: sum(r["status"] == s for r in results) for s in ("graded", "error")},
        }
        # Where the time went: submissions answered wholly from the memo, and the others (new
        # behaviour, run through pytest; and the ones that hang), in seconds of worker time.
        tests = len(results[0]["tests"])
        hung = [any(t["status"] == "timeout" for t in r["tests"]) for r in results]
        remembered = [r["duration"] for r, h in zip(results, hung) if r.get("from_memo") == tests and not h]
        new = [r["duration"] for r, h in zip(results, hung) if r.get("from_memo", 0) < tests and not h]
        hangs = [r["duration"] for r, h in zip(results, hung) if h]
        figures["all_from_memo"] = {
            "submissions": len(remembered),
            "mean_ms": round(1000 * sum(remembered) / max(len(remembered), 1), 1),
        }
        figures["new_behaviour"] = {"submissions": len(new), "worker_seconds": round(sum(new), 1)}
        figures["hanging"] = {"submissions": len(hangs), "seconds_each": [round(h, 1) for h in hangs]}
        print(summary.splitlines()[0])
        for key, value in figures.items():
            print(f"{key:>36}: {value}")
        (ROOT / "bench" / "out").mkdir(exist_ok=True)
        (ROOT / "bench" / "out" / "bench_grade.json").write_text(json.dumps(figures, indent=2) + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
