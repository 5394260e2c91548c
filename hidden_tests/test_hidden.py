"""Tier `hidden`: students see each test's name and message, never its input.

Every case names the rule of the statement it checks, so a failure says where to look.
"""

from typing import NamedTuple

import pytest

from grader.core import exercise
from grader.core.checks import WrongAnswer
from grader.core.submission import SubmissionError

# The exercise's value rule (exercise.toml [seam] values).
VALUES = exercise.holding(__file__).module("values")  # the value rule of the exercise holding this file
expect_score, expected_text = VALUES.expect_score, VALUES.expected_text

pytestmark = pytest.mark.tier("hidden")

RULE_ALL = "the whole formula (see the worked example)"
RULE_CASE = "Tokens: lowercase each text with str.lower()"
RULE_SPLIT = "Tokens: split on any run of whitespace with str.split()"
RULE_PUNCT = "Tokens: punctuation stays part of its token"
RULE_CLIP = "Matching: each reference token can be matched at most once"
RULE_LEFT = "Matching: scan the candidate from left to right"
RULE_FMEAN = "F-mean: P·R / (α·P + (1−α)·R)"
RULE_CHUNKS = "Chunks: maximal runs of consecutive matched positions in the candidate"
RULE_PENALTY = "Penalty: γ·(chunks/m)^β"
RULE_ROUND = "Score: rounded to 3 decimal places"
RULE_EMPTY = "Nothing to match: the score is 0.0"

LONG = (
    "the quick brown fox jumps over the lazy dog while the small bird "
    "sings in the tall green tree near the old river bank"
)


class Case(NamedTuple):
    name: str
    rule: str
    reference: str
    candidate: str
    kwargs: dict
    exact: float  # the true score before rounding


CASES = [
    Case("original_worked_example", RULE_ALL, "Rain falls gently from the sky", "Gentle rain drops from the sky", {}, 0.625),
    Case("longer_exact_match_scores_near_1", RULE_ALL, LONG, LONG, {}, 0.9999638310185185),
    Case("all_parameters_at_once", RULE_ALL, "the cat sat on the mat", "the cat on a mat", {"alpha": 0.3, "beta": 2.5, "gamma": 0.8}, 0.6479838820850494),
    Case("uppercase_reference", RULE_CASE, "THE Cat SAT", "the cat sat", {}, 0.9814814814814815),
    Case("uppercase_candidate", RULE_CASE, "a b c d", "A B x D", {}, 0.6388888888888888),
    # str.casefold() would turn "ß" into "ss"; str.lower() keeps it.
    Case("lower_is_not_casefold", RULE_CASE, "Die Straße ist lang", "DIE STRASSE IST LANG", {}, 0.6388888888888888),
    Case("runs_of_spaces_tabs_newlines", RULE_SPLIT, "the  cat\tsat\non   the mat", " the cat sat on the mat \n", {}, 0.9976851851851852),
    Case("leading_and_trailing_whitespace", RULE_SPLIT, "\n\t sky is blue \t", "  the sky is blue", {}, 0.9498207885304659),
    Case("punctuation_is_part_of_the_token", RULE_PUNCT, "Hello, world!", "hello world", {}, 0.0),
    Case("same_punctuation_matches", RULE_PUNCT, "the sky.", "the sky.", {}, 0.9375),
    Case("repeated_candidate_words_are_clipped", RULE_CLIP, "a a b", "a a a b", {}, 0.8243727598566307),
    Case("repeated_reference_words_match_once_each", RULE_CLIP, "the the the cat", "the cat", {}, 0.4934210526315789),
    Case("clipping_with_many_repeats", RULE_CLIP, "to be or not to be", "be be be be to to to to", {}, 0.6048387096774195),
    Case("matching_scans_left_to_right", RULE_LEFT, "a b", "a a b", {}, 0.4761904761904762),
    Case("left_to_right_decides_the_chunks", RULE_LEFT, "x y z", "y x y z", {}, 0.8243727598566307),
    Case("recall_weighs_more_than_precision", RULE_FMEAN, "a b c d e f g h", "a b", {}, 0.25337837837837834),
    Case("precision_when_candidate_is_long", RULE_FMEAN, "a b", "a b c d e f g h", {}, 0.7211538461538463),
    Case("alpha_0_gives_precision", RULE_FMEAN, "a b c d", "a b x", {"alpha": 0}, 0.625),
    Case("alpha_1_gives_recall", RULE_FMEAN, "a b c d", "a b x", {"alpha": 1}, 0.46875),
    Case("alpha_half_is_the_harmonic_mean", RULE_FMEAN, "a b c d e", "a b x", {"alpha": 0.5}, 0.46875),
    Case("chunks_are_counted_in_the_candidate", RULE_CHUNKS, "a b c d", "c d a b", {}, 0.9921875),
    Case("every_scattered_match_is_its_own_chunk", RULE_CHUNKS, "a b c d", "a x b y c z d", {}, 0.4651162790697675),
    Case("two_chunks", RULE_CHUNKS, "a b c d e f", "a b x c d e", {}, 0.8066666666666668),
    Case("penalty_divides_chunks_by_matches", RULE_PENALTY, "a b c d", "a b x y z", {}, 0.45731707317073167),
    Case("beta_0_makes_the_penalty_gamma", RULE_PENALTY, "a b c d", "a x b y", {"beta": 0}, 0.25),
    Case("fractional_beta", RULE_PENALTY, "a b c d e f", "a b x d e y f", {"beta": 1.5}, 0.6291975403504548),
    Case("gamma_0_means_no_penalty", RULE_PENALTY, "a b c d", "a x b y", {"gamma": 0}, 0.5),
    Case("gamma_1_single_word", RULE_PENALTY, "a", "a", {"gamma": 1}, 0.0),
    Case("gamma_1_two_chunks", RULE_PENALTY, "a b c d", "a x c d", {"gamma": 1}, 0.5277777777777778),
    Case("rounds_instead_of_truncating", RULE_ROUND, "the cat", "the the the cat", {}, 0.45454545454545453),
    Case("rounds_to_three_decimals", RULE_ROUND, "a b c", "a x b c", {}, 0.8243727598566307),
    Case("rounding_an_exact_tie", RULE_ROUND, "a b", "a b", {"beta": 0, "gamma": 0.1875}, 0.8125),
    Case("empty_candidate", RULE_EMPTY, "the cat", "", {}, 0.0),
    Case("empty_reference", RULE_EMPTY, "", "the cat", {}, 0.0),
    Case("both_empty", RULE_EMPTY, "", "", {}, 0.0),
    Case("whitespace_only_candidate", RULE_EMPTY, "the cat", " \t\n ", {}, 0.0),
    Case("whitespace_only_reference", RULE_EMPTY, "\n\n", "the cat", {}, 0.0),
    Case("no_overlapping_words_gives_0", RULE_EMPTY, "the cat sat on the mat", "a dog ran in a park", {}, 0.0),
]


def scored(submission, exact, rule, reference, candidate, **kwargs):
    """The submission's answer, judged; a crash, too, says what was expected and the rule, never the input."""
    try:
        got = submission.meteor_score(reference, candidate, **kwargs)
    except SubmissionError as exc:
        exc.message = f"expected {expected_text(exact)}, but {exc.message} [rule: {rule}]"
        raise
    return expect_score(got, exact, rule=rule)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_rule(submission, case):
    scored(submission, case.exact, case.rule, case.reference, case.candidate, **case.kwargs)


def test_fragmented_matches_score_lower_than_contiguous(submission):
    reference = "a b c d e f g h"
    contiguous = scored(submission, 0.49609375, RULE_CHUNKS, reference, "a b c d w x y z")
    fragmented = scored(submission, 0.25, RULE_CHUNKS, reference, "a w b x c y d z")
    if not fragmented < contiguous:
        raise WrongAnswer(f"the fragmented candidate scored {fragmented}, not lower than the contiguous one ({contiguous}) [rule: {RULE_CHUNKS}]")


def test_longer_exact_match_is_close_to_1(submission):
    got = scored(submission, 0.9999638310185185, RULE_ALL, LONG, LONG)
    if got < 0.99:
        raise WrongAnswer(f"an exact match of 24 words should score at least 0.99, got {got} [rule: {RULE_ALL}]")
