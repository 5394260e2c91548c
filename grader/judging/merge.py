"""`meteor-kit merge`: the outputs of `grade --shard K/N` runs put together, as one run gives them.

Each shard's results.json holds its own students; the merged one holds them all, in the order
one run lists them (by name), and every other file (grades.csv, gradescope/, the report) is
written from it. Similar code is checked again over the whole class, since a copy and its
original may have been graded on different machines.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from grader.judging import passback
from grader.reports.files import write_outputs


class MergeError(Exception):
    """Parts that cannot be merged: the command stops before writing anything."""


def merge(parts: list[dict]) -> dict:
    """One results document from the documents of the shards."""
    if not parts:
        raise MergeError("nothing to merge")
    exercises = {p.get("exercise") for p in parts}
    if len(exercises) != 1:
        raise MergeError(f"the parts grade different exercises: {', '.join(sorted(map(str, exercises)))}")
    shards = [p.get("shard") for p in parts]
    if all(shards):
        counts = {s[1] for s in shards}
        seen = sorted(s[0] for s in shards)
        if len(counts) != 1 or seen != list(range(1, counts.pop() + 1)):
            print(
                f"warning: the parts are shards {', '.join(f'{a}/{b}' for a, b in shards)}: some may be missing", file=sys.stderr
            )
    results: dict[str, dict] = {}
    for part in parts:
        for r in part.get("submissions", []):
            if r["submission"] in results:
                raise MergeError(f"{r['submission']} is in more than one part")
            results[r["submission"]] = r
    modes = sorted({str(p.get("isolation")) for p in parts})
    return {
        "exercise": exercises.pop(),
        # The weakest mode must show: a class is only as isolated as its least isolated part.
        "isolation": modes[0] if len(modes) == 1 else "mixed: " + ", ".join(modes),
        "settings": parts[0].get("settings", {}),
        "duration": round(sum(p.get("duration", 0) for p in parts), 3),
        "interrupted": any(p.get("interrupted") for p in parts),
        "submissions": [results[name] for name in sorted(results)],
    }


def cmd_merge(args: argparse.Namespace) -> int:
    from grader.judging.grade import UsageError, _check_out, _similar

    parts = []
    try:
        for folder in args.parts:
            try:
                parts.append(json.loads((Path(folder) / "results.json").read_text(encoding="utf-8")))
            except (OSError, ValueError) as exc:
                raise MergeError(f"cannot read {folder}/results.json: {exc}") from None
        _check_out(args.out, [])
        extras = passback.load(args)
        document = merge(parts)
    except (MergeError, UsageError) as exc:
        print(f"meteor-kit merge: {exc}", file=sys.stderr)
        return 2
    document["similar"], document["similar_note"] = _similar(document["submissions"])
    done = passback.apply(document, extras)
    passback.write(args.out, document, extras, done)
    write_outputs(args.out, document)
    print(f"merged {len(parts)} part(s): {len(document['submissions'])} submission(s), written to {args.out}/")
    for line in passback.summary(document, done):
        print(line)
    return 0


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "merge",
        help="put the outputs of `grade --shard K/N` runs together",
        description="Merge the --out folders of several `meteor-kit grade --shard K/N` runs into the files one run writes.",
    )
    parser.add_argument("parts", nargs="+", metavar="OUT", help="the --out folder of one shard")
    parser.add_argument("--out", required=True, type=Path, help="directory for the merged output files")
    passback.add_options(parser)
    parser.set_defaults(func=cmd_merge)
