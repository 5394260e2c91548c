"""Tier `private`: instructors only, never shipped to the browser.

Differential tests: the submission must agree with the reference solution on many generated
inputs. The reference runs here, on the trusted side; the submission runs in its sandbox.

The inputs are a fixed list, drawn once from a seeded generator and sorted smallest first,
rather than drawn by hypothesis: the same many inputs every run, on every machine, and no
shrinking is needed to show a small failing one, since the first failure is among the
smallest. Hypothesis spent about 2 ms drawing each input, which made this tier most of the
cost of grading a submission whose behaviour is new (see bench/bench_grade.py).
"""

import importlib.util
import random

import pytest

from grader.core import exercise
from grader.core.checks import WrongAnswer
from grader.core.submission import SubmissionError

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


def _load_reference():
    path = EXERCISE.root / "solutions" / "reference.py"
    spec = importlib.util.spec_from_file_location("meteor_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


REFERENCE = _load_reference()


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
# The scoring policy (grader/core/scoring.py, docs/scoring.md) pays a visible test only when its
# twin passes too: the same rule, checked here on inputs no student can see. A file that
# hard-codes the visible tests' answers fails the twins, so its answers earn nothing.
# A twin's input shares no call with the visible tests (tests/test_scoring.py checks it), and
# its failure message, like the hidden tier's, gives the expected value but never the input.

# Nine words: 0.999, where the visible test's 24 words give 1.0, so no constant passes both.
LONG_TWIN = "stars shine over the calm sea tonight my friend"
# (reference, candidate, keyword arguments) of the twin of each visible test with one answer.
SINGLE_TWINS = {
    "examples-worked_example": ("Snow falls softly on the quiet hills", "Soft snow drifts on the quiet hills", {}),
    "examples-identical_sentences": ("a bird sings in the old tree", "a bird sings in the old tree", {}),
    "examples-no_common_word": ("red apple", "green pear", {}),
    "examples-repeated_word_is_clipped": ("red fish", "red red red red fish", {}),
    "examples-punctuation_stays_in_the_token": ("Good night, moon!", "good night moon", {}),
    "examples-custom_parameters": ("a bird sings in the old tree", "a bird in the tree", {"alpha": 0.5, "beta": 2, "gamma": 0.25}),
    "examples-empty_reference": ("", "something else", {}),
    "hidden-original_worked_example": ("Cold wind blows across the field", "cold breeze blows across the field", {}),
    "hidden-longer_exact_match_scores_near_1": (LONG_TWIN, LONG_TWIN, {}),
    "hidden-all_parameters_at_once": ("the dog ran in the park", "the dog in a park", {"alpha": 0.7, "beta": 1.5, "gamma": 0.6}),
    "hidden-uppercase_reference": ("THE Dog RAN Far", "the dog ran far", {}),
    "hidden-uppercase_candidate": ("p q r s t", "P Q x S T", {}),
    "hidden-lower_is_not_casefold": ("Der Fuß ist groß", "DER FUSS IST GROSS", {}),
    "hidden-runs_of_spaces_tabs_newlines": ("a  bird\tsings\nin   trees", " a bird sings in trees \n", {}),
    "hidden-leading_and_trailing_whitespace": ("\n\t the moon is bright \t", "  a pale moon is bright", {}),
    "hidden-punctuation_is_part_of_the_token": ("Yes, indeed.", "yes indeed", {}),
    "hidden-same_punctuation_matches": ("the moon, again.", "the moon, again.", {}),
    "hidden-repeated_candidate_words_are_clipped": ("p p q r", "p p p q r", {}),
    "hidden-repeated_reference_words_match_once_each": ("a a a a dog", "a dog", {}),
    "hidden-clipping_with_many_repeats": ("we are as we are", "are are are are we we we we", {}),
    "hidden-matching_scans_left_to_right": ("p q", "p p p q", {}),
    "hidden-left_to_right_decides_the_chunks": ("p q r s", "q p q r s", {}),
    "hidden-recall_weighs_more_than_precision": ("a b c d e f g h i j", "a b c", {}),
    "hidden-precision_when_candidate_is_long": ("a b c", "a b c d e f g h i j", {}),
    "hidden-alpha_0_gives_precision": ("p q r s t", "p q x y", {"alpha": 0}),
    "hidden-alpha_1_gives_recall": ("p q r s t", "p q x", {"alpha": 1}),
    "hidden-alpha_half_is_the_harmonic_mean": ("p q r s", "p q r x y z", {"alpha": 0.5}),
    "hidden-chunks_are_counted_in_the_candidate": ("a b c d e f", "d e f a b c", {}),
    "hidden-every_scattered_match_is_its_own_chunk": ("p q r", "p x q y r", {}),
    "hidden-two_chunks": ("p q r s t u v", "p q r x s t u", {}),
    "hidden-penalty_divides_chunks_by_matches": ("p q r s t", "p q x y", {}),
    "hidden-beta_0_makes_the_penalty_gamma": ("p q r s t", "p x q y r", {"beta": 0}),
    "hidden-fractional_beta": ("p q r s t u", "p x q r y s", {"beta": 2.5}),
    "hidden-gamma_0_means_no_penalty": ("p q r s t", "p x q r y", {"gamma": 0}),
    "hidden-gamma_1_single_word": ("q", "q", {"gamma": 1}),
    "hidden-gamma_1_two_chunks": ("p q r s t", "p x r s t", {"gamma": 1}),
    "hidden-rounds_instead_of_truncating": ("p q r", "p x q x", {}),
    "hidden-rounds_to_three_decimals": ("p q r s", "p x q r s", {}),
    "hidden-rounding_an_exact_tie": ("p q", "p q", {"beta": 0, "gamma": 0.0625}),
    "hidden-empty_candidate": ("a dog", "", {}),
    "hidden-empty_reference": ("", "a dog", {}),
    "hidden-both_empty": ("\n", "", {}),
    "hidden-whitespace_only_candidate": ("a dog", "\n \t", {}),
    "hidden-whitespace_only_reference": ("\t ", "a dog", {}),
    "hidden-no_overlapping_words_gives_0": ("red roses bloom early", "blue violets fade", {}),
}
# The hidden tier's two tests that compare answers: the same comparison on other texts.
PAIR_TWINS = {
    # (reference, the better candidate, the one that must score lower)
    "hidden-fragmented_matches_score_lower_than_contiguous": ("p q r s t u", "p q r x y z", "p x q y r z"),
}


def _call(submission, twin_of: str, reference, candidate, params, expected: str = ""):
    """Call the submission on a twin input; a crash says how it ended but not what it printed.

    The exception's text and traceback can carry the input (`raise ValueError(reference)`), so
    they stay out of the message: the visible twin's own failure shows them.
    """
    try:
        return submission.meteor_score(reference, candidate, **params)
    except SubmissionError as exc:
        how = exc.message.split(":", 1)[0] if exc.kind == "exception" else exc.message
        exc.message = f"{_unseen(twin_of)}{expected}{how}"
        exc.traceback = ""
        raise


def _judged(submission, reference, candidate, params, twin_of: str) -> float:
    """The submission's answer to one twin input, judged against the reference; the message hides the input."""
    exact = REFERENCE.explain(reference, candidate, **params)["score_unrounded"]
    got = _call(submission, twin_of, reference, candidate, params, f"expected {expected_text(exact)}, but ")
    try:
        return expect_score(got, exact)
    except WrongAnswer as exc:
        raise WrongAnswer(f"{_unseen(twin_of)}{exc}") from None


def _visible_name(key: str) -> str:
    tier, name = key.split("-", 1)
    return f"the {tier} test {name}"


def _unseen(twin_of: str) -> str:
    return f"the same rule as {twin_of}, on an input you never see: "



# The property tier's twins: each property, checked on a fixed list of inputs drawn from words
# the visible tests never use.
TWIN_WORDS = ["moon", "star", "river", "stone", "lamp", "road,", "Tree.", "owl", "don't", "sea"]
TWIN_OTHER_WORDS = ["gnu", "yak", "ibex", "Emu!"]  # never in TWIN_WORDS, in any case
TWIN_STYLES = {"plain": str, "upper": str.upper, "title": str.title, "swapcase": str.swapcase}
PROPERTY_TWIN_CASES = 8


def _words(rng: random.Random, least: int = 1, most: int = 9, vocabulary=TWIN_WORDS) -> list[str]:
    return [rng.choice(vocabulary) for _ in range(rng.randint(least, most))]


def _any_parameters(rng: random.Random) -> dict:
    return {"alpha": rng.choice([0.0, 0.5, 1.0, rng.random()]), "beta": rng.choice([0, 1, 3, rng.uniform(0, 6)]),
            "gamma": rng.choice([0.0, 1.0, rng.random()])}


def _twin_say(key: str, text: str) -> WrongAnswer:
    return WrongAnswer(f"{_unseen(_visible_name(key))}{text}")


def _valid(submission, key, reference, candidate, **params) -> float:
    got = _call(submission, _visible_name(key), reference, candidate, params)
    try:
        return expect_valid_score(got)
    except WrongAnswer as exc:
        raise _twin_say(key, str(exc)) from None


def _rounded_in_range(submission, key, rng):
    _valid(submission, key, " ".join(_words(rng)), " ".join(_words(rng)), **_any_parameters(rng))


def _case(submission, key, rng):
    reference, candidate = " ".join(_words(rng)), " ".join(_words(rng))
    ref_style, cand_style = TWIN_STYLES[rng.choice(list(TWIN_STYLES))], TWIN_STYLES[rng.choice(list(TWIN_STYLES)[1:])]
    plain = _valid(submission, key, reference, candidate)
    styled = _valid(submission, key, ref_style(reference), cand_style(candidate))
    if plain != styled:
        raise _twin_say(key, f"changing the letters' case changed the score from {plain} to {styled}")


def _whitespace(submission, key, rng):
    reference, candidate = _words(rng), _words(rng)

    def spaced(tokens):
        gaps = ["".join(rng.choice(" \t\n\r") for _ in range(rng.randint(1, 3))) for _ in range(len(tokens) + 1)]
        return gaps[0] + "".join(t + g for t, g in zip(tokens, gaps[1:]))

    plain = _valid(submission, key, " ".join(reference), " ".join(candidate))
    messy = _valid(submission, key, spaced(reference), spaced(candidate))
    if plain != messy:
        raise _twin_say(key, f"changing the whitespace between words changed the score from {plain} to {messy}")


def _no_common_word(submission, key, rng):
    got = _valid(submission, key, " ".join(_words(rng)), " ".join(_words(rng, vocabulary=TWIN_OTHER_WORDS)), **_any_parameters(rng))
    if got != 0.0:
        raise _twin_say(key, f"texts with no word in common must score 0.0, got {got}")


def _without_words(submission, key, rng):
    text, other = rng.choice(["\t", "\r\n ", "   \n"]), " ".join(_words(rng))
    reference, candidate = (text, other) if rng.random() < 0.5 else (other, text)
    got = _valid(submission, key, reference, candidate)
    if got != 0.0:
        raise _twin_say(key, f"a text with no words must score 0.0, got {got}")


def _identical(submission, key, rng):
    tokens, params = _words(rng), _any_parameters(rng)
    text = " ".join(tokens)
    exact = 1 - params["gamma"] * (1 / len(tokens)) ** params["beta"]
    _judged(submission, text, text, params, _visible_name(key))
    if abs(REFERENCE.explain(text, text, **params)["score_unrounded"] - exact) > 1e-9:
        raise AssertionError("the twin's own formula disagrees with the reference")  # a bug of the kit, not the student's


def _repeated(submission, key, rng):
    reference = _words(rng, 1, 8)
    word = rng.choice(reference)
    repeats = reference.count(word) + rng.randint(1, 5)
    _judged(submission, " ".join(reference), " ".join([word] * repeats), {}, _visible_name(key))


def _more_chunks(submission, key, rng):
    matched = rng.sample(TWIN_WORDS, rng.randint(2, 6))
    fillers = _words(rng, len(matched) - 1, len(matched) + 2, TWIN_OTHER_WORDS)
    interleaved = [w for pair in zip(matched, fillers) for w in pair] + matched[len(fillers):] + fillers[len(matched):]
    together = _valid(submission, key, " ".join(matched), " ".join(matched + fillers))
    scattered = _valid(submission, key, " ".join(matched), " ".join(interleaved))
    if scattered > together:
        raise _twin_say(key, f"splitting the matched words into more chunks raised the score from {together} to {scattered}")


def _unmatched_at_end(submission, key, rng):
    reference, candidate = " ".join(_words(rng)), _words(rng)
    extra = _words(rng, 1, 4, TWIN_OTHER_WORDS)
    before = _valid(submission, key, reference, " ".join(candidate))
    after = _valid(submission, key, reference, " ".join(candidate + extra))
    if after > before:
        raise _twin_say(key, f"adding words that match nothing raised the score from {before} to {after}")


def _gamma_0(submission, key, rng):
    reference, candidate = " ".join(_words(rng)), " ".join(_words(rng))
    with_penalty = _valid(submission, key, reference, candidate)
    without = _valid(submission, key, reference, candidate, gamma=0)
    if without < with_penalty:
        raise _twin_say(key, f"with gamma=0 there is no penalty, so the score cannot drop: {with_penalty} became {without}")


PROPERTY_TWINS = {
    "properties-score_is_a_rounded_number_between_0_and_1": _rounded_in_range,
    "properties-case_does_not_change_the_score": _case,
    "properties-whitespace_does_not_change_the_score": _whitespace,
    "properties-no_common_word_scores_0": _no_common_word,
    "properties-a_text_without_words_scores_0": _without_words,
    "properties-identical_texts_have_one_chunk": _identical,
    "properties-a_repeated_word_matches_only_as_often_as_in_the_reference": _repeated,
    "properties-more_chunks_never_raise_the_score": _more_chunks,
    "properties-unmatched_words_at_the_end_never_raise_the_score": _unmatched_at_end,
    "properties-gamma_0_scores_the_fmean_alone": _gamma_0,
}
TWINS = [*SINGLE_TWINS, *PAIR_TWINS, "hidden-longer_exact_match_is_close_to_1", *PROPERTY_TWINS]


@pytest.mark.parametrize("key", TWINS)
def test_twin(submission, key):
    """The twin of one visible test: its rule on unseen inputs (its id names the visible test)."""
    if key in SINGLE_TWINS:
        reference, candidate, params = SINGLE_TWINS[key]
        _judged(submission, reference, candidate, params, _visible_name(key))
    elif key in PAIR_TWINS:
        reference, better, worse = PAIR_TWINS[key]
        high = _judged(submission, reference, better, {}, _visible_name(key))
        low = _judged(submission, reference, worse, {}, _visible_name(key))
        if not low < high:
            raise _twin_say(key, f"the fragmented candidate scored {low}, not lower than the contiguous one ({high})")
    elif key == "hidden-longer_exact_match_is_close_to_1":
        got = _judged(submission, LONG_TWIN, LONG_TWIN, {}, _visible_name(key))
        if got < 0.99:
            raise _twin_say(key, f"an exact match of many words should score at least 0.99, got {got}")
    else:
        # Seeded by the key: the same inputs on every run and machine, and the memo can replay them.
        rng = random.Random(f"twin:{key}")
        for _ in range(PROPERTY_TWIN_CASES):
            PROPERTY_TWINS[key](submission, key, rng)
