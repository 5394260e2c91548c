"""Benchmark: worker time for one new behaviour (answers the memo has never seen), passing and failing.

    .venv/bin/python bench/bench_newbehaviour.py [--rounds 1] [--profile passing|failing|diverse] [--only NAME]
    .venv/bin/python bench/bench_newbehaviour.py --diverse 40 [--profile diverse]

Grades in this process, as a grading worker does (`Grader.grade`, its jail, its memo):
- passing: each correct style of the catalogue, with an empty memo (every test runs through pytest);
- failing: each wrong solution of the catalogue, with a memo that learned the reference's run
  (the walk finds the new answers, those tests run through pytest, then the check and the diagnosis).
Each submission is graded with property replay off (KIT_REPLAY=0), on, and on with the smallest
drawn counterexample (KIT_COUNTEREXAMPLE=smallest-drawn), interleaved, so the figures come from
the same minutes of this shared machine. Wall and CPU seconds of the worker's process. Writes bench/out/bench_newbehaviour.json.

`--diverse N`: instead, N mutants of the diverse class (bench/mutants.py, the class bench_grade.py
grades), each graded as it comes, replay on and the default counterexample, with a memo that
learned the reference's run only; the time is split into the grader's phases (the walk, the
partial run through pytest, hypothesis's shrinking inside it, the memo's check, the diagnosis)
and the jail's round trips, summed over the mutants. Writes bench/out/bench_newbehaviour_diverse.json.
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
from collections import defaultdict
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import mutants  # bench/mutants.py: the script's own folder is first on sys.path

from grader.core import exercise, replay, runner
from grader.judging import grade as grader_module
from grader.judging.discovery import discover
from grader.judging.grade import Grader, Settings, runs_for
from grader.judging.memoized import Memoized
from grader.judging.memoized import memo as memo_module
from grader.judging.partial_run import catalogue, prepare_before_fork
from grader.sandbox import batch, host

CATALOGUE = ROOT / "tests" / "catalogue"
EXERCISE = exercise.load(ROOT)
# (KIT_REPLAY, KIT_COUNTEREXAMPLE): before, replay, and replay with the smallest drawn counterexample.
MODES = {"off": ("0", "shrunk"), "on": ("1", "shrunk"), "smallest": ("1", "smallest-drawn")}


def seeded_grader(settings: Settings, tests, learned: bytes | None) -> Grader:
    """A grader as a worker has it (its memo), having learned `learned` (Ran.learned)."""
    runs = runs_for(settings, tests)
    if learned and isinstance(runs, Memoized):
        runs.memo.learn_packed(learned)
    return Grader(settings, tests, runs)


def grade_once(
    settings: Settings, tests, learned: bytes | None, spec, mode: str, profile: cProfile.Profile | None = None
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


class Phases:
    """Wall seconds spent in each of the grader's phases, summed, by wrapping the functions that do them."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.counts: dict[str, int] = defaultdict(int)
        self._undo: list[Callable[[], None]] = []
        self._depth: dict[str, int] = defaultdict(int)

    def wrap(self, owner: object, name: str, phase: str, generator: bool = False) -> None:
        original = getattr(owner, name)
        phases = self

        if generator:

            def timed(*args, **kwargs):
                # A batch's time is spent while its answers are read, so the generator is timed per step.
                with phases.timing(phase):
                    inner = original(*args, **kwargs)
                while True:
                    with phases.timing(phase):
                        try:
                            item = next(inner)
                        except StopIteration:
                            return
                    yield item

        else:

            def timed(*args, **kwargs):
                with phases.timing(phase):
                    return original(*args, **kwargs)

        setattr(owner, name, timed)
        self._undo.append(lambda: setattr(owner, name, original))

    @contextmanager
    def timing(self, phase: str):
        self._depth[phase] += 1
        started = time.perf_counter()
        try:
            yield
        finally:
            self._depth[phase] -= 1
            if not self._depth[phase]:  # an outer call of the same phase counts it once
                self.seconds[phase] += time.perf_counter() - started
                self.counts[phase] += 1

    def undo(self) -> None:
        for step in reversed(self._undo):
            step()


EXECUTIONS = "  of it: hypothesis's executions of the test"
ROUND_TRIPS = "round trips to the jail (count only)"


def phases_installed() -> Phases:
    from hypothesis.internal.conjecture import engine

    phases = Phases()
    phases.wrap(memo_module.Memo, "walk", "walk")
    phases.wrap(Memoized, "_run_for_real", "partial run (pytest)")
    phases.wrap(engine.ConjectureRunner, "shrink_interesting_examples", "  of it: hypothesis shrinking")
    phases.wrap(engine.ConjectureRunner, "generate_new_examples", "  of it: hypothesis generating")
    # Each example hypothesis runs (generating or shrinking): its count is the number of executions.
    phases.wrap(engine.ConjectureRunner, "test_function", EXECUTIONS)
    phases.wrap(replay, "run_item", "  of it: property tests (replay, then hypothesis)")
    phases.wrap(memo_module.Recorder, "call", "  of it: calls into the jail, one at a time")
    phases.wrap(Memoized, "_as_a_full_run", "memo check (confirm)")
    phases.wrap(grader_module, "diagnosis_of", "diagnosis")
    phases.wrap(host.SandboxedSubmission, "_spawn", "fresh child (spawn and load)")
    phases.wrap(host.SandboxedSubmission, "evaluate", "jail batches (evaluate)", generator=True)
    # Its count is the round trips (batches sent); its time is nothing (a generator made).
    phases.wrap(batch.Batch, "answers", ROUND_TRIPS)
    return phases


def diverse(args: argparse.Namespace, settings: Settings, tests, learned: bytes | None) -> None:
    """N diverse mutants, each graded with a memo that learned the reference only: where their time goes."""
    os.environ["KIT_REPLAY"], os.environ["KIT_COUNTEREXAMPLE"] = MODES[args.mode]
    work = Path(tempfile.mkdtemp(prefix="bench_nb."))
    mutants.diverse_class(work, args.diverse, args.seed)
    specs = [discover([str(p)])[0] for p in sorted(work.iterdir())]
    if args.only:
        specs = [s for s in specs if args.only in s.name]
    phases = phases_installed()
    profile = cProfile.Profile() if args.profile == "diverse" else None
    rows = []
    load_before = os.getloadavg()
    try:
        for spec in specs:
            grader = seeded_grader(settings, tests, learned)
            before, counts_before = dict(phases.seconds), dict(phases.counts)
            started, cpu = time.perf_counter(), time.process_time()
            try:
                if profile is not None:
                    profile.enable()
                result, _ = grader.grade(spec)
                if profile is not None:
                    profile.disable()
            finally:
                grader.close()
            wall = time.perf_counter() - started
            tests_run = len(result["tests"]) - result.get("from_memo", 0)
            hung = any(t["status"] == "timeout" for t in result["tests"])
            kind = "hangs" if hung else "passing" if result["passed"] == len(result["tests"]) else "failing"
            split = {k: round(v - before.get(k, 0.0), 3) for k, v in phases.seconds.items() if v - before.get(k, 0.0) > 0}
            counted = {k: v - counts_before.get(k, 0) for k, v in phases.counts.items() if v - counts_before.get(k, 0)}
            rows.append(
                {
                    "name": spec.name,
                    "kind": kind,
                    "status": result["status"],
                    "wall": round(wall, 3),
                    "cpu": round(time.process_time() - cpu, 3),
                    "tests_run": tests_run,
                    "split": split,
                    "counts": counted,
                }
            )
            print(f"{spec.name} {kind:8} {wall:6.2f} s  ran {tests_run:3}  {split} {counted}", flush=True)
    finally:
        phases.undo()
    load_after = os.getloadavg()
    new = [r for r in rows if r["tests_run"] > 0 and r["kind"] != "hangs"]
    figures: dict = {
        "mutants": len(rows),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
        "kinds": {k: sum(r["kind"] == k for r in rows) for k in ("passing", "failing", "hangs")},
        "all_from_memo": sum(r["tests_run"] == 0 for r in rows),
        "errors": [r["name"] for r in rows if r["status"] != "graded"],
    }
    for kind in ("passing", "failing", "hangs"):
        picked = [r for r in new if r["kind"] == kind] if kind != "hangs" else [r for r in rows if r["kind"] == "hangs"]
        if not picked:
            continue
        total = sum(r["wall"] for r in picked)
        split: dict[str, float] = defaultdict(float)
        for r in picked:
            for k, v in r["split"].items():
                split[k] += v
        figures[kind] = {
            "submissions": len(picked),
            "median_wall_s": round(statistics.median(r["wall"] for r in picked), 3),
            "median_cpu_s": round(statistics.median(r["cpu"] for r in picked), 3),
            "wall_s": round(total, 2),
            "split_share": {k: round(v / total, 3) for k, v in sorted(split.items(), key=lambda kv: -kv[1])},
        }
        figures[kind]["median_round_trips"] = statistics.median(r["counts"].get(ROUND_TRIPS, 0) for r in picked)
        executions = [r["counts"].get(EXECUTIONS, 0) for r in picked]
        if any(executions):
            # The floor under exact shrinking: hypothesis runs this many examples, each a few ms of its engine.
            figures[kind]["median_hypothesis_executions"] = statistics.median(executions)
            figures[kind]["ms_per_hypothesis_execution"] = round(
                1000 * sum(r["split"].get(EXECUTIONS, 0.0) for r in picked) / sum(executions), 2
            )
    print(json.dumps(figures, indent=2))
    if profile is not None:
        if os.environ.get("BENCH_PROFILE_OUT"):
            profile.dump_stats(os.environ["BENCH_PROFILE_OUT"])  # for pstats' callers and callees
        pstats.Stats(profile).sort_stats(os.environ.get("BENCH_SORT", "cumulative")).print_stats(60)
    write("bench_newbehaviour_diverse.json", {**figures, "rows": rows})


def write(name: str, figures: dict) -> None:
    out = ROOT / "bench" / "out"
    out.mkdir(exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=out, delete=False) as f:
        f.write(json.dumps(figures, indent=2) + "\n")
    os.replace(f.name, out / name)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument(
        "--profile", choices=("passing", "failing", "diverse"), help="print a cProfile of that kind, replay off and on"
    )
    parser.add_argument("--only", help="only submissions whose file name contains this")
    parser.add_argument("--kinds", default="passing,failing", help="which of the catalogue's kinds (not --diverse)")
    parser.add_argument("--diverse", type=int, metavar="N", help="N mutants of the diverse class instead (see above)")
    parser.add_argument("--mode", choices=MODES, default="on", help="--diverse: replay and counterexample (see MODES)")
    parser.add_argument("--seed", type=int, default=1, help="--diverse: the class's seed (bench_grade.py's is 1)")
    args = parser.parse_args()
    for mode in [args.mode] if args.diverse else list(MODES):
        # Each mode's recording made now (the smallest-drawn pool is a recording of its own): one
        # missing when a grade asks for it would mean no replay at all in that mode.
        os.environ["KIT_REPLAY"], os.environ["KIT_COUNTEREXAMPLE"] = MODES[mode]
        replay.ensure(EXERCISE, runner.run)
    prepare_before_fork(EXERCISE)
    tests = catalogue(EXERCISE)
    settings = Settings(EXERCISE, timeout=1.0, budget=5.0)
    reference = discover([str(ROOT / "solutions" / "reference.py")])[0]
    warm = seeded_grader(settings, tests, None)
    _, learned = warm.grade(reference)
    warm.close()
    if args.diverse:
        diverse(args, settings, tests, learned)
        return
    kinds = {
        "passing": (sorted((CATALOGUE / "correct").glob("*.py")), None),
        "failing": (sorted((CATALOGUE / "wrong").glob("*.py")), learned),
    }
    figures: dict = {"load_before": os.getloadavg()[0], "cores": os.cpu_count()}
    for kind, (paths, memo) in kinds.items():
        if kind not in args.kinds.split(","):
            continue
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
    write("bench_newbehaviour.json", figures)


if __name__ == "__main__":
    main()
