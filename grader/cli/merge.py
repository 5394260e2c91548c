"""`meteor-kit merge`: the command line that joins the shards of one class (grader.judging.merge joins them)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from grader.cli.exercise_option import add_exercise_option
from grader.core.exercise import Exercise
from grader.core.safe_text import for_terminal
from grader.judging import passback
from grader.judging.merge import MergeError, merge
from grader.reports.files import write_outputs
from grader.reports.progress import written


def cmd_merge(args: argparse.Namespace) -> int:
    from grader.cli.grade import UsageError, _check_out, _similar

    ex = args.exercise
    parts = []
    try:
        for folder in args.parts:
            try:
                parts.append(json.loads((Path(folder) / "results.json").read_text(encoding="utf-8")))
            except (OSError, ValueError) as exc:
                raise MergeError(f"cannot read {folder}/results.json: {exc}") from None
        _check_out(args.out, [])
        extras = passback.load(args, ex)
        document = merge(parts)
        if document.get("exercise") != ex.id:
            raise MergeError(
                f"the parts were graded on the exercise {document.get('exercise')!r}, not {ex.id!r}: "
                "give that exercise's folder with --exercise"
            )
    except (MergeError, UsageError) as exc:
        print(f"meteor-kit merge: {exc}", file=sys.stderr)
        return 2
    document["similar"], document["similar_note"] = _similar(document["submissions"], ex)
    done = passback.apply(document, extras)
    passback.write(args.out, document, extras, done, ex)
    try:
        unwritten = write_outputs(args.out, document, ex)
    except OSError as exc:  # results.json itself
        print(for_terminal(f"meteor-kit merge: results.json could not be written: {exc}", one_line=True), file=sys.stderr)
        return 1
    print(f"merged {len(parts)} part(s): {len(document['submissions'])} submission(s)" + written(args.out, unwritten))
    for line in passback.summary(document, done):
        print(line)
    return 1 if unwritten else 0


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
