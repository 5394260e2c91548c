"""Which of a student's files is graded, and which of the others it may import: the same for every LMS."""

from __future__ import annotations

import fnmatch
import keyword
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass

from grader.lms.adapter import SUFFIXES

MAX_HELPERS = 20
MODULE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
# Modules a helper may never replace: the standard library (sys.stdlib_module_names) and these.
RESERVED = frozenset(
    {
        "grader",
        "pytest",
        "_pytest",
        "hypothesis",
        "submission",
        "jail_child",
        "copydetect",
        "sitecustomize",
        "usercustomize",
        "conftest",
        "__main__",
        "builtins",
    }
)
TEST_NAMES = ("test_*.py", "*_test.py", "tests.py", "test.py", "conftest.py", "setup.py", "test_*.ipynb")
TEST_FOLDERS = {"tests", "test", ".github", "testing"}


def is_test_like(parts: tuple[str, ...]) -> bool:
    """Tests, fixtures and packaging beside the solution: never graded when another file could be."""
    leaf = parts[-1].lower()
    return any(fnmatch.fnmatchcase(leaf, p) for p in TEST_NAMES) or any(p.lower() in TEST_FOLDERS for p in parts[:-1])


@dataclass(frozen=True)
class Pick:
    chosen: tuple[str, ...] | None
    note: str = ""


def pick(
    candidates: list[tuple[str, ...]],
    defines: Callable[[tuple[str, ...]], bool],
    function: str,
    glob: str | None = None,
    shown: Callable[[tuple[str, ...]], str] = "/".join,
) -> Pick:
    """The one file to grade among a student's `.py`/`.ipynb` files (paths relative to their folder).

    An exercise's glob names it; else the files that define `function` (tests and setup files
    only when nothing else is there). Ties are broken the same way every time (the shallowest,
    then by name) and said in the note, never silently.
    """
    code = sorted((c for c in candidates if c[-1].endswith(SUFFIXES)), key=lambda c: (len(c), c))
    if not code:
        return Pick(None)
    note = ""
    if glob:
        named = [c for c in code if fnmatch.fnmatchcase(c[-1], glob) or fnmatch.fnmatchcase("/".join(c), glob)]
        if named:
            code = named
        else:
            note = f"no file matches the exercise's file pattern {glob!r}; "
    plain = [c for c in code if not is_test_like(c)] or code
    if len(plain) == 1:
        return Pick(plain[0], note.rstrip("; ") if note else "")
    defining = [c for c in plain if defines(c)]
    if len(defining) == 1:
        return Pick(defining[0], note.rstrip("; ") if note else "")
    if defining:
        names = ", ".join(shown(c) for c in defining[:5]) + (", ..." if len(defining) > 5 else "")
        return Pick(defining[0], f"{note}{len(defining)} files define {function} ({names}): graded {shown(defining[0])}")
    return Pick(plain[0], f"{note}no file defines {function}: graded {shown(plain[0])} of {len(plain)} files")


def module_problem(name: str) -> str:
    """Why a helper file cannot be offered as module `name`, or "" if it can."""
    if not MODULE_NAME.match(name) or keyword.iskeyword(name):
        return "its name is not a valid module name"
    if name in sys.stdlib_module_names or name in RESERVED or name.startswith("_"):
        return "its name would shadow a module of Python or of the grader"
    return ""
