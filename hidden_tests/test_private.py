"""Tier `private`: instructors only, never shipped to the browser.

Differential tests: the submission must agree with the reference solution on many generated
inputs. The reference runs here, on the trusted side; the submission runs in its sandbox.

The inputs are a fixed list, drawn once from a seeded generator and sorted smallest first,
rather than drawn by hypothesis: the same many inputs every run, on every machine, and no
shrinking is needed to show a small failing one, since the first failure is among the
smallest. Hypothesis spent about 2 ms drawing each input, which made this tier most of the
cost of grading a submission whose behaviour is new (see bench/bench_grade.py).
"""

import random

import pytest
from hypothesis import strategies as st

from grader.core import exercise, twins
from grader.core.twins import call

EXERCISE = exercise.holding(__file__)  # the exercise whose folder holds this file
# The exercise's value rule (exercise.toml [seam] values).
VALUES = EXERCISE.module("values")
expect_score, expect_valid_score, expected_text = VALUES.expect_score, VALUES.expect_valid_score, VALUES.expected_text

pytestmark = pytest.mark.tier("private")

EXAMPLES = EXERCISE.private_examples
# "Straße" and "STRASSE" agree under casefold() but not under lower(), which the rules use.
VOCABULARY = ["the", "The", "THE", "cat", "sat", "on", "mat", "a", "sky", "sky.", "x", "y", "z", "Straße", "STRASSE"]
SEPARATORS = [" ", "  ", "\t", "\n", " \n "]
RAW_ALPHABET = "ab .,\n\tAB"


REFERENCE = twins.reference(EXERCISE.root)


def _length(rng: random.Random, most: int) -> int:
    """Short lengths often (empty and one-word texts are where mistakes hide), long ones too."""
    roll = rng.random()
    if roll < 0.1:
        return 0
    if roll < 0.4:
        return rng.randint(1, 3)
    return rng.randint(1, most)


def _join(rng: random.Random, tokens: list[str]) -> str:
    seps = [rng.choice(SEPARATORS) if rng.random() < 0.3 else " " for _ in range(len(tokens) + 1)]
    if rng.random() < 0.6:
        seps[0] = seps[-1] = ""
    return seps[0] + "".join(t + s for t, s in zip(tokens, seps[1:]))


def _sentence_pair(rng: random.Random) -> tuple[str, str]:
    reference = [rng.choice(VOCABULARY) for _ in range(_length(rng, 15))]
    if reference and rng.random() < 0.4:
        # A candidate made from the reference's words: long matches, reordered chunks, repeats.
        words = [w if rng.random() < 0.8 else w.upper() for w in reference]
        rng.shuffle(words) if rng.random() < 0.5 else None
        words = words[: rng.randint(1, len(words))] + rng.sample(words, k=min(len(words), rng.randint(0, 2)))
        candidate = words
    else:
        candidate = [rng.choice(VOCABULARY) for _ in range(_length(rng, 15))]
    return _join(rng, reference), _join(rng, candidate)


def _raw_text(rng: random.Random) -> str:
    return "".join(rng.choice(RAW_ALPHABET) for _ in range(_length(rng, 40)))


def _parameters(rng: random.Random) -> dict:
    params = {}
    if rng.random() < 0.5:
        params["alpha"] = rng.choice([0.0, 1.0]) if rng.random() < 0.3 else rng.random()
    if rng.random() < 0.5:
        params["beta"] = rng.choice([0, 1, 2]) if rng.random() < 0.3 else rng.uniform(0, 8)
    if rng.random() < 0.5:
        params["gamma"] = rng.choice([0.0, 1.0]) if rng.random() < 0.3 else rng.random()
    return params


def _cases(count: int, seed: int, pair) -> list[tuple[str, str, dict]]:
    rng = random.Random(seed)
    cases = [(*pair(rng), _parameters(rng)) for _ in range(count)]
    return sorted(cases, key=lambda c: (len(c[0]) + len(c[1]) + 4 * len(c[2]), repr(c)))


SENTENCES = _cases(EXAMPLES, 2024, _sentence_pair)
RAW_TEXTS = _cases(EXAMPLES // 3, 2025, lambda rng: (_raw_text(rng), _raw_text(rng)))


def _agrees_on(submission, cases):
    for reference, candidate, params in cases:
        exact = REFERENCE.explain(reference, candidate, **params)["score_unrounded"]
        expect_score(submission.meteor_score(reference, candidate, **params), exact)


def test_agrees_with_the_reference(submission):
    _agrees_on(submission, SENTENCES)


def test_agrees_with_the_reference_on_raw_text(submission):
    _agrees_on(submission, RAW_TEXTS)


# ---------------------------------------------------------------- twins
#
# The scoring policy (docs/scoring.md) pays a visible test only when its twin passes too: the same
# rule, on inputs no student sees (grader/core/twins.py builds them). A file that hard-codes the
# visible tests' answers fails the twins, so its answers earn nothing. No twin asks what a visible
# test asks (tests/test_cheats.py checks it), and no twin's message shows its input.

LONG = "stars shine over the calm sea tonight my friend"  # 0.999, where the visible test's 24 words give 1.0
ANSWERS = twins.answers(
    EXERCISE,
    {
        "examples-worked_example": call("Snow falls softly on the quiet hills", "Soft snow drifts on the quiet hills"),
        "examples-identical_sentences": call("a bird sings in the old tree", "a bird sings in the old tree"),
        "examples-no_common_word": call("red apple", "green pear"),
        "examples-repeated_word_is_clipped": call("red fish", "red red red red fish"),
        "examples-punctuation_stays_in_the_token": call("Good night, moon!", "good night moon"),
        "examples-custom_parameters": call("a bird sings in the old tree", "a bird in the tree", alpha=0.5, beta=2, gamma=0.25),
        "examples-empty_reference": call("", "something else"),
        "hidden-original_worked_example": call("Cold wind blows across the field", "cold breeze blows across the field"),
        "hidden-longer_exact_match_scores_near_1": call(LONG, LONG),
        "hidden-all_parameters_at_once": call("the dog ran in the park", "the dog in a park", alpha=0.7, beta=1.5, gamma=0.6),
        "hidden-uppercase_reference": call("THE Dog RAN Far", "the dog ran far"),
        "hidden-uppercase_candidate": call("p q r s t", "P Q x S T"),
        "hidden-lower_is_not_casefold": call("Der Fuß ist groß", "DER FUSS IST GROSS"),
        "hidden-runs_of_spaces_tabs_newlines": call("a  bird\tsings\nin   trees", " a bird sings in trees \n"),
        "hidden-leading_and_trailing_whitespace": call("\n\t the moon is bright \t", "  a pale moon is bright"),
        "hidden-punctuation_is_part_of_the_token": call("Yes, indeed.", "yes indeed"),
        "hidden-same_punctuation_matches": call("the moon, again.", "the moon, again."),
        "hidden-repeated_candidate_words_are_clipped": call("p p q r", "p p p q r"),
        "hidden-repeated_reference_words_match_once_each": call("a a a a dog", "a dog"),
        "hidden-clipping_with_many_repeats": call("we are as we are", "are are are are we we we we"),
        "hidden-matching_scans_left_to_right": call("p q", "p p p q"),
        "hidden-left_to_right_decides_the_chunks": call("p q r s", "q p q r s"),
        "hidden-recall_weighs_more_than_precision": call("a b c d e f g h i j", "a b c"),
        "hidden-precision_when_candidate_is_long": call("a b c", "a b c d e f g h i j"),
        "hidden-alpha_0_gives_precision": call("p q r s t", "p q x y", alpha=0),
        "hidden-alpha_1_gives_recall": call("p q r s t", "p q x", alpha=1),
        "hidden-alpha_half_is_the_harmonic_mean": call("p q r s", "p q r x y z", alpha=0.5),
        "hidden-chunks_are_counted_in_the_candidate": call("a b c d e f", "d e f a b c"),
        "hidden-every_scattered_match_is_its_own_chunk": call("p q r", "p x q y r"),
        "hidden-two_chunks": call("p q r s t u v", "p q r x s t u"),
        "hidden-penalty_divides_chunks_by_matches": call("p q r s t", "p q x y"),
        "hidden-beta_0_makes_the_penalty_gamma": call("p q r s t", "p x q y r", beta=0),
        "hidden-fractional_beta": call("p q r s t u", "p x q r y s", beta=2.5),
        "hidden-gamma_0_means_no_penalty": call("p q r s t", "p x q r y", gamma=0),
        "hidden-gamma_1_single_word": call("q", "q", gamma=1),
        "hidden-gamma_1_two_chunks": call("p q r s t", "p x r s t", gamma=1),
        "hidden-rounds_instead_of_truncating": call("p q r", "p x q x"),
        "hidden-rounds_to_three_decimals": call("p q r s", "p x q r s"),
        "hidden-rounding_an_exact_tie": call("p q", "p q", beta=0, gamma=0.0625),
        "hidden-empty_candidate": call("a dog", ""),
        "hidden-empty_reference": call("", "a dog"),
        "hidden-both_empty": call("\n", ""),
        "hidden-whitespace_only_candidate": call("a dog", "\n \t"),
        "hidden-whitespace_only_reference": call("\t ", "a dog"),
        "hidden-no_overlapping_words_gives_0": call("red roses bloom early", "blue violets fade"),
        "hidden-fragmented_matches_score_lower_than_contiguous": [
            call("p q r s t u", "p q r x y z"),
            call("p q r s t u", "p x q y r z"),
        ],
        "hidden-longer_exact_match_is_close_to_1": call(LONG, LONG),
    },
    check=expect_score,
    expected=lambda *args, **kwargs: REFERENCE.explain(*args, **kwargs)["score_unrounded"],  # the unrounded score
    shown=expected_text,
)
# Each property on 8 examples drawn from words no visible test uses.
WORDS = ["moon", "star", "river", "stone", "lamp", "road,", "Tree.", "owl", "sea"]
TEXTS = st.lists(st.sampled_from(WORDS), min_size=1, max_size=9)
PROPERTIES = twins.properties(
    EXERCISE.tests_dir / "test_properties.py",
    {"reference": TEXTS, "candidate": TEXTS, "tokens": TEXTS, "other": TEXTS},
    {
        "no_common_word_scores_0": {
            "candidate": st.lists(st.sampled_from(["gnu", "yak", "ibex", "Emu!"]), min_size=1, max_size=9)
        },
        "a_text_without_words_scores_0": {"text": st.sampled_from(["\t", "\r\n ", "   \n"])},
        "more_chunks_never_raise_the_score": {
            "matched": st.lists(
                st.sampled_from(["moon", "star", "river", "owl", "sea", "lamp"]), min_size=2, max_size=6, unique=True
            )
        },
    },
)
TWINS = {**ANSWERS, **PROPERTIES}


@pytest.mark.parametrize("key", TWINS)
def test_twin(submission, key):
    """The twin of one visible test: its rule on unseen inputs (its id names the visible test)."""
    TWINS[key](submission)
