"""docs/results-schema.md's field tables, made from the result model (grader/core/results.py).

Each field's line is the string written under it in the model. `python -m grader.reports.schema_doc`
rewrites the tables in the doc (the prose around them is written by hand), and
tests/test_results_schema.py fails while the doc and the model differ.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import inspect
import sys
import textwrap
from pathlib import Path

from grader.core import results

DOC = Path(__file__).resolve().parents[2] / "docs" / "results-schema.md"
BEGIN = "<!-- fields: made from grader/core/results.py by `python -m grader.reports.schema_doc`; edit the model, not this -->"
END = "<!-- end of the fields -->"
# The tables, in the order a reader meets them: the document, a submission, its parts, then the run's parts.
MODELS: tuple[type, ...] = (
    results.ClassRun,
    results.SubmissionResult,
    results.TestResult,
    results.Diagnosis,
    results.Student,
    results.Adjustment,
    results.LmsStudent,
    results.RunSettings,
    results.SimilarPair,
    results.LmsSummary,
    results.Unmatched,
    results.Contested,
    results.AdjustSummary,
    results.Unwritten,
)
ENUMS: tuple[type[enum.Enum], ...] = (results.Status, results.SubmissionStatus)
SCALARS = {"str": "string", "float": "number", "int": "integer", "bool": "boolean", "None": "null"}


class DocError(Exception):
    """The model cannot be documented: a field without its line."""


def field_lines(cls: type) -> dict[str, str]:
    """Each field of the dataclass `cls` and the string under it in its source."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    body = tree.body[0].body  # type: ignore[attr-defined]
    lines: dict[str, str] = {}
    for node, after in zip(body, body[1:]):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str):
                lines[node.target.id] = " ".join(after.value.value.split())
    missing = [f.name for f in dataclasses.fields(cls) if f.name not in lines]
    if missing:
        raise DocError(f"{cls.__name__}: no line under {', '.join(missing)}")
    return lines


def type_text(annotation: str) -> str:
    """A field's annotation as the doc says it: `list[TestResult] | None` is "list of [TestResult](#testresult), or null"."""
    return _type(ast.parse(annotation, mode="eval").body)


def _type(node: ast.expr) -> str:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return f"{_type(node.left)}, or {_type(node.right)}"
    if isinstance(node, ast.Constant) and node.value is None:
        return "null"
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        inner = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if node.value.id == "list":
            return f"list of {_plural(inner[0])}"
        if node.value.id == "tuple":
            return "[" + ", ".join(_type(i) for i in inner) + "]"
        return f"object of {_plural(inner[-1])}"
    if isinstance(node, ast.Name):
        if node.id in SCALARS:
            return SCALARS[node.id]
        return f"[{node.id}](#{node.id.lower()})"
    raise DocError(f"no words for the type {ast.unparse(node)}")


def _plural(node: ast.expr) -> str:
    said = _type(node)
    return f"{said}s" if isinstance(node, ast.Name) and node.id in SCALARS else said


def table(cls: type) -> str:
    lines = field_lines(cls)
    absent = getattr(cls, "ABSENT_WHEN_NONE", ())
    rows = [
        f"### {cls.__name__}",
        "",
        " ".join((cls.__doc__ or "").split()),
        "",
        "| field | type | meaning |",
        "| --- | --- | --- |",
    ]
    for f in dataclasses.fields(cls):
        kind = type_text(str(f.type))
        if f.name in absent:
            kind = kind.removesuffix(", or null") + " (left out when none)"
        rows.append(f"| `{f.name}` | {kind} | {lines[f.name].replace('|', '&#124;')} |")
    return "\n".join(rows)


def enum_table(kind: type[enum.Enum]) -> str:
    values = ", ".join(f"`{member.value}`" for member in kind)
    return f"### {kind.__name__}\n\n{' '.join((kind.__doc__ or '').split())} One of {values}."


def tables() -> str:
    """Every table of the model, between the markers the doc keeps them in."""
    parts = [table(cls) for cls in MODELS] + [enum_table(kind) for kind in ENUMS]
    return f"{BEGIN}\n\n" + "\n\n".join(parts) + f"\n\n{END}"


def updated(text: str) -> str:
    """The doc's `text` with its tables made again from the model."""
    if BEGIN not in text or END not in text:
        raise DocError(f"{DOC} has lost its markers: put back {BEGIN!r} and {END!r}")
    head, rest = text.split(BEGIN, 1)
    return head + tables() + rest.split(END, 1)[1]


def main() -> int:
    text = DOC.read_text(encoding="utf-8")
    new = updated(text)
    if new != text:
        DOC.write_text(new, encoding="utf-8")
        print(f"rewrote the tables of {DOC}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
