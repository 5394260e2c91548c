"""The counts of a graded class, shared by the terminal summary and the class report so that they agree."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

BINS = 10  # bins of 10 percentage points, the last one including 100 %
# Results that have no score to put in a bin: each is counted apart from low scores.
UNSCORED = {
    "never_loaded": "never loaded",
    "grader_error": "grader failed",
    "not_graded": "not graded (interrupted)",
}
LOAD_FAILED = "could not load the submission"


def category(result: dict) -> str:
    """ "graded", or why the result has no score: one of UNSCORED."""
    status = result.get("status", "graded")
    if status == "graded":
        return "graded"
    if status == "not_graded":
        return "not_graded"
    return "never_loaded" if str(result.get("message", "")).startswith(LOAD_FAILED) else "grader_error"


def fraction(result: dict) -> float:
    top = result.get("max_score") or 0
    score = result.get("adjusted_score", result.get("score") or 0)  # an instructor's adjustment counts
    return score / top if top else 0.0


def score_bin(result: dict) -> int:
    return min(int(fraction(result) * BINS), BINS - 1)


def mistake_key(diagnosis: dict | None) -> str | None:
    """The name a diagnosis groups under, or None for a result without one.

    A model's id; where no model fits, the rule the failing tests point to first ("(rule: round)"),
    "(one answer)" for one answer to every input, "(no answer)", or "(no known mistake)".
    """
    if not diagnosis:
        return None
    if diagnosis.get("mistake"):
        return diagnosis["mistake"]
    kind = diagnosis.get("kind")
    if kind == "rules" and diagnosis.get("rules"):
        return f"(rule: {diagnosis['rules'][0]})"
    return {"no_answer": "(no answer)", "constant": "(one answer)"}.get(str(kind), "(no known mistake)")


def all_passed(result: dict) -> bool:
    tests = result.get("tests") or []
    return category(result) == "graded" and bool(tests) and all(t.get("status") == "pass" for t in tests)


@dataclass
class Tally:
    total: int = 0
    categories: Counter = field(default_factory=Counter)
    bins: list[int] = field(default_factory=lambda: [0] * BINS)  # graded results only
    all_passed: int = 0
    mistakes: Counter = field(default_factory=Counter)

    @property
    def graded(self) -> int:
        return self.categories["graded"]


def tally(results: list[dict]) -> Tally:
    counts = Tally(total=len(results))
    for r in results:
        kind = category(r)
        counts.categories[kind] += 1
        if kind == "graded":
            counts.bins[score_bin(r)] += 1
        counts.all_passed += all_passed(r)
        key = mistake_key(r.get("diagnosis"))
        if key:
            counts.mistakes[key] += 1
    return counts
