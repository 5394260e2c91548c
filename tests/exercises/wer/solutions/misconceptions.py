"""The WER exercise's misconception models and probes (exercise.toml [seam] trusted). Never shipped to the page.

Each model is the reference with one rule of the statement broken; the engine runs them on
the probes and names the model whose answers a submission's match.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


def _edit_distance(ref: list[str], hyp: list[str]) -> int:
    row = list(range(len(hyp) + 1))
    for i, word in enumerate(ref, 1):
        previous, row[0] = row[0], i
        for j, other in enumerate(hyp, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (word != other))
    return row[-1]


def _positional(ref: list[str], hyp: list[str]) -> int:
    return sum(a != b for a, b in zip(ref, hyp)) + abs(len(ref) - len(hyp))


# Each rule of exercise.toml's [scoring.rules], as the statement says it (where, the rule): where no
# model matches, the diagnosis names the rules whose tests fail in these words.
RULES = {
    "words": ("rule 1, Words", "lowercase each text with str.lower() and split it with str.split()"),
    "errors": ("rule 2, Errors", "count the fewest substitutions, deletions and insertions (the edit distance over words)"),
    "rate": ("rule 3, Rate", "WER = errors / N, N the reference's words, rounded to 3 decimals; it can be above 1"),
    "empty": ("rule 4, No reference words", "WER is 0.0 if the hypothesis has no words either, else 1.0"),
    "detail": ("rule 5, Detail", 'with detail=True, return {"wer": WER, "errors": errors, "words": N}'),
}


@dataclass(frozen=True)
class Model:
    id: str
    when: str  # completes "Your scores match what happens when ..."
    section: str
    rule: str
    breaks: str  # the rule of [scoring.rules] whose tests it breaks
    tokens: Callable[[str], list[str]] = lambda text: text.lower().split()
    distance: Callable[[list[str], list[str]], int] = _edit_distance
    over_hypothesis: bool = False
    rounded: bool = True

    def word_error_rate(self, reference, hypothesis, detail=False):
        ref, hyp = self.tokens(reference), self.tokens(hypothesis)
        errors = self.distance(ref, hyp)
        words = len(hyp) if self.over_hypothesis else len(ref)
        rate = errors / words if words else (0.0 if errors == 0 else 1.0)
        rate = round(rate, 3) if self.rounded else rate
        return {"wer": rate, "errors": errors, "words": len(ref)} if detail else rate


MODELS = [
    Model(
        "no_lowercase",
        "words are compared without lowercasing them",
        "rule 1, Words",
        "lowercase each text with str.lower()",
        "words",
        tokens=str.split,
    ),
    Model(
        "split_on_space",
        "texts are split on single spaces",
        "rule 1, Words",
        "split each text with str.split(), on any run of whitespace",
        "words",
        tokens=lambda text: text.lower().split(" "),
    ),
    Model(
        "positional",
        "words are compared position by position",
        "rule 2, Errors",
        "count the fewest substitutions, deletions and insertions (the edit distance over words)",
        "errors",
        distance=_positional,
    ),
    Model(
        "over_hypothesis",
        "the errors are divided by the hypothesis's length",
        "rule 3, Rate",
        "divide by N, the number of words in the reference",
        "rate",
        over_hypothesis=True,
    ),
    Model(
        "no_rounding",
        "the rate is not rounded",
        "rule 3, Rate",
        "round the rate to 3 decimals with round(x, 3)",
        "rate",
        rounded=False,
    ),
]
PAIRS: list = []  # no pairs: the page downloads every pair's answers, and these five seldom meet

# Our own inputs: each separates some models from the reference. Never a hidden test's input.
OUR_PROBES = [
    ("The Cat sat", "the cat sat"),
    ("one two  three", "one two three"),
    ("a b c d", "x a b c d"),
    ("red green blue", "red blue"),
    ("one two three", "one two three four five six"),
    ("a b c", "a b d"),
    ("x y z", "x y"),
    ("", ""),
    ("alpha beta gamma delta", "alpha gamma delta beta"),
]
EXAMPLES = [("the cat sat", "the cat sat down")]  # the statement's example


def probes() -> list[dict]:
    """The diagnosis's inputs: the statement's examples first, then ours; one with detail=True."""
    return (
        [{"args": [r, h], "kwargs": {}, "origin": "examples"} for r, h in EXAMPLES]
        + [{"args": [r, h], "kwargs": {}, "origin": "probe"} for r, h in OUR_PROBES]
        + [{"args": ["a b c", "a c"], "kwargs": {"detail": True}, "origin": "probe"}]
    )
