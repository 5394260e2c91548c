"""Tier `hidden`: students see each test's name and message, never its input."""

import pytest

from grader.core import exercise

VALUES = exercise.holding(__file__).module("values")  # the value rule of the exercise holding this file

pytestmark = pytest.mark.tier("hidden")

# A few cases per rule, name -> (arguments, keyword arguments, the answer, the rule); each name's rule is in
# exercise.toml's [scoring.rules], and a message here never quotes the input.
CASES = {
    "uppercase_words_match": (("Red red RED blue",), {"k": 2}, [("red", 3), ("blue", 1)], "rule 1: lowercase the text"),
    "tabs_and_newlines_split": (("x\ty\nx",), {}, [("x", 2), ("y", 1)], "rule 1: split on any whitespace"),
    "punctuation_stripped_at_the_ends": (("Stop! stop. (stop)",), {"k": 1}, [("stop", 3)], "rule 1: strip punctuation"),
    "inner_apostrophe_kept": (("don't dont don't",), {}, [("don't", 2), ("dont", 1)], "rule 1: only the ends"),
    "punctuation_only_words_dropped": (("-- ok ... ok !!",), {}, [("ok", 2)], "rule 1: drop empty words"),
    "empty_text": (("",), {}, [], "rule 1: no words, no pairs"),
    "every_occurrence_counts": (("one two one two one",), {"k": 2}, [("one", 3), ("two", 2)], "rule 2: count them"),
    "most_frequent_first": (("b a b c b a",), {}, [("b", 3), ("a", 2), ("c", 1)], "rule 3: most frequent first"),
    "ties_in_alphabetical_order": (("pear fig apple",), {}, [("apple", 1), ("fig", 1), ("pear", 1)], "rule 3: ties"),
    "ties_after_counts": (("y x y z x w",), {"k": 4}, [("x", 2), ("y", 2), ("w", 1), ("z", 1)], "rule 3: ties"),
    "k_limits_the_list": (("a b c d e f",), {"k": 2}, [("a", 1), ("b", 1)], "rule 4: the first k"),
    "k_zero_is_empty": (("a b",), {"k": 0}, [], "rule 4: k = 0 gives []"),
    "fewer_words_than_k": (("solo",), {"k": 4}, [("solo", 1)], "rule 4: all of them when fewer"),
    "pairs_are_word_then_count": (("q q",), {"k": 1}, [("q", 2)], "rule 5: (word, count) pairs"),
}


@pytest.mark.parametrize("name", CASES)
def test_rule(submission, name):
    args, kwargs, want, rule = CASES[name]
    try:
        VALUES.expect(submission.top_words(*args, **kwargs), want)
    except AssertionError as exc:
        raise AssertionError(f"{exc} [{rule}]") from None
