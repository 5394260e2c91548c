"""How often a failing submission gets a diagnosis that names something, measured through `meteor-kit grade`.

    .venv/bin/python bench/bench_diagnosis.py [--exercise DIR --correct DIR] [--mutants N] [--jobs 2] [--timeout 1] [--budget 10]

Four classes, each graded by the real command, their diagnoses read from results.json:
- `mutants`: every single-point AST mutant (bench/mutants.py) of the exercise's correct solutions
  (its reference, and `--correct DIR`'s; for the kit's exercise, the catalogue's correct ones), or
  `--mutants N` of them. One that fails a test should get a diagnosis that names a mistake (a
  model, one answer to every input, or an error on every input) or the rules it breaks; one that
  passes every test (an equivalent mutant) should get none.
- `heldout` (tests/catalogue/heldout, `--heldout DIR`): one-mistake files, each with `MISTAKE` (a
  model's id or a name of its own) and `RULE` (the [scoring.rules] rule it breaks). Named: the
  diagnosis names that model (or a form of it, or one with the same scores), or names no model
  and that rule among its rules (first, counted apart).
- `wrong` and `correct` (tests/catalogue): the kit's one-mistake set, named the same way (the rule
  its MISTAKE's model breaks standing for RULE); and correct files, which must get no diagnosis.
Prints the figures and writes bench/out/bench_diagnosis[_ID].json (ID: another exercise's id).
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import mutants  # bench/mutants.py: the script's own folder is first on sys.path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
NAMING = ("model", "models", "rules", "constant", "no_answer")  # the kinds that name a mistake or a rule


def constants(path: Path) -> dict[str, str]:
    """A file's top-level string constants (MISTAKE, RULE), read without running it."""
    found = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            found.update({t.id: node.value.value for t in node.targets if isinstance(t, ast.Name)})
    return found


def write_mutants(directory: Path, correct: list[Path], count: int | None, seed: int) -> int:
    pool = mutants.mutants(correct)
    chosen = random.Random(seed).sample(pool, count) if count and count < len(pool) else pool
    for i, mutant in enumerate(chosen):
        (directory / f"mutant_{i:04d}.py").write_text(f"# mutant of {mutant.origin}, {mutant.what}\n{mutant.source}")
    return len(chosen)


def copy_files(directory: Path, paths: list[Path]) -> int:
    for path in paths:
        shutil.copy(path, directory / path.name)
    return len(paths)


def grade(klass: Path, out: Path, exercise: Path, options: list[str]) -> list[dict]:
    command = [str(BIN / "meteor-kit"), "grade", str(klass), "--out", str(out), "--exercise", str(exercise), *options]
    subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return json.loads((out / "results.json").read_text(encoding="utf-8"))["submissions"]


def failing(result: dict) -> bool:
    return result["status"] != "graded" or result["passed"] < len(result["tests"])


def kind(result: dict) -> str:
    found = result.get("diagnosis")
    return found["kind"] if found else "none"


def names(result: dict, mistake: str, rule: str, same_scores: dict[str, str], family: dict[str, str]) -> str:
    """How the diagnosis names the file's mistake: "model" (its model, a form of it, or one with the same
    scores), "rule first" (no model; its rule first of those named), "rule" (among them), or ""."""
    found = result.get("diagnosis") or {}
    if found.get("kind") == "model":
        model = found["mistake"]
        return "model" if mistake in (model, family.get(model)) or same_scores.get(mistake) == model else ""
    if found.get("kind") == "rules" and rule in found.get("rules", []):
        return "rule first" if found["rules"][0] == rule else "rule"
    return ""


def summary(results: list[dict]) -> dict:
    fails = [r for r in results if failing(r)]
    kinds = Counter(kind(r) for r in fails)
    named = sum(kinds[k] for k in NAMING)
    return {
        "files": len(results),
        "failing": len(fails),
        "named": named,
        "share_named": round(named / len(fails), 4) if fails else None,
        "kinds": dict(sorted(kinds.items())),
        "passing_with_a_diagnosis": sum(1 for r in results if not failing(r) and r.get("diagnosis")),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exercise", type=Path, default=ROOT, help="the exercise folder (default: the kit's own)")
    parser.add_argument("--correct", type=Path, help="a folder of correct solutions to mutate besides the reference")
    parser.add_argument("--heldout", type=Path, help="one-mistake files with MISTAKE and RULE (default: tests/catalogue/heldout)")
    parser.add_argument("--mutants", type=int, help="grade this many mutants, drawn with --seed (default: all)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", default="2")
    parser.add_argument("--timeout", default="1")
    parser.add_argument("--budget", default="10")
    parser.add_argument("--keep", type=Path, help="keep the classes and their results in this folder")
    args = parser.parse_args()
    exercise = args.exercise.resolve()
    kit = exercise == ROOT
    catalogue = ROOT / "tests" / "catalogue"
    correct = sorted((args.correct or (catalogue / "correct" if kit else exercise / "none")).glob("*.py"))
    heldout = args.heldout or (ROOT / "tests" / "catalogue" / "heldout" if kit else None)
    sys.path.insert(0, str(ROOT))
    from grader.core import exercise as exercise_module
    from grader.judging import diagnose

    trusted = diagnose.trusted(exercise_module.load(exercise))
    same_scores = getattr(trusted, "SAME_SCORES_AS", {})
    family = {m.id: m.mistake for m in trusted.MODELS if hasattr(m, "mistake")}
    breaks = {m.id: getattr(m, "breaks", "") for m in trusted.MODELS}  # a model's rule, for a file without RULE

    work = args.keep or Path(tempfile.mkdtemp(prefix="bench_diagnosis."))
    classes: dict[str, Path] = {}
    for name in ("mutants", "heldout", "wrong", "correct"):
        classes[name] = work / name
        shutil.rmtree(classes[name], ignore_errors=True)
        classes[name].mkdir(parents=True)
    sizes = {
        "mutants": write_mutants(classes["mutants"], [*correct, exercise / "solutions" / "reference.py"], args.mutants, args.seed)
    }
    sizes["heldout"] = copy_files(classes["heldout"], sorted(heldout.glob("*.py")) if heldout else [])
    sizes["wrong"] = copy_files(classes["wrong"], sorted((catalogue / "wrong").glob("*.py")) if kit else [])
    sizes["correct"] = copy_files(classes["correct"], correct)
    options = ["--jobs", args.jobs, "--timeout", args.timeout, "--budget", args.budget]
    figures: dict = {"exercise": str(exercise), "options": options}
    for name, klass in classes.items():
        if not sizes[name]:
            continue
        started = time.perf_counter()
        results = grade(klass, work / f"{name}-out", exercise, options)
        figures[name] = summary(results) | {"seconds": round(time.perf_counter() - started, 1)}
        if name in ("heldout", "wrong"):
            how, missed = Counter(), []
            for r in results:
                marks = constants(klass / Path(r["student"]["path"]).name)
                mistake = marks.get("MISTAKE", "")
                rule = marks.get("RULE") or breaks.get(same_scores.get(mistake, mistake), "")
                named = names(r, mistake, rule, same_scores, family)
                how[named or "missed"] += 1
                if named != "model" and named != "rule first":
                    found = r.get("diagnosis") or {}
                    missed.append(
                        f"{r['student']['path']}: {kind(r)} {found.get('mistake') or found.get('rules')} ({named or 'missed'})"
                    )
            figures[name]["named_by"] = dict(sorted(how.items()))
            figures[name]["not_first"] = missed
        print(f"{name}: {json.dumps(figures[name], indent=1)}")
    out = (
        ROOT / "bench" / "out" / ("bench_diagnosis.json" if kit else f"bench_diagnosis_{exercise_module.load(exercise).id}.json")
    )
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(figures, indent=1) + "\n")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
