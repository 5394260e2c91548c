"""`meteor-kit explain`: the exercise's own account of how the reference answers one input, in the terminal."""

from __future__ import annotations

import argparse
import sys

from grader.core import exercise


def register(commands: argparse._SubParsersAction) -> None:
    seam = exercise.load().module("explain")
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
    parser.add_argument(
        "--exercise", metavar="DIR", help="the exercise folder (problem/, solutions/, hidden_tests/); default: the kit's own"
    )
    parser.set_defaults(func=cmd_explain)


def cmd_explain(args: argparse.Namespace) -> int:
    from grader.judging.diagnose import reference_module

    seam = exercise.load().module("explain")
    if seam is None:
        print(
            f"meteor-kit explain: the exercise {exercise.load().id!r} has no explain ([seam] explain in exercise.toml)",
            file=sys.stderr,
        )
        return 2
    color = args.color == "always" or (args.color == "auto" and sys.stdout.isatty())
    try:
        text = seam.run(args, reference_module(), color)
    except (TypeError, ValueError) as exc:
        print(f"meteor-kit explain: {exc}", file=sys.stderr)
        return 2
    print(text)
    return 0
