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
    words = ["the", "The", "cat", "cat.", "a", "--", "don't", "hat!", "Hat", "\t"]
    drawn = [(" ".join(chooser.choices(words, k=chooser.randint(0, 9))), chooser.randint(0, 5)) for _ in range(count)]
    return sorted(drawn, key=lambda args: len(args[0]))


def test_matches_the_reference(submission):
    expected = getattr(twins.reference(EXERCISE.root), EXERCISE.function)
    for args in _inputs(EXERCISE.private_examples):
        VALUES.expect(submission.top_words(*args), expected(*args), call=f"top_words({', '.join(map(repr, args))})")


# Twins (docs/scoring.md): a visible test pays only if its twin, its rule on an input no student sees,
# passes too: a row per test judged by its answer, of the same shape with another answer; each
# property runs again on other strategies.
ANSWERS = twins.answers(
    EXERCISE,
    {
        "examples-the_cat_and_the_hat": call("A dog saw the dog.", k=2),
        "examples-three_by_default": call("p q q r r r s"),
        "examples-fewer_words_than_k": call("Bye, bye!", k=4),
        "hidden-uppercase_words_match": call("Sun SUN sun moon", k=2),
        "hidden-tabs_and_newlines_split": call("m\tn\nm\tm"),
        "hidden-punctuation_stripped_at_the_ends": call("Go! go? (go) go", k=1),
        "hidden-inner_apostrophe_kept": call("it's its it's it's"),
        "hidden-punctuation_only_words_dropped": call("?? yes --- yes ... no"),
        "hidden-empty_text": call("  \n "),
        "hidden-every_occurrence_counts": call("red blue red blue red blue red", k=2),
        "hidden-most_frequent_first": call("c a c b c a a a"),
        "hidden-ties_in_alphabetical_order": call("plum kiwi date"),
        "hidden-ties_after_counts": call("n m n o m p", k=4),
        "hidden-k_limits_the_list": call("u v w x y z", k=3),
        "hidden-k_zero_is_empty": call("c d e", k=0),
        "hidden-fewer_words_than_k": call("lone lone", k=5),
        "hidden-pairs_are_word_then_count": call("z z z", k=1),
    },
    check=VALUES.expect,
)
OTHER_WORDS = st.lists(st.sampled_from(["sun", "moon", "Star", "sky", "owl"]), min_size=1, max_size=10)
PROPERTIES = twins.properties(
    EXERCISE.tests_dir / "test_properties.py", {"text": st.text(alphabet="xyzXY ;:?", min_size=1, max_size=12), "ws": OTHER_WORDS}
)
TWINS = {**ANSWERS, **PROPERTIES}


@pytest.mark.parametrize("key", TWINS)
def test_twin(submission, key):
    """The twin of one visible test: its rule on inputs no student sees."""
    TWINS[key](submission)
