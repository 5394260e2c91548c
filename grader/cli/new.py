"""`meteor-kit new DIR --function NAME --signature "NAME(a, b, c=1)"`: an exercise that runs at once, each part to write marked TODO."""

from __future__ import annotations

import argparse
import ast
import keyword
import re
import sys
from pathlib import Path

from grader.authoring.exercise_template import Signature, render
from grader.core.exercise import Exercise
from grader.core.safe_text import for_terminal

RESERVED = ("submission", "_twice")  # the property test's fixture and helper: a parameter of either name would hide it


class Refused(ValueError):
    """What `new` will not write, and why."""


def parse_signature(function: str, signature: str) -> Signature:
    """The parameters of `signature`, a call as the statement shows it: `NAME(a, b, c=1)`, defaults literal."""
    if not function.isidentifier() or keyword.iskeyword(function):
        raise Refused(f"--function {function!r} is not a Python identifier (nor may it be a keyword)")
    try:
        node = ast.parse(signature.strip(), mode="eval").body
    except SyntaxError:
        raise Refused(f"--signature {signature!r} does not parse as {function}(a, b, c=1)") from None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise Refused(f"--signature {signature!r} is not a call such as {function}(a, b, c=1)")
    if node.func.id != function:
        raise Refused(f"--signature {signature!r} names {node.func.id!r}, not the function {function!r}")
    if not all(isinstance(a, ast.Name) for a in node.args) or any(k.arg is None for k in node.keywords):
        raise Refused(f"--signature {signature!r}: parameters are names, then name=default (no * or **)")
    positional = [a.id for a in node.args]  # type: ignore[attr-defined]
    try:
        keywords = {str(k.arg): ast.literal_eval(k.value) for k in node.keywords}
    except ValueError:
        raise Refused(f"--signature {signature!r}: each default must be a literal (a number, a string, ...)") from None
    names = positional + list(keywords)
    if not positional:
        raise Refused(f"--signature {signature!r}: give at least one parameter without a default (the tests draw it)")
    if len(set(names)) < len(names) or set(names) & set(RESERVED):
        raise Refused(f"--signature {signature!r}: a parameter is named twice, or named {' or '.join(RESERVED)}")
    return Signature(function, positional, keywords)


def write(folder: Path, files: dict[str, str]) -> None:
    if folder.exists() or folder.is_symlink():
        if not folder.is_dir() or folder.is_symlink() or any(folder.iterdir()):
            raise Refused(f"{folder} exists and is not an empty folder: give a new one")
    for path, text in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        with open(folder / path, "x", encoding="utf-8") as f:
            f.write(text)


def cmd_new(args: argparse.Namespace) -> int:
    try:
        sig = parse_signature(args.function, args.signature)
        title = args.title or sig.function.replace("_", " ").capitalize()
        if not title.isprintable() or not title.strip():
            raise Refused("--title must be one line of text")
        exercise_id = re.sub(r"[^a-z0-9_]+", "-", args.dir.resolve().name.lower()).strip("-") or sig.function
        write(args.dir, render(sig, title, exercise_id))
    except (Refused, OSError) as exc:
        print(for_terminal(f"meteor-kit new: {exc}", one_line=True), file=sys.stderr)
        return 2
    shown = for_terminal(str(args.dir), one_line=True)
    print(f"wrote the exercise {title!r} in {shown}: each part to write says TODO (grep -rn TODO {shown}).")
    print(f"Next: write solutions/reference.py, then: meteor-kit check --exercise {shown} {shown}/solutions/reference.py")
    return 0


def register(commands: argparse._SubParsersAction, ex: Exercise) -> None:
    parser = commands.add_parser(
        "new",
        help="write a new exercise that runs at once, each part to write marked TODO",
        description="Write a new exercise folder (problem/, solutions/, hidden_tests/) whose tests, twins, scoring and "
        "misconception models run at once on a placeholder rule; docs/writing-an-exercise.md walks the rest.",
    )
    parser.add_argument("dir", type=Path, metavar="DIR", help="the new exercise's folder: it must not exist, or be empty")
    parser.add_argument("--function", required=True, metavar="NAME", help="the function students write")
    parser.add_argument("--signature", required=True, help='as the statement shows it, e.g. "NAME(a, b, c=1)"; defaults literal')
    parser.add_argument("--title", help="the exercise's title (default: the function's name, in words)")
    parser.set_defaults(func=cmd_new)
