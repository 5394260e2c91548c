"""Classes for the grading benchmark: single-point AST mutants of the correct solutions, or copies of the catalogue.

    .venv/bin/python bench/mutants.py OUT [--shape diverse|copies] [--count 500] [--seed 1]

`diverse`: each file is one correct solution of the catalogue (tests/catalogue/correct) with
one small change, the kind a student makes (grader/authoring/mutants.py makes them; its
CLASSIC kinds: a comparison flipped, a constant off by one, an operator swapped, a statement
deleted, ...). Only mutants that compile and differ from every other (and from the original)
are kept, so nearly every file behaves differently. The same seed gives the same class.
`copies`: the issue's held-out-like class, 34 one-mistake solutions (tests/catalogue/wrong)
and 9 correct ones (the catalogue's and the reference), 3 copies of each, each copy's text
made different by a comment.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CATALOGUE = ROOT / "tests" / "catalogue"
REFERENCE = ROOT / "solutions" / "reference.py"
sys.path.insert(0, str(ROOT))

from grader.authoring import mutants as engine
from grader.authoring.mutants import Mutant


def correct_solutions() -> list[Path]:
    """The catalogue's correct solutions: its `correct` folder is its record of which pass every test."""
    return sorted((CATALOGUE / "correct").glob("*.py"))


def mutants(paths: list[Path]) -> list[Mutant]:
    """Every single-point mutant of these files that compiles, each source once, none equal to an original.

    The engine's (grader/authoring/mutants.py, which `meteor-kit audit` uses), with the classic
    kinds of change only, so the classes stay those the benchmarks measured.
    """
    return engine.mutants({path.name: path.read_text() for path in paths}, engine.CLASSIC)


def diverse_class(directory: Path, count: int, seed: int = 1) -> int:
    """Write `count` mutants (all of them if there are fewer), picked with `seed`; returns how many."""
    pool = mutants(correct_solutions())
    chosen = random.Random(seed).sample(pool, min(count, len(pool)))
    for i, mutant in enumerate(chosen):
        header = f"# mutant of {mutant.origin}, {mutant.what}\n"
        (directory / f"mutant_{i:04d}.py").write_text(header + mutant.source)
    return len(chosen)


def copies_class(directory: Path, copies: int = 3, wrong: int = 34, seed: int = 1) -> int:
    """Write `copies` copies of `wrong` one-mistake solutions and of the 9 correct ones; returns how many files."""
    mistakes = random.Random(seed).sample(sorted((CATALOGUE / "wrong").glob("*.py")), wrong)
    solutions = [*correct_solutions(), REFERENCE, *mistakes]
    written = 0
    for path in solutions:
        for n in range(copies):
            (directory / f"{path.stem}_{n}.py").write_text(f"# copy {n} of {path.name}\n{path.read_text()}")
            written += 1
    return written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the class folder to write (created; must be empty)")
    parser.add_argument("--shape", choices=("diverse", "copies"), default="diverse")
    parser.add_argument("--count", type=int, default=500, help="diverse: how many mutants")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.out.exists() and any(args.out.iterdir()):
        print(f"mutants: {args.out} is not empty", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    if args.shape == "diverse":
        written = diverse_class(args.out, args.count, args.seed)
    else:
        written = copies_class(args.out)
    print(f"{written} submissions written to {args.out}")
    if args.shape == "diverse" and written < args.count:
        print(f"mutants: --count {args.count} asked for more; {written} are all the distinct mutants there are", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
