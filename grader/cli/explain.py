"""`meteor-kit explain`: the exercise's own account of how the reference answers one input, in the terminal."""

from __future__ import annotations

import argparse
import sys

from grader.cli.exercise_option import add_exercise_option
from grader.core import exercise


def _seam(ex: exercise.Exercise):
    """The exercise's explain module (None when it has none), and why it could not be loaded ("" if it could)."""
    try:
        return ex.module("explain"), ""
    except Exception as exc:  # an author's module that fails to import must not take every command's --help with it
        return None, f"{type(exc).__name__}: {exc}"


def register(commands: argparse._SubParsersAction, ex: exercise.Exercise) -> None:
    seam, _ = _seam(ex)
    parser = commands.add_parser(
        "explain",
        help=getattr(seam, "HELP", "how the reference answers one input (when the exercise has an explain)"),
        description=getattr(seam, "DESCRIPTION", None),
    )
    if seam is not None:
        seam.add_arguments(parser)
    else:  # taken, so the command says why it cannot explain rather than what it does not expect
        parser.add_argument("inputs", nargs="*", help=argparse.SUPPRESS)
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto", help="colour the output (default: auto)")
    add_exercise_option(parser)
    parser.set_defaults(func=cmd_explain)


def cmd_explain(args: argparse.Namespace) -> int:
    from grader.judging.diagnose import reference_module

    ex = args.exercise
    seam, broken = _seam(ex)
    if seam is None:
        why = (
            f"its explain ({ex.seam['explain']}) does not load: {broken}"
            if broken
            else "has no explain ([seam] explain in exercise.toml)"
        )
        print(f"meteor-kit explain: the exercise {ex.id!r} {why}", file=sys.stderr)
        return 2
    color = args.color == "always" or (args.color == "auto" and sys.stdout.isatty())
    try:
        text = seam.run(args, reference_module(ex), color)
    except (TypeError, ValueError) as exc:
        print(f"meteor-kit explain: {exc}", file=sys.stderr)
        return 2
    print(text)
    return 0
