"""Which file of a Gradescope upload is graded: the one that defines the exercise's function, or why there is none.

A student may upload several files (a helper, their own tests, a notebook). The upload is read,
never run: a file counts when its top level defines the function, and a file Python cannot
read is said about by name, never as "the autograder failed".
"""

from __future__ import annotations

import ast
import os
import re
import stat
from pathlib import Path
from typing import NamedTuple

from grader.judging.discovery import Spec
from grader.reports.gradescope import clean

MAX_READ = 1_000_000  # bytes read of an upload to see whether it defines the function


class Choice(NamedTuple):
    """The upload to grade (None: nothing), why there is none, and a sentence about each upload Python cannot read."""

    spec: Spec | None
    problem: str
    notes: list[str]


def pick(specs: list[Spec], function: str, folder: Path) -> Choice:
    """The upload to grade: the one file that defines `function`, or why there is none."""
    files = [s for s in specs if s.path is not None and not s.problem]
    if len(specs) == 1:
        return Choice(specs[0], "", [])  # the grader explains what is wrong with a lone file
    defining, notes = [], []
    for s in files:
        found, unreadable = examine(s.path, function)
        if found:
            defining.append(s)
        if unreadable:
            name = shown(s.path, folder)
            # What the student sees must name the file and say why, never "the autograder failed".
            notes.append(
                f"{name}: {unreadable}, though it seems to define {function}."
                if found
                else f"{name} was not considered: {unreadable}."
            )
    if len(defining) == 1:
        return Choice(defining[0], "", notes)
    names = ", ".join(shown(s.path, folder) for s in (defining or files)) or "no readable file"
    if defining:
        return Choice(
            None,
            f"Several of your files define {function}: {names}. "
            f"Upload only the one to grade, or rename the function in the others.",
            notes,
        )
    return Choice(
        None,
        f"None of your files defines {function} (found: {names}). Upload the .py or .ipynb file with `def {function}(...)`.",
        notes,
    )


def shown(path: Path, folder: Path) -> str:
    """An upload's name as a student reads it: its path in the upload, made safe."""
    try:
        return clean(str(path.relative_to(folder)))
    except ValueError:
        return clean(path.name)


def defines(path: Path, function: str) -> bool:
    """Whether the file defines `function` at its top level (see `examine`)."""
    return examine(path, function)[0]


def examine(path: Path, function: str) -> tuple[bool, str]:
    """Whether the file defines `function` at its top level, and why Python cannot read it ("" if it can).

    Reads the file (never follows a link), never runs it. An import does not count: a student's
    own test file imports the function too. A file Python cannot parse counts when a line
    starts `def <function>`, as the student meant it to.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False, ""
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return False, ""
        data = f.read(MAX_READ)
    if path.suffix == ".ipynb":
        from grader.core.notebook import NotebookError, extract

        try:
            data = extract(data.decode("utf-8", "replace")).source.encode("utf-8")
        except NotebookError as exc:
            return False, str(exc)
    try:
        # bytes: decoded as CPython does, BOM and coding cookie included
        return function in _top_level_names(ast.parse(data).body), ""
    except Exception as exc:  # any failure to parse (MemoryError, RecursionError, ...) is said about the file
        text = data.decode("utf-8", "replace")
        found = re.search(rf"^\s*(?:async\s+)?def\s+{re.escape(function)}\b", text, re.MULTILINE) is not None
        return found, f"Python cannot read it ({_parse_failure(exc)})"


def _parse_failure(exc: Exception) -> str:
    """Why `ast.parse` failed, in a few words a student can act on."""
    # A deep expression overflows the parser's stack (MemoryError) or the tree's builder (RecursionError).
    if isinstance(exc, (MemoryError, RecursionError)) or "too many nested" in str(exc):
        return "its code is nested too deeply"
    if isinstance(exc, SyntaxError):
        return f"line {exc.lineno}: {exc.msg}"[:200]
    return (str(exc) or type(exc).__name__)[:200]


def _top_level_names(body: list[ast.stmt]) -> set[str]:
    names: set[str] = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
            for block in ("body", "orelse", "finalbody"):
                names |= _top_level_names(getattr(node, block, []))
            for handler in getattr(node, "handlers", []):
                names |= _top_level_names(handler.body)
    return names
