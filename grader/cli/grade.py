"""`meteor-kit grade`: the command line of class grading (grader/judging/pipeline.py grades the class)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from grader.cli.exercise_option import add_exercise_option
from grader.core import exercise
from grader.core.safe_text import for_terminal
from grader.judging import passback
from grader.judging.discovery import UsageError
from grader.judging.grade import Settings
from grader.judging.intake import Downloads, check_out, discover_all, downloaded
from grader.judging.pipeline import ClassRequest, ResultsNotWritten, grade_class
from grader.judging.shard import in_shard, parse_shard
from grader.lms import registry
from grader.reports.progress import interrupted, summary
from grader.sandbox.host import enter_mode, isolation_note, unhide


def register(commands: argparse._SubParsersAction, ex: exercise.Exercise) -> None:
    parser = commands.add_parser(
        "grade",
        help="grade a class: every submission sandboxed, several at a time",
        description=f"Grade every SUBMISSION (a .py file, an .ipynb notebook, or a directory of them) on {ex.title}'s "
        "tests and write results.json, grades.csv and Gradescope results into --out.",
    )
    parser.add_argument("submissions", nargs="+", metavar="SUBMISSION")
    parser.add_argument(
        "--from",
        dest="layout",
        choices=registry.names(),
        help="the download's layout, when its detection is wrong (default: recognised from its names)",
    )
    parser.add_argument("--out", required=True, type=Path, help="directory for the output files")
    parser.add_argument(
        "--jobs",
        type=_positive_int,
        default=os.cpu_count() or 1,
        help="cores to grade on, a submission each, more while they stand idle (default: all)",
    )
    parser.add_argument(
        "--timeout",
        type=_positive_float,
        default=ex.call_timeout,
        help=f"seconds for one call into a submission (default {ex.call_timeout:g})",
    )
    parser.add_argument(
        "--budget",
        type=_positive_float,
        default=ex.budget,
        help=f"seconds of wall time for one submission in all (default {ex.budget:g})",
    )
    parser.add_argument(
        "--no-memo",
        dest="memo",
        action="store_false",
        help="run the tests in full for every submission, even one that behaves like an earlier one",
    )
    parser.add_argument(
        "--no-sandbox",
        action="store_true",
        help="where no isolation works (not root, no usable bubblewrap), run the submissions "
        "anyway, NOT isolated; every output then says so",
    )
    parser.add_argument(
        "--shard",
        type=parse_shard,
        metavar="K/N",
        help="grade only the Kth of N parts of the class (by a digest of each name); "
        "`meteor-kit merge` puts the parts' --out folders together",
    )
    parser.add_argument(
        "--fresh", action="store_true", help="grade every submission again, even those unchanged since the last run into --out"
    )
    passback.add_options(parser)
    add_exercise_option(parser)
    parser.set_defaults(func=cmd_grade)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return value


def cmd_grade(args: argparse.Namespace) -> int:
    try:
        with downloaded(args.submissions) as downloads:
            return _cmd_grade(args, downloads)
    except UsageError as exc:
        print(for_terminal(f"meteor-kit grade: {exc}", one_line=True), file=sys.stderr)
        return 2


def _cmd_grade(args: argparse.Namespace, downloads: Downloads) -> int:
    ex = args.exercise
    try:
        check_out(args.out, args.submissions)
        lms = passback.load(args, ex)  # before grading: a typo in either file must not cost the run
        tell = lambda line: print(for_terminal(line, one_line=True), file=sys.stderr)  # noqa: E731
        specs = discover_all(args.submissions, args.layout, tell, ex.function, ex.submission_file, downloads)
        if args.shard:
            specs = [spec for spec in specs if in_shard(spec.name, args.shard)]
    except UsageError as exc:
        print(for_terminal(f"meteor-kit grade: {exc}"), file=sys.stderr)
        return 2
    hidden = [*map(Path, args.submissions), *(Path(root) for root, _ in downloads.values()), args.out, ex.root]
    mode = enter_mode("meteor-kit grade", args.no_sandbox, hidden, create=(args.out,))
    if mode is None:
        return 2
    settings, note = Settings(ex, args.timeout, args.budget, args.memo), isolation_note(mode)
    request = ClassRequest(ex, settings, specs, args.jobs, mode, note, args.out, args.fresh, args.shard, passback=lms)
    try:
        run = grade_class(request)
    except KeyboardInterrupt:  # before any submission was graded
        print("meteor-kit grade: interrupted before any submission was graded; nothing was written", file=sys.stderr)
        return 130
    except ResultsNotWritten as exc:  # results.json itself: nothing is left to write it with
        print(for_terminal(f"meteor-kit grade: results.json could not be written: {exc}", one_line=True), file=sys.stderr)
        return 1
    finally:
        unhide()
    if run.interrupted:
        print("\n".join(interrupted(run, args.out)), file=sys.stderr)
        return 130
    print(summary(run, args.out))
    for line in passback.summary(run, lms):
        print(line)
    return 1 if run.unwritten else 0
