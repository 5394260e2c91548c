"""What a person watching `meteor-kit grade` sees: a progress bar, then a summary of the class."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import TextIO

BAR = 30


class Progress:
    """A one-line bar, redrawn in place; silent unless the stream is a terminal."""

    def __init__(self, total: int, stream: TextIO):
        self.total = total
        self.done = 0
        self.stream = stream
        self.live = stream.isatty()
        self.started = time.monotonic()
        self._drawn = 0.0

    def update(self, result: dict) -> None:
        self.done += 1
        now = time.monotonic()
        if self.live and (now - self._drawn > 0.1 or self.done == self.total):
            self._drawn = now
            filled = BAR * self.done // max(self.total, 1)
            rate = self.done / max(now - self.started, 1e-9)
            self.stream.write(f"\r[{'#' * filled}{'.' * (BAR - filled)}] {self.done}/{self.total}  {rate:.1f}/s  {result['submission'][:30]:<30}")
            self.stream.flush()

    def finish(self) -> None:
        if self.live:
            self.stream.write("\n")
            self.stream.flush()


ISOLATION_LINES = {
    "bubblewrap": "isolation: bubblewrap (each submission in its own jail)",
    "separate-uid": "isolation: separate-uid (root without a usable bubblewrap: a chroot and a uid of its own; "
    "not hidden: the network)",
    "none": "isolation: NONE - this run was NOT isolated (--no-sandbox)",
}


def summary(results: list[dict], elapsed: float, out: Path, isolation: str = "") -> str:
    """The score distribution and the tests the class failed most often."""
    lines = [f"graded {len(results)} submission(s) in {elapsed:.1f} s ({len(results) / max(elapsed, 1e-9):.1f}/s)"]
    if isolation:
        lines.append(ISOLATION_LINES.get(isolation, f"isolation: {isolation}"))
    statuses = Counter(r["status"] for r in results)
    if statuses["error"]:
        lines.append(f"{statuses['error']} could not be graded (see their message in results.json):")
        for r in [r for r in results if r["status"] == "error"][:10]:
            lines.append(f"  {r['submission']}: {r['message'][:120]}")
    lines.append("\nscore distribution (percent of the maximum):")
    bins = Counter()
    for r in results:
        percent = 100 * r["score"] / r["max_score"] if r["max_score"] else 0
        bins[min(int(percent // 10), 9)] += 1
    widest = max(bins.values(), default=1)
    for b in range(9, -1, -1):
        label = "90-100" if b == 9 else f"{b * 10}-{b * 10 + 9}"
        bar = "#" * round(40 * bins[b] / widest) if bins[b] else ""
        lines.append(f"  {label:>6}%  {bins[b]:>5}  {bar}")
    failed = Counter(t["name"] for r in results for t in r["tests"] if t["status"] != "pass" and r["status"] == "graded")
    if failed:
        lines.append("\nfailed most often:")
        graded = statuses["graded"]
        for name, count in failed.most_common(10):
            lines.append(f"  {count:>5}/{graded}  {name}")
    mistakes = Counter((r.get("diagnosis") or {}).get("mistake") for r in results)
    mistakes.pop(None, None)
    if mistakes:
        lines.append("\nmistakes the diagnosis named most often:")
        for mistake, count in mistakes.most_common(5):
            lines.append(f"  {count:>5}  {mistake}")
    files = ["results.json", "grades.csv", "gradescope/"] + (["report.html"] if (out / "report.html").exists() else [])
    lines.append(f"\nwritten to {out}/: {', '.join(files)}")
    return "\n".join(lines)
