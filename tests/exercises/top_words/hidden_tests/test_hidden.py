"""Tier `hidden`: students see each test's name and message, never its input."""

import pytest

from grader.core import exercise

VALUES = exercise.holding(__file__).module("values")  # the value rule of the exercise holding this file

pytestmark = pytest.mark.tier("hidden")

# TODO: a few cases per rule, name -> (arguments, keyword arguments, the answer); each name's rule is in
# exercise.toml's [scoring.rules], and a message here never quotes the input.
CASES = {
    "first_rule": (("north",), {"k": 4}, ["north", 4]),
}


@pytest.mark.parametrize("name", CASES)
def test_rule(submission, name):
    args, kwargs, want = CASES[name]
    VALUES.expect(submission.top_words(*args, **kwargs), want)
