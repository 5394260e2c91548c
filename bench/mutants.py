"""Classes for the grading benchmark: single-point AST mutants of the correct solutions, or copies of the catalogue.

    .venv/bin/python bench/mutants.py OUT [--shape diverse|copies] [--count 500] [--seed 1]

`diverse`: each file is one correct solution of the catalogue (tests/catalogue/correct) with
one small change, the kind a student makes: a comparison flipped (< and <=, == and !=, in
and not in), a constant off by one, + and -, * and /, and/or, min and max, two arguments
swapped, a statement deleted, round's digits changed or dropped, a `not` dropped, True and
False. Only mutants that compile and differ in source from every other (and from the
original) are kept, so nearly every file behaves differently. The same seed gives the same
class. `copies`: the issue's held-out-like class, 34 one-mistake solutions (tests/catalogue/wrong)
and 9 correct ones (the catalogue's and the reference), 3 copies of each, each copy's text
made different by a comment.
"""

from __future__ import annotations

import argparse
import ast
import copy
import random
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CATALOGUE = ROOT / "tests" / "catalogue"
REFERENCE = ROOT / "solutions" / "reference.py"

COMPARE_SWAPS: dict[type, list[type]] = {
    ast.Lt: [ast.LtE, ast.Gt],
    ast.LtE: [ast.Lt, ast.GtE],
    ast.Gt: [ast.GtE, ast.Lt],
    ast.GtE: [ast.Gt, ast.LtE],
    ast.Eq: [ast.NotEq],
    ast.NotEq: [ast.Eq],
    ast.In: [ast.NotIn],
    ast.NotIn: [ast.In],
    ast.Is: [ast.IsNot],
    ast.IsNot: [ast.Is],
}
BINOP_SWAPS: dict[type, list[type]] = {
    ast.Add: [ast.Sub],
    ast.Sub: [ast.Add],
    ast.Mult: [ast.Div],
    ast.Div: [ast.Mult, ast.FloorDiv],
    ast.FloorDiv: [ast.Div],
    ast.Pow: [ast.Mult],
    ast.Mod: [ast.FloorDiv],
}
NAME_SWAPS = {"min": "max", "max": "min", "sum": "len", "len": "sum"}


@dataclass(frozen=True)
class Mutant:
    origin: str  # the correct solution's file name
    what: str  # the change, for the file's first line
    source: str


def correct_solutions() -> list[Path]:
    """The catalogue's correct solutions: its `correct` folder is its record of which pass every test."""
    return sorted((CATALOGUE / "correct").glob("*.py"))


def _sites(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Every single-point change this tree allows: (the node's place in ast.walk order, the change)."""
    for index, node in enumerate(ast.walk(tree)):
        if isinstance(node, ast.Compare):
            for at, op in enumerate(node.ops):
                for new in COMPARE_SWAPS.get(type(op), []):
                    yield index, f"compare:{at}:{new.__name__}"
        elif isinstance(node, ast.BinOp | ast.AugAssign):
            for new in BINOP_SWAPS.get(type(node.op), []):
                yield index, f"binop:{new.__name__}"
        elif isinstance(node, ast.BoolOp):
            yield index, "boolop"
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            yield index, "drop-not"
        elif isinstance(node, ast.Constant) and type(node.value) in (int, float):
            yield index, "constant:+1"
            yield index, "constant:-1"
        elif isinstance(node, ast.Constant) and type(node.value) is bool:
            yield index, "constant:not"
        elif isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id in NAME_SWAPS:
                yield index, "rename"
            if isinstance(node.func, ast.Name) and node.func.id == "round":
                if len(node.args) == 2:
                    yield index, "round:no-digits"
                yield index, "round:drop"
            if len(node.args) >= 2:
                yield index, "swap-args"
        for field in ("body", "orelse"):
            body = getattr(node, field, None)
            if isinstance(body, list) and len(body) > 1:
                for at, statement in enumerate(body):
                    is_docstring = isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
                    if not is_docstring and not isinstance(statement, ast.FunctionDef | ast.ClassDef):
                        yield index, f"delete:{field}:{at}"


def _apply(tree: ast.AST, index: int, change: str) -> str:
    """Make the change at the node; returns a line that says what it was."""
    node = next(n for i, n in enumerate(ast.walk(tree)) if i == index)
    kind, _, rest = change.partition(":")
    line = getattr(node, "lineno", 0)
    if kind == "compare":
        at, new = rest.split(":")
        old = node.ops[int(at)]
        node.ops[int(at)] = getattr(ast, new)()
        return f"line {line}: {type(old).__name__} -> {new}"
    if kind == "binop":
        old = node.op
        node.op = getattr(ast, rest)()
        return f"line {line}: {type(old).__name__} -> {rest}"
    if kind == "boolop":
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        return f"line {line}: and <-> or"
    if kind == "drop-not":
        _replace(tree, node, node.operand)
        return f"line {line}: not dropped"
    if kind == "constant":
        old = node.value
        if rest == "not":
            node.value = not old
        else:
            step = 1 if isinstance(old, int) else 0.1
            node.value = round(old + step if rest == "+1" else old - step, 10)
        return f"line {line}: {old!r} -> {node.value!r}"
    if kind == "rename":
        old = node.func.id
        node.func.id = NAME_SWAPS[old]
        return f"line {line}: {old} -> {node.func.id}"
    if kind == "round":
        if rest == "no-digits":
            node.args = node.args[:1]
            return f"line {line}: round without digits"
        _replace(tree, node, node.args[0] if node.args else ast.Constant(0.0))
        return f"line {line}: round dropped"
    if kind == "swap-args":
        node.args[0], node.args[1] = node.args[1], node.args[0]
        return f"line {line}: first two arguments swapped"
    if kind == "delete":
        field, at = rest.split(":")
        statement = getattr(node, field).pop(int(at))
        return f"line {statement.lineno}: statement deleted"
    raise ValueError(change)


def _replace(tree: ast.AST, old: ast.AST, new: ast.AST) -> None:
    """Put `new` where `old` is in the tree."""
    for parent in ast.walk(tree):
        for field, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, field, new)
                return
            if isinstance(value, list):
                for i, item in enumerate(value):
                    if item is old:
                        value[i] = new
                        return


def mutants(paths: list[Path]) -> list[Mutant]:
    """Every single-point mutant of these files that compiles, each source once, none equal to an original."""
    seen = set()
    trees = {}
    for path in paths:
        trees[path] = ast.parse(path.read_text())
        seen.add(ast.unparse(trees[path]))
    found: list[Mutant] = []
    for path, tree in trees.items():
        for index, change in _sites(tree):
            mutated = copy.deepcopy(tree)
            what = _apply(mutated, index, change)
            ast.fix_missing_locations(mutated)
            try:
                source = ast.unparse(mutated)
                compile(source, path.name, "exec")
            except (SyntaxError, ValueError, TypeError, RecursionError):
                continue
            if source in seen:
                continue
            seen.add(source)
            found.append(Mutant(path.name, what, source + "\n"))
    return found


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
