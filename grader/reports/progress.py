"""What a person watching `meteor-kit grade` sees: progress while it runs, then a summary of the class.

Names and messages come from students' files: they pass through `_visible`, so a control
character in a file name cannot move the cursor, clear the screen or retitle the window.
"""

from __future__ import annotations

import os
import time
import unicodedata
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TextIO

from grader.core.results import ClassRun, Status, SubmissionStatus, Unwritten
from grader.core.safe_text import for_terminal
from grader.reports.tally import BINS, UNSCORED, category, tally

BAR = 30  # the widest bar, in cells
REDRAW = 0.1  # seconds between two redraws of the bar on a terminal
EVERY = 5.0  # seconds between two plain lines without a terminal


def _visible(text: str) -> str:
    """`text` on one line, with every control character written out, never obeyed."""
    return for_terminal(text, one_line=True)


def _cells(char: str) -> int:
    """Terminal cells one character takes: 2 for wide East Asian characters, 0 for combining marks."""
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def fit(text: str, width: int) -> str:
    """`text` cut to at most `width` terminal cells."""
    used, kept = 0, []
    for char in text:
        used += _cells(char)
        if used > width:
            break
        kept.append(char)
    return "".join(kept)


def _duration(seconds: float) -> str:
    seconds = int(seconds + 0.5)
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class Progress:
    """On a terminal, one line redrawn in place; otherwise a plain line every few seconds (logs, CI)."""

    def __init__(self, total: int, stream: TextIO, clock: Callable[[], float] = time.monotonic, every: float = EVERY):
        self.total = total
        self.done = 0
        self.stream = stream
        self.clock = clock
        self.every = every
        try:
            self.live = stream.isatty()
        except (AttributeError, ValueError):
            self.live = False
        self.started = clock()
        self._written: float | None = None
        self._drawn = False

    def _columns(self) -> int:
        try:
            return os.get_terminal_size(self.stream.fileno()).columns or 80
        except (OSError, AttributeError, ValueError):
            return 80

    def _figures(self, now: float) -> tuple[str, str]:
        elapsed = max(now - self.started, 1e-9)
        rate = self.done / elapsed
        left = "--:--" if not self.done else _duration((self.total - self.done) / rate)
        return f"{rate:.1f}/s", left

    def line(self, name: str, now: float, columns: int) -> str:
        """The bar for a terminal `columns` wide: always shorter than the width, so it never wraps."""
        rate, left = self._figures(now)
        figures = f" {self.done}/{self.total} {rate} ETA {left}"
        room = columns - 1  # writing the last column makes some terminals wrap at once
        bar = min(BAR, (room - len(figures)) // 2 - 2)  # half of what is left: the rest for the name
        text = figures.lstrip()
        if bar >= 5:
            filled = bar * self.done // max(self.total, 1)
            text = f"[{'#' * filled}{'.' * (bar - filled)}]{figures}"
        text = fit(text, room)
        rest = room - len(text) - 2
        if rest > 3 and name:
            text += "  " + fit(_visible(name), rest)
        return text

    def update(self, result: Mapping[str, Any]) -> None:
        """One more submission graded: `result` as the worker pool hands it over (grader/judging/grade.py)."""
        self.done += 1
        now = self.clock()
        last = self.done == self.total
        if self.live:
            if self._written is None or now - self._written >= REDRAW or last:
                self._written = now
                columns = self._columns()
                text = self.line(str(result["submission"]), now, columns)
                # Spaces clear what a longer line before left behind, up to the same safe width.
                self.stream.write("\r" + text + " " * max(0, columns - 1 - sum(map(_cells, text))))
                self.stream.flush()
                self._drawn = True
        elif self._written is None or now - self._written >= self.every or last:
            self._written = now
            rate, left = self._figures(now)
            percent = 100 * self.done // max(self.total, 1)
            self.stream.write(f"graded {self.done}/{self.total} ({percent}%), {rate}, about {left} left\n")
            self.stream.flush()

    def finish(self) -> None:
        if self.live and self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False


ISOLATION_LINES = {
    "bubblewrap": "isolation: bubblewrap (each submission in a cell of its own: namespaces, tmpfs, uid, cgroup, seccomp)",
    "separate-uid": "isolation: separate-uid (root without a usable bubblewrap: a chroot, a uid of its own, seccomp; "
    "the note at the start says the rest)",
    "none": "isolation: NONE - this run was NOT isolated (--no-sandbox)",
}


def summary(run: ClassRun, out: Path) -> str:
    """The score distribution and the tests the class failed most often (counts as in report.html)."""
    results, elapsed = run.submissions, run.duration
    counts = tally(results)
    lines = [f"graded {len(results)} submission(s) in {elapsed:.1f} s ({len(results) / max(elapsed, 1e-9):.1f}/s)"]
    if run.isolation:
        lines.append(ISOLATION_LINES.get(run.isolation, f"isolation: {_visible(run.isolation)}"))
    if run.paths:
        lines.append(ran_as(run.paths))
    errors = [r for r in results if category(r) in ("never_loaded", "grader_error")]
    if errors:
        lines.append(f"{len(errors)} could not be graded (see their message in results.json):")
        for r in errors[:10]:
            lines.append(f"  {_visible(r.submission)}: {_visible(r.message[:120])}")
    noted = [r for r in results if r.note]
    if noted:
        lines.append(f"{len(noted)} with a note on the file graded (the note column of grades.csv):")
        for r in noted[:10]:
            lines.append(f"  {_visible(r.submission)}: {_visible(r.note[:160])}")
    late = sum(bool(r.student is not None and r.student.late) for r in results)
    if late:
        lines.append(f"{late} submitted late (by the LMS's own flag)")
    reused = sum(r.reused for r in results)
    if reused:
        lines.append(f"{reused} unchanged since the last run: results kept")
    lines.append(f"{counts.all_passed} passed every test")
    lines.append(f"\nscore distribution of the {counts.graded} graded (percent of the maximum):")
    widest = max(counts.bins + [counts.categories[k] for k in UNSCORED] + [1])
    rows = [("90-100%" if b == BINS - 1 else f"{b * 10}-{b * 10 + 9}%", counts.bins[b]) for b in range(BINS - 1, -1, -1)]
    rows += [
        (label, counts.categories[kind]) for kind, label in UNSCORED.items() if kind == "never_loaded" or counts.categories[kind]
    ]
    side = max(len(label) for label, _ in rows)
    for label, count in rows:
        bar = "#" * round(30 * count / widest) if count else ""  # the line stays within 60 columns
        lines.append(f"  {label:<{side}}  {count:>5}  {bar}".rstrip())
    failed = Counter(t.name for r in results for t in r.tests if t.status != Status.PASS and r.status == SubmissionStatus.GRADED)
    if failed:
        lines.append("\nfailed most often:")
        for name, count in failed.most_common(10):
            lines.append(f"  {count:>5}/{counts.graded}  {_visible(str(name))}")
    if counts.mistakes:
        lines.append("\ndiagnoses, most common first:")
        for mistake, count in counts.mistakes.most_common(5):
            lines.append(f"  {count:>5}  {_visible(str(mistake))}")
    if run.similar:
        lines.append(
            f"\nsimilar code: {len(run.similar)} pair(s) flagged, first {_visible(run.similar[0].a)} and "
            f"{_visible(run.similar[0].b)} (see report.html)"
        )
    lines.append(written(out, run.unwritten))
    return "\n".join(lines)


def interrupted(run: ClassRun, out: Path) -> list[str]:
    """What `grade` says when Ctrl+C stopped it: the outputs it could not write, and what was graded."""
    lines = [f"NOT WRITTEN: {_visible(u.output)}: {_visible(u.error)}" for u in run.unwritten or []]
    left = sum(r.status == SubmissionStatus.NOT_GRADED for r in run.submissions)
    if not left and run.similar is None:  # the check for similar code was cut short
        lines.append(f"meteor-kit grade: interrupted; every submission graded, {run.similar_note}; written to {out}/")
    else:
        total = len(run.submissions)
        lines.append(
            f"meteor-kit grade: interrupted; {total - left} of {total} graded, written to {out}/ with the other {left} marked not_graded"
        )
    return lines


def ran_as(paths: Mapping[str, str]) -> str:
    """Which way the tests ran (results.json's `paths`): "tests: memoized; property tests: replay (hypothesis 6.155.2)"."""
    why = f", {paths['why']}" if paths.get("why") else ""
    return (
        f"tests: {paths.get('tests', '?')}; property tests: {paths.get('property_tests', '?')} "
        f"(hypothesis {paths.get('hypothesis', '?')}{why})"
    )


def written(out: Path, unwritten: list[Unwritten] | None = None) -> str:
    """The line naming the files written into `out`, then one line for each output that could not be."""
    failed = {u.output for u in unwritten or []}
    files = [f for f in ("results.json", "grades.csv", "gradescope/", "report.html", "report/") if f not in failed]
    lines = [f"\nwritten to {_visible(str(out))}/: {', '.join(files)}"]
    for u in unwritten or []:
        lines.append(f"NOT WRITTEN: {_visible(u.output)}: {_visible(u.error)}")
    return "\n".join(lines)
