"""Tier `examples`: the statement's examples. Students see each input, the expected value and what came back."""

import pytest

from grader.core import exercise
from grader.core.submission import SubmissionError

VALUES = exercise.holding(__file__).module("values")  # the value rule of the exercise holding this file

pytestmark = pytest.mark.tier("examples")

# The statement's examples, name -> (arguments, keyword arguments, the answer). They are public:
# solutions/misconceptions.py's probes quote the same calls.
EXAMPLES = {
    "the_cat_and_the_hat": (("The cat and the hat.",), {"k": 2}, [("the", 2), ("and", 1)]),
    "three_by_default": (("a b b c c c d",), {}, [("c", 3), ("b", 2), ("a", 1)]),
    "fewer_words_than_k": (("Hello, hello!",), {"k": 5}, [("hello", 2)]),
}


@pytest.mark.parametrize("name", EXAMPLES)
def test_statement_example(submission, name):
    args, kwargs, want = EXAMPLES[name]
    call = f"top_words({', '.join([*map(repr, args), *(f'{k}={v!r}' for k, v in kwargs.items())])})"
    try:
        got = submission.top_words(*args, **kwargs)
    except SubmissionError as exc:
        exc.message = f"{call}: {exc.message}"
        raise
    VALUES.expect(got, want, call=call)
