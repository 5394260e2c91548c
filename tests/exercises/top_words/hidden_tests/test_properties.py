"""Tier `properties`: invariants on generated inputs; a failure shows the simplest counterexample."""

import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from grader.core import exercise
from grader.core.checks import WrongAnswer

VALUES = exercise.holding(__file__).module("values")  # the value rule of the exercise holding this file

pytestmark = pytest.mark.tier("properties")

TEXTS = st.text(alphabet="abcAB .,!-", max_size=12)
WORDS = st.lists(st.sampled_from(["the", "cat", "sat", "on", "a", "mat"]), max_size=10)
K = st.integers(min_value=0, max_value=6)


def answer(submission, *args):
    """The submission's answer, the call noted: a failure shows it (keep inputs in notes, never in messages)."""
    note(f"top_words({', '.join(map(repr, args))})")
    return submission.top_words(*args)


def _twice(submission, *args):
    if not VALUES.same(answer(submission, *args), answer(submission, *args)):
        raise WrongAnswer("the same call, made twice, returned two different answers: keep no state between calls")


def pairs(got):
    """The answer, if it is a list of (word, count) pairs."""
    if VALUES.shape(got):
        raise WrongAnswer(f"the answer is not a list of (word, count) pairs{VALUES.shape(got)}")
    return got


@given(text=TEXTS)
def test_same_answer_twice(submission, text):
    _twice(submission, text)


@given(WORDS)
def test_counts_add_up_to_the_words(submission, ws):
    counts = [count for _, count in pairs(answer(submission, " ".join(ws), len(ws)))]
    if sum(counts) != len(ws):
        raise WrongAnswer(f"with k as large as the number of words, the counts add up to {sum(counts)}, not that number")


@given(WORDS, K)
def test_at_most_k_pairs(submission, ws, k):
    got = pairs(answer(submission, " ".join(ws), k))
    if len(got) != min(k, len(set(ws))):
        raise WrongAnswer(f"{len(got)} pairs, but k and the number of different words allow {min(k, len(set(ws)))}")


@given(WORDS, K)
def test_sorted_by_count_then_word(submission, ws, k):
    ranks = [(-count, word) for word, count in pairs(answer(submission, " ".join(ws), k))]
    if ranks != sorted(ranks):
        raise WrongAnswer("the pairs are not in order: the most frequent first, ties in alphabetical order")


@given(WORDS)
def test_case_does_not_change_the_answer(submission, ws):
    if not VALUES.same(answer(submission, " ".join(ws).upper()), answer(submission, " ".join(ws))):
        raise WrongAnswer("the answer changed when the text was uppercased")


@given(WORDS)
def test_order_of_words_does_not_change_the_answer(submission, ws):
    if not VALUES.same(answer(submission, " ".join(reversed(ws))), answer(submission, " ".join(ws))):
        raise WrongAnswer("the answer changed when the words were put in the reverse order")
