"""`meteor-kit merge`: the outputs of `grade --shard K/N` runs put together, as one run gives them.

Each shard's results.json holds its own students; the merged one holds them all, in the order
one run lists them (by name), and every other file (grades.csv, gradescope/, the report) is
written from it. Similar code is checked again over the whole class, since a copy and its
original may have been graded on different machines.
"""

from __future__ import annotations

import sys


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
