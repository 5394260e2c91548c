"""`meteor-kit build-web`: the student's page, built into a self-contained static site (grader/export/web.py builds it)."""

from __future__ import annotations

import argparse
from pathlib import Path

from grader.cli.exercise_option import add_exercise_option
from grader.core import exercise

# `meteor-kit audit --browser` (grader/cli/audit.py) builds and checks the page through these names.
from grader.export.web import build, default_out, is_current, log


def cmd_build_web(args: argparse.Namespace) -> int:
    ex = args.exercise
    out = Path(args.out).resolve() if args.out else default_out(ex)
    if args.if_needed and is_current(ex, out):
        log(f"{out} is up to date")
    else:
        build(ex, out)
    return 0


def register(commands: argparse._SubParsersAction, ex: exercise.Exercise) -> None:
    parser = commands.add_parser(
        "build-web",
        help="build the student's page as a static site",
        description=f"Build the students' page of {ex.title} as a static site: the statement, an editor, the tests in the browser.",
    )
    parser.add_argument("--out", help="where to write it (default: build/web in the exercise's folder)")
    parser.add_argument("--if-needed", action="store_true", help="build only if an input changed since the last build")
    add_exercise_option(parser)
    parser.set_defaults(func=cmd_build_web)
