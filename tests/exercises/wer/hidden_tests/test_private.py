"""Tier `private`: differential tests against the reference solution, and each visible test's twin. Never shipped to the page."""

import random

import pytest
from hypothesis import strategies as st

from grader.core import exercise, twins
from grader.core.twins import call

EXERCISE = exercise.holding(__file__)  # the exercise whose folder holds this file
VALUES = EXERCISE.module("values")

pytestmark = pytest.mark.tier("private")


def _inputs(count: int) -> list[tuple[str, str]]:
    chooser = random.Random(12)
    vocabulary = ["a", "b", "c", "A", "the", "cat", "x"]
    texts = [" ".join(chooser.choices(vocabulary, k=chooser.randint(0, 7))) for _ in range(count * 2)]
    return list(zip(texts[::2], texts[1::2]))


def test_matches_the_reference(submission):
    reference = twins.reference(EXERCISE.root)
    for ref, hyp in _inputs(EXERCISE.private_examples):
        VALUES.expect_rate(
            submission.word_error_rate(ref, hyp), reference.word_error_rate(ref, hyp), call=f"word_error_rate({ref!r}, {hyp!r})"
        )


def test_detail_matches_the_reference(submission):
    reference = twins.reference(EXERCISE.root)
    for ref, hyp in _inputs(40):
        if ref.split():
            VALUES.expect_detail(
                submission.word_error_rate(ref, hyp, detail=True),
                reference.word_error_rate(ref, hyp, detail=True),
                call=f"word_error_rate({ref!r}, {hyp!r}, detail=True)",
            )


# Twins (docs/scoring.md): a visible test pays only if its twin, the same rule on inputs no student
# sees, passes too. Each answer is the reference's; each property runs on words no visible test uses.
ANSWERS = twins.answers(
    EXERCISE,
    {
        "examples-one_insertion": call("a red fox ran", "a red fox ran away"),
        "examples-identical": call("my dog runs fast", "my dog runs fast"),
        "examples-detail": call("one two three four", "one too three", detail=True),
        "hidden-uppercase_words_match": call("Good Morning Sun", "good evening SUN"),
        "hidden-tabs_and_newlines_split": call("red\tgreen\nblue\tsky", "red green blue"),
        "hidden-a_deletion": call("big old brown dog", "big brown dog"),
        "hidden-a_shifted_sentence": call("q r s", "p q r s"),
        "hidden-more_errors_than_words": call("go now", "stop stop stop stop stop"),
        "hidden-divided_by_the_reference": call("w x y z v", "w x"),
        "hidden-rounded": call("p q r s t u v", "p q r s t u"),
        "hidden-empty_reference": call("\t\n", " "),
        "hidden-empty_reference_words_said": call(" ", "good bye"),
        "hidden-detail_counts_errors_and_words": call("p q r s t", "p z r", detail=True),
    },
    check=VALUES.expect,
)
WORDS = st.lists(st.sampled_from(["sun", "moon", "Star", "sky", "rain", "owl"]), min_size=1, max_size=8)
PROPERTIES = twins.properties(EXERCISE.tests_dir / "test_properties.py", {"ws": WORDS, "a": WORDS, "b": WORDS})
TWINS = {**ANSWERS, **PROPERTIES}


@pytest.mark.parametrize("key", TWINS)
def test_twin(submission, key):
    """The twin of one visible test: its rule on inputs no student sees."""
    TWINS[key](submission)
