"""`meteor-kit check`: one submission's tests and diagnosis, printed (grader/judging/check.py runs them)."""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys
from pathlib import Path

from grader.cli.exercise_option import add_exercise_option
from grader.cli.grade import _positive_float
from grader.core import exercise
from grader.core.safe_text import clean, for_terminal
from grader.reports.terminal import render_report


def cmd_check(args: argparse.Namespace) -> int:
    from grader.judging.check import check
    from grader.sandbox.host import enter_mode

    ex = args.exercise
    mode = enter_mode("meteor-kit check", args.no_sandbox, [args.path, ex.root])
    if mode is None:
        return 2
    tiers = tuple(args.tiers.split(",")) if args.tiers else tuple(ex.tiers)
    unknown = set(tiers) - set(ex.tiers)
    if unknown:
        print(f"meteor-kit check: unknown tier(s): {for_terminal(', '.join(sorted(unknown)), one_line=True)}", file=sys.stderr)
        return 2
    checked = check(ex, str(args.path), tiers, args.budget)
    report, diagnosis = checked.report, checked.diagnosis
    if args.json:
        # The browser's report shape exactly: the isolation mode goes to stderr above.
        json.dump(clean({**report.as_json(), "diagnosis": diagnosis.as_json() if diagnosis else None}), sys.stdout, indent=2)
        print()
    else:
        color = sys.stdout.isatty()
        print(render_report(report, color=color))
        if diagnosis:
            label = "\033[1;33mDiagnosis:\033[0m" if color else "Diagnosis:"
            print(f"\n{label} {for_terminal(diagnosis.text)}")
    return 0 if checked.all_passed else 1


def _existing_file(text: str) -> Path:
    path = Path(text)
    if not os.path.lexists(text):
        raise argparse.ArgumentTypeError(f"no such file: {for_terminal(text, one_line=True)}")
    if stat.S_ISDIR(os.lstat(text).st_mode):
        raise argparse.ArgumentTypeError(f"{for_terminal(text, one_line=True)} is a directory; give a .py file")
    return path


def register(commands: argparse._SubParsersAction, ex: exercise.Exercise) -> None:
    check = commands.add_parser(
        "check",
        help="run every test tier against one submission and print a report",
        description=f"Run every tier of {ex.title}'s tests against one submission, sandboxed, and print a report.",
    )
    check.add_argument("path", type=_existing_file, help="the submission: a .py file or an .ipynb notebook")
    check.add_argument("--tiers", help="comma-separated tiers to run (default: all)")
    check.add_argument("--json", action="store_true", help="print the JSON report instead")
    check.add_argument(
        "--no-sandbox",
        action="store_true",
        help="where no isolation works (not root, no usable bubblewrap), run it anyway, NOT isolated",
    )
    check.add_argument(
        "--budget",
        type=_positive_float,
        default=ex.budget,
        help=f"seconds the submission may use in all (default {ex.budget:g}, as grade); the tests after that are reported not run",
    )
    add_exercise_option(check)
    check.set_defaults(func=cmd_check)
