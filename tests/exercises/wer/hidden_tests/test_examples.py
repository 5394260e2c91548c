"""Tier `examples`: the statement's examples."""

import pytest

from grader.core import exercise
from grader.core.submission import SubmissionError

VALUES = exercise.holding(__file__).module("values")  # the value rule of the exercise holding this file

pytestmark = pytest.mark.tier("examples")

# (reference, hypothesis, keyword arguments, expected)
EXAMPLES = {
    "one_insertion": ("the cat sat", "the cat sat down", {}, 1 / 3),
    "identical": ("the cat sat", "the cat sat", {}, 0.0),
    "detail": ("the cat sat", "the cat sat down", {"detail": True}, {"wer": 1 / 3, "errors": 1, "words": 3}),
}


@pytest.mark.parametrize("name", EXAMPLES)
def test_statement_example(submission, name):
    reference, hypothesis, kwargs, want = EXAMPLES[name]
    extra = "".join(f", {k}={v!r}" for k, v in kwargs.items())
    call = f"word_error_rate({reference!r}, {hypothesis!r}{extra})"
    try:
        got = submission.word_error_rate(reference, hypothesis, **kwargs)
    except SubmissionError as exc:
        exc.message = f"{call}: {exc.message}"
        raise
    VALUES.expect(got, want, call=call)
