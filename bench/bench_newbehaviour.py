"""Benchmark: worker time for one new behaviour (answers the memo has never seen), passing and failing.

    .venv/bin/python bench/bench_newbehaviour.py [--rounds 1] [--profile passing|failing] [--only NAME]

Grades in this process, as a grading worker does (`Grader.grade`, its jail, its memo):
- passing: each correct style of the catalogue, with an empty memo (every test runs through pytest);
- failing: each wrong solution of the catalogue, with a memo that learned the reference's run
  (the walk finds the new answers, those tests run through pytest, then the check and the diagnosis).
Each submission is graded with property replay off (KIT_REPLAY=0), on, and on with the smallest
drawn counterexample (KIT_COUNTEREXAMPLE=smallest-drawn), interleaved, so the figures come from
the same minutes of this shared machine. Wall and CPU seconds of the worker's process. Writes bench/out/bench_newbehaviour.json.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader.judging.discovery import discover
from grader.judging.grade import Grader, Settings
from grader.judging.partial_run import catalogue, prepare_before_fork

CATALOGUE = ROOT / "tests" / "catalogue"
# (KIT_REPLAY, KIT_COUNTEREXAMPLE): before, replay, and replay with the smallest drawn counterexample.
MODES = {"off": ("0", "shrunk"), "on": ("1", "shrunk"), "smallest": ("1", "smallest-drawn")}


def seeded_grader(settings: Settings, tests, learned: list) -> Grader:
    grader = Grader(settings, tests)
    for item in learned:
        grader.memo.learn(item)
    return grader


def grade_once(
    settings: Settings, tests, learned: list, spec, mode: str, profile: cProfile.Profile | None = None
) -> tuple[float, float]:
    """Wall and CPU seconds of this (the worker's) process for one grade."""
    os.environ["KIT_REPLAY"], os.environ["KIT_COUNTEREXAMPLE"] = MODES[mode]
    grader = seeded_grader(settings, tests, learned)
    try:
        started, cpu = time.perf_counter(), time.process_time()
        if profile is not None:
            profile.enable()
        grader.grade(spec)
        if profile is not None:
            profile.disable()
        return time.perf_counter() - started, time.process_time() - cpu
    finally:
        grader.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--profile", choices=("passing", "failing"), help="print a cProfile of that kind, replay off and on")
    parser.add_argument("--only", help="only submissions whose file name contains this")
    args = parser.parse_args()
    prepare_before_fork()
    tests = catalogue()
    settings = Settings(timeout=1.0, budget=5.0)
    reference = discover([str(ROOT / "solutions" / "reference.py")])[0]
    warm = Grader(settings, tests)
    _, learned = warm.grade(reference)
    warm.close()
    kinds = {
        "passing": (sorted((CATALOGUE / "correct").glob("*.py")), []),
        "failing": (sorted((CATALOGUE / "wrong").glob("*.py")), learned),
    }
    figures: dict = {"load_before": os.getloadavg()[0], "cores": os.cpu_count()}
    for kind, (paths, memo) in kinds.items():
        if args.only:
            paths = [p for p in paths if args.only in p.name]
        specs = [discover([str(p)])[0] for p in paths]
        times: dict[str, list[float]] = {mode: [] for mode in MODES}
        cpus: dict[str, list[float]] = {mode: [] for mode in MODES}
        profiles = {mode: cProfile.Profile() for mode in MODES} if args.profile == kind else {}
        for _ in range(args.rounds):
            for spec in specs:
                for mode in MODES:
                    wall, cpu = grade_once(settings, tests, memo, spec, mode, profiles.get(mode))
                    times[mode].append(wall)
                    cpus[mode].append(cpu)
        figures[kind] = {
            "submissions": len(specs),
            **{f"median_{m}_s": round(statistics.median(t), 3) for m, t in times.items() if t},
            **{f"median_cpu_{m}_s": round(statistics.median(t), 3) for m, t in cpus.items() if t},
        }
        if times["off"]:
            for mode in ("on", "smallest"):
                figures[kind][f"ratio_{mode}_median"] = round(statistics.median(times[mode]) / statistics.median(times["off"]), 2)
                figures[kind][f"ratio_{mode}_median_cpu"] = round(
                    statistics.median(cpus[mode]) / statistics.median(cpus["off"]), 2
                )
        for mode, profile in profiles.items():
            print(f"--- {kind}, replay {mode}")
            pstats.Stats(profile).sort_stats("cumulative").print_stats(45)
    figures["load_after"] = os.getloadavg()[0]
    print(json.dumps(figures, indent=2))
    out = ROOT / "bench" / "out"
    out.mkdir(exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=out, delete=False) as f:
        f.write(json.dumps(figures, indent=2) + "\n")
    os.replace(f.name, out / "bench_newbehaviour.json")


if __name__ == "__main__":
    main()
