"""`meteor-kit merge`: the command line that joins the shards of one class (grader.judging.merge joins them)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from grader.cli.exercise_option import add_exercise_option
from grader.core.exercise import Exercise
from grader.core.results import ClassRun
from grader.core.safe_text import for_terminal
from grader.judging import passback
from grader.judging.discovery import UsageError
from grader.judging.intake import check_out
from grader.judging.merge import MergeError, merge
from grader.judging.pipeline import ClassRequest, ResultsNotWritten, grade_class
from grader.reports.progress import written


def cmd_merge(args: argparse.Namespace) -> int:
    ex = args.exercise
    try:
        parts = [_part(Path(folder)) for folder in args.parts]
        check_out(args.out, [])
        lms = passback.load(args, ex)
        merged = merge(parts)
        if merged.exercise != ex.id:
            raise MergeError(
                f"the parts were graded on the exercise {merged.exercise!r}, not {ex.id!r}: "
                "give that exercise's folder with --exercise"
            )
    except (MergeError, UsageError) as exc:
        print(f"meteor-kit merge: {exc}", file=sys.stderr)
        return 2
    try:
        run = grade_class(ClassRequest(ex, out=args.out, passback=lms, merged=merged))
    except ResultsNotWritten as exc:  # results.json itself
        print(for_terminal(f"meteor-kit merge: results.json could not be written: {exc}", one_line=True), file=sys.stderr)
        return 1
    print(f"merged {len(parts)} part(s): {len(run.submissions)} submission(s)" + written(args.out, run.unwritten))
    for line in passback.summary(run, lms):
        print(line)
    return 1 if run.unwritten else 0


def _part(folder: Path) -> ClassRun:
    """The run one shard wrote into `folder`."""
    try:
        return ClassRun.from_json(json.loads((folder / "results.json").read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise MergeError(f"cannot read {folder}/results.json: {exc}") from None


def register(commands: argparse._SubParsersAction, ex: Exercise) -> None:
    parser = commands.add_parser(
        "merge",
        help="put the outputs of `grade --shard K/N` runs together",
        description=f"Merge the --out folders of several `meteor-kit grade --shard K/N` runs of {ex.title} "
        "into the files one run writes.",
    )
    parser.add_argument("parts", nargs="+", metavar="OUT", help="the --out folder of one shard")
    parser.add_argument("--out", required=True, type=Path, help="directory for the merged output files")
    passback.add_options(parser)
    add_exercise_option(parser)
    parser.set_defaults(func=cmd_merge)
