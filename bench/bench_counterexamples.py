"""Counterexamples: the default setting against hypothesis's shrinking, on a class where nearly every file is new.

    .venv/bin/python bench/bench_counterexamples.py [--size 300] [--seed 1] [--jobs 2] [--timeout 1] [--budget 5]

Writes the diverse class (bench/mutants.py: single-point AST mutants of the catalogue's correct
solutions) and grades it with `meteor-kit grade` once per `[hypothesis] counterexample` setting
(KIT_COUNTEREXAMPLE): "smallest-drawn", the default (the simplest failing of the drawn examples and
of the simplest inputs), and "shrunk" (hypothesis shrinks each failing test). Then it compares them
file by file: scores, which tests pass, statuses, diagnoses, and every failing property test's
"Falsifying example" block (the same, shorter or longer), with the time each grade took. Prints
the figures and writes bench/out/bench_counterexamples.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
from pathlib import Path

import mutants  # bench/mutants.py: the script's own folder is first on sys.path
from bench_grade import ROOT, grade_class, warm_up

SETTINGS = ("smallest-drawn", "shrunk")


def falsifying_example(message: str | None) -> str | None:
    """The "Falsifying example: ..." block of a test's message (the call's arguments), or None."""
    at = (message or "").find("Falsifying example:")
    if at < 0:
        return None
    lines = message[at:].splitlines()
    return "\n".join(lines[: lines.index(")") + 1]) if ")" in lines else None


def compare(default: dict[str, dict], shrunk: dict[str, dict]) -> dict:
    """File by file and test by test: what the default setting shows against what shrinking shows."""
    figures = {"files": len(default), "scores_differ": 0, "passing_tests_differ": 0, "statuses_differ": {}}
    figures |= {"diagnoses_differ": 0, "diagnosed_mistakes_differ": 0, "shrunk_found_several_failures": 0}
    ours, theirs, same = [], [], 0
    for name, mine in default.items():
        other = shrunk[name]
        figures["scores_differ"] += mine["score"] != other["score"]
        a, b = mine.get("diagnosis") or {}, other.get("diagnosis") or {}
        figures["diagnoses_differ"] += a != b
        figures["diagnosed_mistakes_differ"] += a.get("mistake") != b.get("mistake")
        for test, twin in zip(mine["tests"], other["tests"]):
            figures["passing_tests_differ"] += (test["status"] == "pass") != (twin["status"] == "pass")
            if test["status"] != twin["status"]:
                pair = f"{twin['status']} -> {test['status']}"
                figures["statuses_differ"][pair] = figures["statuses_differ"].get(pair, 0) + 1
            if "distinct failures" in (twin["message"] or ""):
                figures["shrunk_found_several_failures"] += 1  # hypothesis told two bugs apart in one test
            shown, shrank = falsifying_example(test["message"]), falsifying_example(twin["message"])
            if shown and shrank:
                ours.append(len(shown))
                theirs.append(len(shrank))
                same += shown == shrank
    pairs = list(zip(ours, theirs))
    figures["examples_compared"] = len(pairs)
    figures["examples_the_same"] = same
    figures["examples_shorter"] = sum(a < b for a, b in pairs)
    figures["examples_longer"] = sum(a > b for a, b in pairs)
    for label, values in (("default", sorted(ours)), ("shrunk", sorted(theirs))):
        if values:
            figures[f"chars_{label}"] = {
                "median": statistics.median(values),
                "p90": values[int(0.9 * (len(values) - 1))],
                "p99": values[int(0.99 * (len(values) - 1))],
                "max": values[-1],
            }
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1, help="which mutants (bench/mutants.py)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=1.0)
    parser.add_argument("--budget", type=float, default=5.0)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench_counterexamples."))
    klass = work / "class"
    klass.mkdir()
    mutants.diverse_class(klass, args.size, seed=args.seed)
    options = ["--jobs", str(args.jobs), "--timeout", str(args.timeout), "--budget", str(args.budget)]
    results, seconds = {}, {}
    for setting in SETTINGS:
        os.environ["KIT_COUNTEREXAMPLE"] = setting
        warm_up(klass, work / f"warm_{setting}", options, None)  # the setting's recording, untimed
        seconds[setting], _, _ = grade_class(klass, work / setting, options, None)
        submissions = json.loads((work / setting / "results.json").read_text())["submissions"]
        results[setting] = {s["submission"]: s for s in submissions}
    os.environ.pop("KIT_COUNTEREXAMPLE")
    figures = {"class": f"diverse, seed {args.seed}", "load_average": [round(x, 2) for x in os.getloadavg()]}
    figures |= {f"grade_seconds_{s}": round(seconds[s], 2) for s in SETTINGS}
    figures |= compare(results["smallest-drawn"], results["shrunk"])
    for key, value in figures.items():
        print(f"{key:>28}: {value}")
    (ROOT / "bench" / "out").mkdir(exist_ok=True)
    (ROOT / "bench" / "out" / "bench_counterexamples.json").write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()
