"""Tier `private`: the comparison with the reference, and each visible test's twin. Never shipped to the page."""

import random

import pytest
from hypothesis import strategies as st

from grader.core import exercise, twins
from grader.core.twins import call

EXERCISE = exercise.holding(__file__)  # the exercise whose folder holds this file
VALUES = EXERCISE.module("values")

pytestmark = pytest.mark.tier("private")


def _inputs(count: int) -> list[tuple]:
    """`count` argument lists from a seeded generator, the same on every run, the smallest first."""
    chooser = random.Random(1)
    words = ["one", "two", "three", "a", "b"]  # TODO: inputs like the statement's
    drawn = [tuple(" ".join(chooser.choices(words, k=chooser.randint(0, 3))) for _ in range(1)) for _ in range(count)]
    return sorted(drawn, key=lambda args: sum(map(len, args)))


def test_matches_the_reference(submission):
    expected = getattr(twins.reference(EXERCISE.root), EXERCISE.function)
    for args in _inputs(EXERCISE.private_examples):
        VALUES.expect(submission.top_words(*args), expected(*args), call=f"top_words({', '.join(map(repr, args))})")


# Twins (docs/scoring.md): a visible test pays only if its twin, its rule on an input no student sees,
# passes too. TODO: a row per test judged by its answer (the reference gives the answer), of the same
# shape with another answer; each property runs again on other strategies.
ANSWERS = twins.answers(
    EXERCISE,
    {
        "examples-first_example": call("red"),
        "hidden-first_rule": call("cat", k=5),
    },
    check=VALUES.expect,
)
PROPERTIES = twins.properties(EXERCISE.tests_dir / "test_properties.py", {"text": st.text(alphabet="xyz", min_size=1, max_size=8)})
TWINS = {**ANSWERS, **PROPERTIES}


@pytest.mark.parametrize("key", TWINS)
def test_twin(submission, key):
    """The twin of one visible test: its rule on inputs no student sees."""
    TWINS[key](submission)
