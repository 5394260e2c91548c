"""Benchmark of `meteor-kit grade`: a class graded with --jobs 2, against the obvious loop, in the same run.

    .venv/bin/python bench/bench_grade.py [--class memo|diverse|copies] [--size 500] [--sample 12]
                                          [--timeout 1] [--budget 5] [--kit-defaults]
                                          [--variant LABEL=SPEC ... --rounds N] [--without-hanging]

Three shapes of class (bench/mutants.py writes the last two):
- `memo` (the default): correct solutions, a few common bugs, as a class has, and 3 that hang;
  about 20 distinct behaviours, so the memo answers nearly all of it;
- `diverse`: single-point AST mutants of the catalogue's correct solutions, nearly every one
  behaving differently (a hard exercise, a MOOC, a class that copies little);
- `copies`: 43 catalogue solutions (34 one-mistake, 9 correct), 3 copies of each.
The loop of one `pytest hidden_tests --submission F` per file is timed on a random sample of
the same class (it is slow) and scaled to a rate. Both figures come from the same run on the
same machine, so their ratio holds even when the machine is busy. Prints the figures with the
load average, the number of distinct behaviours (distinct verdict vectors) and the machine's CPU
a file while grading (`/proc/stat`: what the grading cost, where the wall-clock time also holds
the moments a core waited), and writes bench/out/bench_grade[_SHAPE].json.

With `--variant`, the class is graded instead by each variant in turn, `--rounds` times,
interleaved (A B, then B A), with no pytest loop: the way to measure one mechanism on and off in
one session. A variant's SPEC is its code, then `;`-separated variables and `grade` options:
`.` (this tree), `rev:REV` (a git revision) or a folder holding the kit's code, as in
`--variant memo=. --variant plain=.;--no-memo --variant shrunk=.;KIT_COUNTEREXAMPLE=shrunk`.
Each variant's results are compared with the first's, and the submissions that differ are
counted by aspect (score, statuses, messages, output, diagnosis): against an older revision a
changed text is not a changed verdict. bench/out/bench_grade_variants_SHAPE.json gets every
round's time and CPU a file, and those submissions.

`--without-hanging` first grades the class once, untimed, and leaves out every file with a
test that timed out: what is left measures the engine, not the CPU that a time limit counted in
CPU time makes each hanging file spend (docs/isolation.md, "What a fresh cell costs").
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import mutants  # bench/mutants.py: the script's own folder is first on sys.path

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
    """The largest total resident memory of a process and all its descendants, sampled every INTERVAL.

    Each sample reads /proc/PID/stat of every process: sampled every 0.05 s, that work took 2-4 %
    of a diverse class's time from the grading (15.2-15.6 s against 15.0 s).
    """

    INTERVAL = 0.5

    def __init__(self, pid: int):
        self.pid, self.peak, self._stop = pid, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.INTERVAL):
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


def write_class(shape: str, directory: Path, size: int) -> dict[str, int]:
    """The class of that shape, in `directory`: what it holds, by kind."""
    if shape == "memo":
        return make_class(directory, size)
    if shape == "diverse":
        return {"mutants": mutants.diverse_class(directory, size)}
    return {"copies": mutants.copies_class(directory)}


def without_hanging(klass: Path, work: Path, options: list[str]) -> list[str]:
    """Remove from the class every file with a test that timed out, graded once by this tree; their names."""
    out = work / "out_hanging"
    grade_class(klass, out, options, None)
    results = json.loads((out / "results.json").read_text())["submissions"]
    hanging = sorted(r["submission"] for r in results if any(t["status"] == "timeout" for t in r["tests"]))
    for name in hanging:
        (klass / name).unlink()
    shutil.rmtree(out, ignore_errors=True)
    return hanging


def pytest_loop(paths: list[Path], budget: float, limit: float) -> float:
    """Seconds per submission for one `pytest hidden_tests --submission F` each (a hanging one stopped at `limit`)."""
    started = time.perf_counter()
    for path in paths:
        command = [str(BIN / "python"), "-m", "pytest", str(ROOT / "hidden_tests"), "-q", "-p", "no:cacheprovider"]
        command += ["--submission", str(path), "--budget", str(budget)]
        try:
            subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=limit)
        except subprocess.TimeoutExpired:
            pass  # subprocess.run has killed it; the loop would have had to as well
    return (time.perf_counter() - started) / len(paths)


def busy() -> float:
    """Seconds the machine's CPUs have been busy since it started, all cores together (/proc/stat).

    Read around a grading, it is the CPU the grading took (and whatever else ran meanwhile): the
    cost a file, where the wall-clock time also holds the moments a core waited for nothing.
    """
    with open("/proc/stat") as f:
        user, nice, system, _idle, _iowait, irq, softirq = map(int, f.readline().split()[1:8])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def grade_class(
    klass: Path, out: Path, options: list[str], kit: Path | None, variables: dict[str, str] | None = None
) -> tuple[float, str, int]:
    """Seconds `meteor-kit grade` took on the class, its summary and peak memory; `kit`: another revision's code."""
    command = [str(BIN / "meteor-kit"), "grade", str(klass), "--out", str(out), *options]
    env = {**os.environ, **variables} if variables else None
    if kit is not None:
        # That revision's package ahead of the installed one (an editable install's finder comes last,
        # and `-c` puts the working directory first: run from the revision's folder).
        entry = "import sys; from grader.cli.main import main; sys.exit(main())"
        command = [str(BIN / "python"), "-c", entry, *command[1:]]
        env = {**os.environ, **(variables or {}), "PYTHONPATH": str(kit)}
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env, cwd=kit or ROOT)
    memory = PeakMemory(process.pid)
    summary = process.communicate()[0]
    seconds = time.perf_counter() - started
    return seconds, summary, memory.stop()


def warm_up(klass: Path, out: Path, options: list[str], kit: Path | None, variables: dict[str, str] | None = None) -> None:
    """Grade one file of the class, untimed, so that neither timed run draws the examples it replays."""
    one = out / "class"
    one.mkdir(parents=True)
    first = sorted(klass.iterdir())[0]
    shutil.copy(first, one / first.name)
    grade_class(one, out / "out", options, kit, variables)


def unpacked(revision: str, into: Path) -> Path:
    """A git revision's code, in `into`."""
    into.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def variant(text: str, work: Path) -> tuple[str, Path | None, dict[str, str], list[str]]:
    """LABEL=SPEC as (label, its code or None for this tree, its variables, its grade options)."""
    label, _, spec = text.partition("=")
    source, *rest = spec.split(";")
    kit = (
        None
        if source in ("", ".")
        else unpacked(source[4:], work / f"kit_{label}")
        if source.startswith("rev:")
        else Path(source)
    )
    variables = dict(part.split("=", 1) for part in rest if part and not part.startswith("-"))
    options = [word for part in rest if part.startswith("-") for word in shlex.split(part)]
    return label, kit, variables, options


ASPECTS = ("score", "status", "message", "output", "diagnosis")


def differences(a: list[dict], b: list[dict]) -> dict[str, list[str]]:
    """The submissions whose score, statuses, messages, printed output or diagnosis differ between two runs, by aspect.

    Against an older revision, what changed on purpose shows here too (a diagnosis that now names
    the failing rules, a private twin drawing other inputs): the aspects tell a changed verdict
    from a changed text."""

    def aspects(result: dict) -> dict[str, object]:
        tests = result["tests"]
        return {
            "score": result["score"],
            "status": (result["status"], [(t["name"], t["status"], t["score"]) for t in tests]),
            "message": (result["message"], [t["message"] for t in tests]),
            "output": [t["output"] for t in tests],
            "diagnosis": result.get("diagnosis"),
        }

    found: dict[str, list[str]] = {aspect: [] for aspect in ASPECTS}
    for x, y in zip(a, b):
        left, right = aspects(x), aspects(y)
        for aspect in ASPECTS:
            if left[aspect] != right[aspect]:
                found[aspect].append(x["submission"])
    return found


def graded_rounds(
    klass: Path, work: Path, options: list[str], variants: list[tuple[str, Path | None, dict[str, str], list[str]]], rounds: int
) -> Iterator[tuple[int, str, float, float, list[dict]]]:
    """Grade the class with each variant (`variant()`), each warmed up first, `rounds` times, interleaved (A B, then
    B A): for each grading as it ends, its round, its variant's label, its seconds, the machine's CPU a file (ms) and
    its results."""
    for label, kit, variables, extra in variants:
        warm_up(klass, work / f"warm_{label}", options + extra, kit, variables)
    size = len(list(klass.iterdir()))
    for round_ in range(rounds):
        for label, kit, variables, extra in variants if round_ % 2 == 0 else variants[::-1]:
            out = work / f"out_{label}_{round_}"
            before = busy()
            took, _, _ = grade_class(klass, out, options + extra, kit, variables)
            cpu_ms = 1000 * (busy() - before) / size
            results = json.loads((out / "results.json").read_text())["submissions"]
            shutil.rmtree(out, ignore_errors=True)
            yield round_, label, took, cpu_ms, results


def compare_variants(args: argparse.Namespace, klass: Path, work: Path, options: list[str]) -> None:
    """Grade the class with each variant, interleaved, `args.rounds` times; print and write the figures."""
    variants = [variant(text, work) for text in args.variant]
    size = len(list(klass.iterdir()))
    seconds: dict[str, list[float]] = {label: [] for label, *_ in variants}
    cpu: dict[str, list[float]] = {label: [] for label, *_ in variants}  # the machine's CPU a file, ms
    differ: dict[str, dict[str, set[str]]] = {}  # by variant, by aspect: the submissions that differ from the first's
    first: list[dict] | None = None
    loads = [round(os.getloadavg()[0], 2)]
    for done, (round_, label, took, cpu_ms, results) in enumerate(graded_rounds(klass, work, options, variants, args.rounds), 1):
        seconds[label].append(round(took, 2))
        cpu[label].append(round(cpu_ms, 1))
        if label == variants[0][0] and first is None:
            first = results
        elif first is not None and label != variants[0][0]:
            seen = differ.setdefault(label, {aspect: set() for aspect in ASPECTS})
            for aspect, names in differences(first, results).items():
                seen[aspect].update(names)
        print(
            f"round {round_ + 1} {label}: {took:.2f} s, {cpu[label][-1]} ms of CPU a file (load {os.getloadavg()[0]:.2f})",
            flush=True,
        )
        if done % len(variants) == 0:
            loads.append(round(os.getloadavg()[0], 2))
    base = statistics.median(seconds[variants[0][0]])
    base_cpu = statistics.median(cpu[variants[0][0]])
    figures = {
        "class": args.shape,
        "submissions": size,
        "without_hanging": args.without_hanging,
        "options": options,
        "rounds": args.rounds,
        "load_average": loads,
        "variants": {
            label: {
                "spec": text.partition("=")[2],
                "seconds": seconds[label],
                "median_seconds": statistics.median(seconds[label]),
                "per_second": round(size / statistics.median(seconds[label]), 2),
                "time_vs_first": round(statistics.median(seconds[label]) / base, 3),
                "cpu_ms_per_file": cpu[label],
                "median_cpu_ms_per_file": round(statistics.median(cpu[label]), 2),
                # Each round's time over the first variant's in the same round: the machine's speed drifts
                # between rounds (the same code took 8.1 and 9.6 s an hour apart), less within one.
                "paired_time_vs_first": round(
                    statistics.median(t / f for t, f in zip(seconds[label], seconds[variants[0][0]])), 3
                ),
                "cpu_vs_first": round(statistics.median(cpu[label]) / base_cpu, 3),
                "results_differ_from_first": sorted(set().union(*differ.get(label, {}).values())),
                "differ_from_first_by_aspect": {a: sorted(differ.get(label, {}).get(a, ())) for a in ASPECTS},
            }
            for (label, *_), text in zip(variants, args.variant)
        },
    }
    for label, row in figures["variants"].items():
        print(
            f"{label:>16}: median {row['median_seconds']:.2f} s ({row['per_second']}/s), {row['time_vs_first']:.3f}x the first's time, "
            f"{row['median_cpu_ms_per_file']} ms of CPU a file ({row['cpu_vs_first']:.3f}x), paired {row['paired_time_vs_first']:.3f}x, "
            f"rounds {row['seconds']}, "
            f"{len(row['results_differ_from_first'])} results differ ("
            + ", ".join(f"{aspect} {len(names)}" for aspect, names in row["differ_from_first_by_aspect"].items())
            + ")"
        )
    (ROOT / "bench" / "out").mkdir(exist_ok=True)
    (ROOT / "bench" / "out" / f"bench_grade_variants_{args.shape}.json").write_text(json.dumps(figures, indent=2) + "\n")


def behaviours(results: list[dict]) -> int:
    """Distinct verdict vectors: submissions whose every test got the same status and score count once."""
    return len({tuple((t["name"], t["status"], t["score"]) for t in r["tests"]) for r in results})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--class", dest="shape", choices=("memo", "diverse", "copies"), default="memo")
    parser.add_argument("--size", type=int, default=500, help="memo and diverse: submissions in the class")
    parser.add_argument("--sample", type=int, default=12, help="submissions timed with the pytest loop")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=1.0)
    parser.add_argument("--budget", type=float, default=5.0)
    parser.add_argument("--kit-defaults", action="store_true", help="grade with the exercise's own timeout and budget")
    parser.add_argument("--baseline", metavar="REV", help="also grade the class with this git revision's code, in the same run")
    parser.add_argument("--variant", action="append", metavar="LABEL=SPEC", help="grade with each variant instead (see above)")
    parser.add_argument("--rounds", type=int, default=2, help="with --variant: rounds of every variant")
    parser.add_argument("--without-hanging", action="store_true", help="leave out the files with a test that timed out")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench_grade."))
    try:
        klass = work / "class"
        klass.mkdir()
        counts = write_class(args.shape, klass, args.size)
        out = work / "out"
        options = ["--jobs", str(args.jobs)]
        if not args.kit_defaults:
            options += ["--timeout", str(args.timeout), "--budget", str(args.budget)]
        if args.without_hanging:
            hanging = without_hanging(klass, work, options)
            counts["left out, hanging"] = len(hanging)
            print(f"left out {len(hanging)} hanging files: {' '.join(hanging)}", flush=True)
        size = len(list(klass.iterdir()))
        if args.variant:
            compare_variants(args, klass, work, options)
            return
        load_before = os.getloadavg()
        baseline = None
        if args.baseline:
            # The same class graded by an earlier revision first, so the two share the machine's minute.
            kit = unpacked(args.baseline, work / "baseline")
            # Untimed first: a fresh copy has no build/cache, and its first grade draws the property
            # tests' examples (seconds, once per kit version) that the working tree has drawn already.
            warm_up(klass, work / "warm_baseline", options, kit)
            before = busy()
            baseline_seconds, _, _ = grade_class(klass, work / "out_baseline", options, kit)
            baseline = {"revision": args.baseline, "grade_seconds": round(baseline_seconds, 2)}
            baseline["grade_cpu_ms_per_file"] = round(1000 * (busy() - before) / size, 1)
            baseline["grade_per_second"] = round(size / baseline_seconds, 2)
        warm_up(klass, work / "warm", options, None)
        before = busy()
        grade_seconds, summary, peak = grade_class(klass, out, options, None)
        grade_cpu = 1000 * (busy() - before) / size
        results = json.loads((out / "results.json").read_text())["submissions"]
        # The obvious alternative: one pytest process per submission, on a sample of the same class.
        # The memo class's hangers are left out of it (each would cost the loop its budget).
        sample = [p for p in sorted(klass.iterdir()) if "while True" not in p.read_text() and "sleep(3600)" not in p.read_text()]
        sample = random.Random(2).sample(sample, min(args.sample, len(sample)))
        loop_seconds = pytest_loop(sample, args.budget, 10 * args.budget)
        load_after = os.getloadavg()
        figures = {
            "class": args.shape,
            "submissions": size,
            "mix": counts,
            "distinct_behaviours": behaviours(results),
            "jobs": args.jobs,
            "timeout": args.timeout,
            "budget": args.budget,
            "cores": os.cpu_count(),
            "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in load_after],
            "grade_seconds": round(grade_seconds, 2),
            "grade_per_second": round(size / grade_seconds, 1),
            "grade_cpu_ms_per_file": round(grade_cpu, 1),
            "pytest_loop_sample": len(sample),
            "pytest_loop_seconds_per_submission": round(loop_seconds, 2),
            "pytest_loop_per_second": round(1 / loop_seconds, 2),
            "ratio": round((size / grade_seconds) * loop_seconds, 1),
            "baseline": baseline and {**baseline, "speedup": round(baseline["grade_seconds"] / grade_seconds, 2)},
            "peak_memory_mb": round(peak / 2**20),
            "statuses": {s: sum(r["status"] == s for r in results) for s in ("graded", "error")},
        }
        # Where the time went: submissions answered wholly from the memo, and the others (new
        # behaviour, run through pytest; and the ones that hang), in seconds of worker time.
        tests = len(results[0]["tests"])
        hung = [any(t["status"] == "timeout" for t in r["tests"]) for r in results]
        remembered = [r["duration"] for r, h in zip(results, hung) if r.get("from_memo") == tests and not h]
        new = sorted(r["duration"] for r, h in zip(results, hung) if r.get("from_memo", 0) < tests and not h)
        hangs = [r["duration"] for r, h in zip(results, hung) if h]
        figures["all_from_memo"] = {
            "submissions": len(remembered),
            "mean_ms": round(1000 * sum(remembered) / max(len(remembered), 1), 1),
        }
        figures["new_behaviour"] = {
            "submissions": len(new),
            "worker_seconds": round(sum(new), 1),
            "median_seconds": round(new[len(new) // 2], 2) if new else None,
        }
        figures["hanging"] = {"submissions": len(hangs), "worker_seconds": round(sum(hangs), 1)}
        print(summary.splitlines()[0])
        for key, value in figures.items():
            print(f"{key:>36}: {value}")
        (ROOT / "bench" / "out").mkdir(exist_ok=True)
        name = "bench_grade.json" if args.shape == "memo" else f"bench_grade_{args.shape}.json"
        (ROOT / "bench" / "out" / name).write_text(json.dumps(figures, indent=2) + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
