"""The counts of a graded class, shared by the terminal summary and the class report so that they agree."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from grader.core.results import SubmissionResult, SubmissionStatus

BINS = 10  # bins of 10 percentage points, the last one including 100 %
# Results that have no score to put in a bin: each is counted apart from low scores.
UNSCORED = {
    "never_loaded": "never loaded",
    "grader_error": "grader failed",
    "not_graded": "not graded (interrupted)",
}
LOAD_FAILED = "could not load the submission"


def category(result: SubmissionResult) -> str:
    """ "graded", or why the result has no score: one of UNSCORED."""
    if result.status == SubmissionStatus.GRADED:
        return "graded"
    if result.status == SubmissionStatus.NOT_GRADED:
        return "not_graded"
    return "never_loaded" if result.message.startswith(LOAD_FAILED) else "grader_error"


def fraction(result: SubmissionResult) -> float:
    """The final score (an instructor's adjustment counts) as a share of the maximum."""
    return result.final_score / result.max_score if result.max_score else 0.0


def score_bin(result: SubmissionResult) -> int:
    return min(int(fraction(result) * BINS), BINS - 1)


def mistake_key(result: SubmissionResult) -> str | None:
    """The name `result`'s diagnosis groups under (Diagnosis.key), or None without one."""
    return result.diagnosis.key if result.diagnosis is not None else None


@dataclass
class Tally:
    total: int = 0
    categories: Counter[str] = field(default_factory=Counter)
    bins: list[int] = field(default_factory=lambda: [0] * BINS)  # graded results only
    all_passed: int = 0
    mistakes: Counter[str] = field(default_factory=Counter)

    @property
    def graded(self) -> int:
        return self.categories["graded"]


def tally(results: list[SubmissionResult]) -> Tally:
    counts = Tally(total=len(results))
    for r in results:
        kind = category(r)
        counts.categories[kind] += 1
        if kind == "graded":
            counts.bins[score_bin(r)] += 1
        counts.all_passed += r.all_passed
        key = mistake_key(r)
        if key:
            counts.mistakes[key] += 1
    return counts
