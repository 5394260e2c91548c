"""Tier `examples`: the statement's examples. Students see the input, the expected value and what came back."""

import pytest

from grader.core import exercise
from grader.core.submission import SubmissionError

# The exercise's value rule (exercise.toml [seam] values).
VALUES = exercise.holding(__file__).module("values")  # the value rule of the exercise holding this file
expect_score, expected_text = VALUES.expect_score, VALUES.expected_text

pytestmark = pytest.mark.tier("examples")

# (reference, candidate, keyword arguments, the true score before rounding)
EXAMPLES = {
    "worked_example": ("Rain falls gently from the sky", "Gentle rain drops from the sky", {}, 0.625),
    "identical_sentences": ("the cat sat on the mat", "the cat sat on the mat", {}, 1 - 0.5 / 216),
    "no_common_word": ("the cat", "a dog", {}, 0.0),
    "repeated_word_is_clipped": ("the cat", "the the the cat", {}, 0.5 / 1.1),
    "punctuation_stays_in_the_token": ("The sky.", "the sky", {}, 0.25),
    "custom_parameters": (
        "the cat sat on the mat",
        "the cat on the mat",
        {"alpha": 0.5, "beta": 2, "gamma": 0.25},
        0.9,
    ),
    "empty_reference": ("", "anything", {}, 0.0),
}


def call_text(reference: str, candidate: str, kwargs: dict) -> str:
    extra = "".join(f", {k}={v!r}" for k, v in kwargs.items())
    return f"meteor_score({reference!r}, {candidate!r}{extra})"


@pytest.mark.parametrize("name", EXAMPLES)
def test_statement_example(submission, name):
    reference, candidate, kwargs, exact = EXAMPLES[name]
    call = call_text(reference, candidate, kwargs)
    try:
        got = submission.meteor_score(reference, candidate, **kwargs)
    except SubmissionError as exc:
        exc.message = f"{call}: expected {expected_text(exact)}, but {exc.message}"
        raise
    expect_score(got, exact, call=call)
