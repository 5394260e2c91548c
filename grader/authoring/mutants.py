"""Single-point mutants of a solution: each is the file with one small change, the kind a student makes.

A comparison flipped (< and <=, == and !=, in and not in), a number off by one (0.1 for a
float), + and -, * and /, and/or, min and max, two arguments swapped, a statement deleted,
round's digits changed or dropped, a `not` dropped, True and False, and (not in `CLASSIC`, which
the benchmarks keep) a string emptied. Only mutants that compile and differ from every other
and from the original are kept. Each is the original text with that one change spliced in, its
comments and layout kept, so its diff is the change alone.
"""

from __future__ import annotations

import ast
import copy
import difflib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

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
# The kinds of change; the benchmarks' classes use CLASSIC, so their figures stay comparable.
CLASSIC = frozenset({"compare", "binop", "boolop", "not", "number", "bool", "rename", "round", "swap-args", "delete"})
ALL = CLASSIC | {"string"}


@dataclass(frozen=True)
class Mutant:
    origin: str  # the original file's name
    what: str  # the change: "line 12: Lt -> LtE"
    source: str  # the whole mutated file
    line: int = 0  # where the change is, in the original
    diff: str = ""  # a unified diff from the original


def mutants(sources: Mapping[str, str], kinds: frozenset[str] = ALL) -> list[Mutant]:
    """Every single-point mutant of these files (name -> text) that compiles, each once, none equal to an original."""
    trees = {name: ast.parse(text) for name, text in sources.items()}
    seen = {ast.unparse(tree) for tree in trees.values()}
    found: list[Mutant] = []
    for name, tree in trees.items():
        for index, change in sites(tree, kinds):
            mutated = copy.deepcopy(tree)
            what, line, new = _apply(mutated, index, change)
            ast.fix_missing_locations(mutated)
            try:
                unparsed = ast.unparse(mutated)
                compile(unparsed, name, "exec")
            except (SyntaxError, ValueError, TypeError, RecursionError):
                continue
            if unparsed in seen:
                continue
            seen.add(unparsed)
            source = _spliced(sources[name], tree, unparsed, index, change, new) or unparsed + "\n"
            found.append(Mutant(name, f"line {line}: {what}", source, line, _diff(name, sources[name], source)))
    return found


def sites(tree: ast.AST, kinds: frozenset[str] = ALL) -> Iterator[tuple[int, str]]:
    """Every single-point change this tree allows: (the node's place in ast.walk order, the change)."""
    quiet = _messages(tree) if "string" in kinds else set()
    for index, node in enumerate(ast.walk(tree)):
        for change in _changes(node, quiet):
            if change.split(":", 1)[0] in kinds:
                yield index, change


def _changes(node: ast.AST, quiet: set[int]) -> Iterator[str]:
    if isinstance(node, ast.Compare):
        for at, op in enumerate(node.ops):
            for new in COMPARE_SWAPS.get(type(op), []):
                yield f"compare:{at}:{new.__name__}"
    elif isinstance(node, ast.BinOp | ast.AugAssign):
        for new in BINOP_SWAPS.get(type(node.op), []):
            yield f"binop:{new.__name__}"
    elif isinstance(node, ast.BoolOp):
        yield "boolop"
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield "not"
    elif isinstance(node, ast.Constant) and type(node.value) in (int, float):
        yield "number:+1"
        yield "number:-1"
    elif isinstance(node, ast.Constant) and type(node.value) is bool:
        yield "bool"
    elif isinstance(node, ast.Constant) and type(node.value) is str and id(node) not in quiet:
        yield "string"
    elif isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id in NAME_SWAPS:
            yield "rename"
        if isinstance(node.func, ast.Name) and node.func.id == "round":
            if len(node.args) == 2:
                yield "round:no-digits"
            yield "round:drop"
        if len(node.args) >= 2:
            yield "swap-args"
    for field in ("body", "orelse"):
        body = getattr(node, field, None)
        if isinstance(body, list) and len(body) > 1:
            for at, statement in enumerate(body):
                is_docstring = isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
                if not is_docstring and not isinstance(statement, ast.FunctionDef | ast.ClassDef):
                    yield f"delete:{field}:{at}"


def _messages(tree: ast.AST) -> set[int]:
    """The string constants no answer depends on: docstrings, f-strings' text, what is raised or asserted."""
    quiet: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            quiet.add(id(node.value))
        elif isinstance(node, ast.JoinedStr | ast.Raise | ast.Assert):
            quiet.update(id(inner) for inner in ast.walk(node) if isinstance(inner, ast.Constant))
    return quiet


def _apply(tree: ast.AST, index: int, change: str) -> tuple[str, int, ast.AST | None]:
    """Make the change at the node: (what it was, its line, the node now standing where it stood; None for a deletion)."""
    node = _node(tree, index)
    kind, _, rest = change.partition(":")
    line = getattr(node, "lineno", 0)
    if kind == "compare":
        at, new = rest.split(":")
        old = node.ops[int(at)]
        node.ops[int(at)] = getattr(ast, new)()
        return f"{type(old).__name__} -> {new}", line, node
    if kind == "binop":
        old = node.op
        node.op = getattr(ast, rest)()
        return f"{type(old).__name__} -> {rest}", line, node
    if kind == "boolop":
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        return "and <-> or", line, node
    if kind == "not":
        _replace(tree, node, node.operand)
        return "not dropped", line, node.operand
    if kind in ("number", "bool", "string"):
        old = node.value
        if kind == "bool":
            node.value = not old
        elif kind == "string":
            node.value = "" if old else " "
        else:
            step = 1 if isinstance(old, int) else 0.1
            node.value = round(old + step if rest == "+1" else old - step, 10)
        return f"{old!r} -> {node.value!r}", line, node
    if kind == "rename":
        old = node.func.id
        node.func.id = NAME_SWAPS[old]
        return f"{old} -> {node.func.id}", line, node
    if kind == "round":
        if rest == "no-digits":
            node.args = node.args[:1]
            return "round without digits", line, node
        kept = node.args[0] if node.args else ast.Constant(0.0)
        _replace(tree, node, kept)
        return "round dropped", line, kept
    if kind == "swap-args":
        node.args[0], node.args[1] = node.args[1], node.args[0]
        return "first two arguments swapped", line, node
    if kind == "delete":
        field, at = rest.split(":")
        statement = getattr(node, field).pop(int(at))
        return "statement deleted", statement.lineno, None
    raise ValueError(change)


def _node(tree: ast.AST, index: int) -> Any:
    return next(n for i, n in enumerate(ast.walk(tree)) if i == index)


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


def _spliced(source: str, tree: ast.AST, unparsed: str, index: int, change: str, new: ast.AST | None) -> str | None:
    """The original text with the change written where it is, or None where that does not give the mutated tree.

    `unparsed`: the mutated tree as text; parsed again, a constant made negative is a minus and a number, as in any text.
    """
    want = ast.dump(ast.parse(unparsed))
    node = _node(tree, index)
    if new is None:  # a deletion: the statement's whole lines go
        field, at = change.split(":")[1:]
        statement = getattr(node, field)[int(at)]
        lines = source.splitlines(keepends=True)
        tries = ["".join(lines[: statement.lineno - 1] + lines[statement.end_lineno :])]
    else:
        start, end = _offset(source, node.lineno, node.col_offset), _offset(source, node.end_lineno, node.end_col_offset)
        text = ast.unparse(new)
        tries = [source[:start] + text + source[end:], source[:start] + f"({text})" + source[end:]]
    for text in tries:
        try:
            if ast.dump(ast.parse(text)) == want:
                return text
        except (SyntaxError, ValueError):
            continue
    return None


def _offset(source: str, line: int | None, column: int | None) -> int:
    """The index in `source` of ast's (line, UTF-8 byte column)."""
    lines = source.splitlines(keepends=True)
    before = sum(len(text) for text in lines[: (line or 1) - 1])
    here = lines[(line or 1) - 1] if lines else ""
    return before + len(here.encode("utf-8")[: column or 0].decode("utf-8", "ignore"))


def _diff(name: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(_lines(before), _lines(after), fromfile=name, tofile=f"{name} (mutant)", n=1)
    return "".join(lines)


def _lines(text: str) -> list[str]:
    return [line if line.endswith("\n") else line + "\n" for line in text.splitlines(keepends=True)]
