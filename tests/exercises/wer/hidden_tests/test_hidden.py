"""Tier `hidden`: students see each test's name and message, not its input."""

import pytest

from grader.core import exercise

VALUES = exercise.holding(__file__).module("values")  # the value rule of the exercise holding this file

pytestmark = pytest.mark.tier("hidden")

# name: (reference, hypothesis, expected rate, the rule)
CASES = {
    "uppercase_words_match": ("Hello World", "hello world", 0.0, "rule 1: lowercase both texts"),
    "tabs_and_newlines_split": ("one\ttwo\nthree", "one two three", 0.0, "rule 1: split on any whitespace"),
    "a_deletion": ("red green blue", "red blue", 1 / 3, "rule 2: the edit distance"),
    "a_shifted_sentence": ("b c d e", "a b c d e", 0.25, "rule 2: one insertion, not five substitutions"),
    "more_errors_than_words": ("yes", "no no no", 3.0, "rule 3: the rate can be above 1"),
    "divided_by_the_reference": ("a b c d", "a b", 0.5, "rule 3: divide by the reference's length"),
    "rounded": ("a b c d e f", "a b c d e", 0.167, "rule 3: round to 3 decimals"),
    "empty_reference": ("   ", "", 0.0, "rule 4: nothing against nothing is 0.0"),
    "empty_reference_words_said": ("", "hello", 1.0, "rule 4: words against nothing is 1.0"),
}


@pytest.mark.parametrize("name", CASES)
def test_rule(submission, name):
    reference, hypothesis, want, rule = CASES[name]
    try:
        VALUES.expect_rate(submission.word_error_rate(reference, hypothesis), want)
    except AssertionError as exc:
        raise AssertionError(f"{exc} [{rule}]") from None


def test_detail_counts_errors_and_words(submission):
    VALUES.expect_detail(submission.word_error_rate("a b c d", "a x c", detail=True), {"wer": 0.5, "errors": 2, "words": 4})
