"""Tier `properties`: invariants on generated inputs; a failure shows the simplest counterexample."""

import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from grader.core import exercise
from grader.core.checks import WrongAnswer

VALUES = exercise.holding(__file__).module("values")  # the value rule of the exercise holding this file

pytestmark = pytest.mark.tier("properties")

TEXTS = st.text(alphabet="abc ", max_size=8)  # TODO: your inputs' strategy (the twins draw from another)


def answer(submission, *args):
    """The submission's answer, the call noted: a failure shows it (keep inputs in notes, never in messages)."""
    note(f"top_words({', '.join(map(repr, args))})")
    return submission.top_words(*args)


def _twice(submission, *args):
    if not VALUES.same(answer(submission, *args), answer(submission, *args)):
        raise WrongAnswer("the same call, made twice, returned two different answers: keep no state between calls")


# TODO: your invariants, one test each. A constant passes this one: it is in exercise.toml's constant_passes.
@given(text=TEXTS)
def test_same_answer_twice(submission, text):
    _twice(submission, text)
