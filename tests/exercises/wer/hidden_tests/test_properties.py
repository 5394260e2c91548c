"""Tier `properties`: invariants on generated inputs."""

import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from grader.core import exercise
from grader.core.checks import WrongAnswer

VALUES = exercise.holding(__file__).module("values")  # the value rule of the exercise holding this file

pytestmark = pytest.mark.tier("properties")

words = st.lists(st.sampled_from(["the", "cat", "sat", "on", "mat", "Dog"]), min_size=1, max_size=8)


def rate(submission, reference, hypothesis, **kwargs):
    note(f"word_error_rate({reference!r}, {hypothesis!r})")
    return submission.word_error_rate(reference, hypothesis, **kwargs)


@given(words)
def test_identical_texts_have_no_errors(submission, ws):
    text = " ".join(ws)
    VALUES.expect_rate(rate(submission, text, text), 0.0)


@given(words, words)
def test_case_does_not_change_the_rate(submission, a, b):
    reference, hypothesis = " ".join(a), " ".join(b)
    lower = rate(submission, reference, hypothesis)
    upper = rate(submission, reference.upper(), hypothesis)
    if lower != upper:
        raise WrongAnswer(f"the rate changed from {lower!r} to {upper!r} when the reference was uppercased")


@given(words, words)
def test_detail_agrees_with_the_rate(submission, a, b):
    reference, hypothesis = " ".join(a), " ".join(b)
    got = rate(submission, reference, hypothesis, detail=True)
    if type(got) is not dict or not {"wer", "errors", "words"} <= set(got):
        raise WrongAnswer(f"with detail=True, word_error_rate returned {got!r}; it must return the detail dict")
    VALUES.expect_rate(got["wer"], rate(submission, reference, hypothesis))
    if got["words"] != len(a):
        raise WrongAnswer(f"words is {got['words']!r}, but the reference has {len(a)} words")
