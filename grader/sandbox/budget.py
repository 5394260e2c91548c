"""The time budget: the most one submission's own code may use in all, loads and calls, and what it used."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass
class Budget:
    """Seconds the submission may use (None or 0: no limit) and the seconds it used, waited on by the grader."""

    seconds: float | None = None
    used: float = 0.0

    def remaining(self) -> float | None:
        # It counts the submission's own time (loads and calls), not the tests' work on the
        # trusted side, so a busy grading machine does not eat into a student's budget.
        return None if not self.seconds else self.seconds - self.used

    def limit(self, wanted: float) -> tuple[float, bool]:
        """Seconds the next wait may take (at most `wanted`), and whether the budget is what sets them."""
        remaining = self.remaining()
        if remaining is not None and remaining < wanted:
            return max(remaining, 0.0), True
        return wanted, False

    def spent(self) -> str | None:
        """Why nothing more can run: the budget is used up (None while some is left)."""
        remaining = self.remaining()
        return self.text() if remaining is not None and remaining <= 0 else None

    def text(self) -> str:
        return f"not run: the submission used up its time budget of {self.seconds:g} s"

    @contextmanager
    def charging(self) -> Iterator[None]:
        """The time spent inside counts as the submission's."""
        started = time.monotonic()
        try:
            yield
        finally:
            self.used += time.monotonic() - started

    @contextmanager
    def suspended(self) -> Iterator[None]:
        """No limit inside, and nothing charged: for calls the grader makes for its own sake."""
        saved = self.seconds, self.used
        self.seconds = None
        try:
            yield
        finally:
            self.seconds, self.used = saved
