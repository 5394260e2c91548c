"""The misconception models, the probes and the rules' words (exercise.toml [seam] trusted). Never shipped.

A model is the reference with one rule broken as students break it. The engine runs the reference
and every model on the probes; a failing submission that agrees with a model wherever the model
differs from the reference is told that mistake (docs/feedback.md). Where none fits, the diagnosis
names the rules whose tests fail, in RULES's words.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from grader.core import exercise, twins

# TODO: each rule of exercise.toml's [scoring.rules], as the statement says it: (where, the rule).
RULES = {
    "first": ("rule 1, First rule", "return the arguments, in order, as a list"),
}


def reference(*args, **kwargs):
    """The reference's answer: a model often changes one step of it, or computes its own."""
    return twins.reference(exercise.holding(__file__).root).top_words(*args, **kwargs)


@dataclass(frozen=True)
class Model:
    id: str
    when: str  # completes "Your scores match what happens when ..."
    section: str  # where its rule lives in the statement
    rule: str  # the rule it breaks, as the statement says it
    breaks: str  # that rule's id in [scoring.rules]
    answer: Callable[..., object]  # what the function returns with this mistake

    def top_words(self, *args, **kwargs):
        return self.answer(*args, **kwargs)


# TODO: one model per classic mistake, each with a probe where it differs from the reference.
MODELS = [
    Model(
        "ignores_k",
        "k is ignored and its default always used",
        "rule 1, First rule",
        "use every argument, k too",
        "first",
        answer=lambda *args, k=None, **kwargs: reference(*args, **kwargs),
    ),
]
PAIRS: list = []  # optional: models of two mistakes at once, each with `parts` (two ids)


def probes() -> list[dict]:
    """The diagnosis's inputs: the statement's examples, then ours. Never a hidden test's input: probes are quoted."""
    return [
        {"args": ["one"], "kwargs": {}, "origin": "examples"},
        {"args": ["sun"], "kwargs": {"k": 4}, "origin": "probe"},
    ]
