"""The time budget: the most one submission's own code may use in all, loads and calls, and what it used.

What it used is its own time: the wall-clock time the grader waited on it, less the time its
processes were ready to run but waited for a CPU that others held (the cell's clock says how
long: timing.Clock). So a busy machine does not eat into a student's budget, and a submission
that sleeps still spends it. A call that timed out is charged its whole limit, as its verdict
says it took. The wall-clock time stands in for own time (it is never less) until the budget
looks spent, and the clock then says whether it is: no call pays for a reading of it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from grader.sandbox.timing import Clock


class Budget:
    """Seconds the submission may use (None or 0: no limit), and what it used."""

    def __init__(self, seconds: float | None = None) -> None:
        self.seconds = seconds or None
        self.clock: Clock | None = None
        self.reset()

    def reset(self) -> None:
        """Nothing used yet (a full run from the start has the whole budget again)."""
        self.wall = 0.0  # wall-clock time charged: loads and calls
        self.penalty = 0.0  # what timed-out calls are charged beyond the time they took
        self.carried = 0.0  # what an earlier cell used (its jail failed and a new one took over)
        self.start: tuple[float, float] | None = None  # the clock when it started counting
        self.free = (0.0, 0.0)  # CPU and stall of calls made for the grader's own sake (not charged)

    def attach(self, clock: Clock | None) -> None:
        """The submission's cell is open: its clock counts from now (what an earlier cell used is kept)."""
        if self.clock is not None:
            self.carried = self.used - self.penalty
            self.wall = 0.0
            self.free = (0.0, 0.0)
        self.clock = clock
        self.start = clock.read() if clock is not None else None

    @property
    def used(self) -> float:
        """Seconds used so far: the wall-clock time waited (never less than the own time), until that says spent;
        then the clock says how much of it the submission's processes spent waiting for a CPU others held."""
        estimate = self.wall + self.penalty + self.carried
        if self.clock is None or self.start is None or self.seconds is None or estimate < self.seconds:
            return estimate
        cpu, stall = self.clock.read()
        cpu -= self.start[0] + self.free[0]
        stall -= self.start[1] + self.free[1]
        # Stalls between calls count too (a process it left running): never below its CPU time.
        return max(cpu, self.wall - stall) + self.penalty + self.carried

    def remaining(self) -> float | None:
        return None if not self.seconds else self.seconds - self.used

    def limit(self, wanted: float) -> tuple[float, bool]:
        """Seconds the next call may take (at most `wanted`), and whether the budget is what sets them."""
        remaining = self.remaining()
        if remaining is not None and remaining < wanted:
            return max(remaining, 0.0), True
        return wanted, False

    def spent(self) -> str | None:
        """Why nothing more can run: the budget is used up (None while some is left)."""
        if self.seconds and self.used >= self.seconds:
            return self.text()
        return None

    def text(self) -> str:
        return f"not run: the submission used up its time budget of {self.seconds:g} s"

    def timed_out(self, charge: float, took: float) -> None:
        """A call that timed out is charged `charge` in all (it took `took` of that already)."""
        self.penalty += max(charge - took, 0.0)

    @contextmanager
    def charging(self) -> Iterator[None]:
        """The time spent inside counts as the submission's."""
        started = time.monotonic()
        try:
            yield
        finally:
            self.wall += time.monotonic() - started

    @contextmanager
    def suspended(self) -> Iterator[None]:
        """No limit inside, and nothing charged: for calls the grader makes for its own sake."""
        saved = self.seconds, self.wall, self.penalty
        before = self.clock.read() if self.clock is not None and self.start is not None else None
        self.seconds = None
        try:
            yield
        finally:
            self.seconds, self.wall, self.penalty = saved
            if before is not None and self.clock is not None:
                after = self.clock.read()
                self.free = (self.free[0] + after[0] - before[0], self.free[1] + after[1] - before[1])
