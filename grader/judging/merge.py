"""`meteor-kit merge`: the runs of `grade --shard K/N` put together, as one run gives them.

Each shard's results.json holds its own students; the merged run holds them all, in the order
one run lists them (by name), and every other file (grades.csv, gradescope/, the report) is
written from it (grader/judging/pipeline.py). Similar code is checked again over the whole
class, since a copy and its original may have been graded on different machines.
"""

from __future__ import annotations

import sys

from grader.core.results import ClassRun, SubmissionResult


class MergeError(Exception):
    """Parts that cannot be merged: the command stops before writing anything."""


def merge(parts: list[ClassRun]) -> ClassRun:
    """One run from the runs of the shards (what only a whole class has, similar code and the LMS's, is left to make)."""
    if not parts:
        raise MergeError("nothing to merge")
    exercises = {p.exercise for p in parts}
    if len(exercises) != 1:
        raise MergeError(f"the parts grade different exercises: {', '.join(sorted(exercises))}")
    shards = [p.shard for p in parts]
    if all(shards):
        counts = {s[1] for s in shards if s}
        seen = sorted(s[0] for s in shards if s)
        if len(counts) != 1 or seen != list(range(1, counts.pop() + 1)):
            print(
                f"warning: the parts are shards {', '.join(f'{s[0]}/{s[1]}' for s in shards if s)}: some may be missing",
                file=sys.stderr,
            )
    results: dict[str, SubmissionResult] = {}
    for part in parts:
        for r in part.submissions:
            if r.submission in results:
                raise MergeError(f"{r.submission} is in more than one part")
            results[r.submission] = r
    modes = sorted({p.isolation for p in parts})
    return ClassRun(
        exercise=exercises.pop(),
        # The weakest mode must show: a class is only as isolated as its least isolated part.
        isolation=modes[0] if len(modes) == 1 else "mixed: " + ", ".join(modes),
        settings=parts[0].settings,
        duration=round(sum(p.duration for p in parts), 3),
        interrupted=any(p.interrupted for p in parts),
        submissions=[results[name] for name in sorted(results)],
    )
