"""Tier `properties`: invariants every correct solution satisfies, checked on generated inputs.

None of them needs the reference solution. Runs are reproducible (the `kit` hypothesis
profile in conftest.py), and a failure shows the smallest counterexample found.
"""

import pytest
from hypothesis import assume, given, note
from hypothesis import strategies as st

from grader.core import exercise
from grader.core.checks import WrongAnswer

# The exercise's value rule (exercise.toml [seam] values).
VALUES = exercise.holding(__file__).module("values")  # the value rule of the exercise holding this file
expect_score, expect_valid_score = VALUES.expect_score, VALUES.expect_valid_score

pytestmark = pytest.mark.tier("properties")

VOCABULARY = ["the", "cat", "sat", "on", "mat", "a", "dog", "sky", "sky.", "rain", "Hello,", "it's"]
OTHER_WORDS = ["zebra", "quartz", "fjord", "kiwi", "lynx", "Ozone!"]  # never in VOCABULARY, in any case
WHITESPACE = st.text(alphabet=" \t\n\r", min_size=1, max_size=3)

words = st.lists(st.sampled_from(VOCABULARY), max_size=12)
some_words = st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=12)
alphas = st.one_of(st.just(0.9), st.sampled_from([0.0, 0.5, 1.0]), st.floats(0, 1))
betas = st.one_of(st.just(3), st.sampled_from([0, 1, 2]), st.floats(0, 6))
gammas = st.one_of(st.just(0.5), st.sampled_from([0.0, 1.0]), st.floats(0, 1))


def score(submission, reference, candidate, **params):
    """Call the submission, and note the call so a failure shows its exact input."""
    extra = "".join(f", {k}={v!r}" for k, v in params.items())
    note(f"meteor_score({reference!r}, {candidate!r}{extra})")
    got = submission.meteor_score(reference, candidate, **params)
    value = expect_valid_score(got)
    note(f"  returned {value!r}")
    return value


def fmean(p, r, alpha):
    return p * r / (alpha * p + (1 - alpha) * r)


@given(reference=words, candidate=words, alpha=alphas, beta=betas, gamma=gammas)
def test_score_is_a_rounded_number_between_0_and_1(submission, reference, candidate, alpha, beta, gamma):
    score(submission, " ".join(reference), " ".join(candidate), alpha=alpha, beta=beta, gamma=gamma)


STYLES = st.sampled_from([str, str.upper, str.title, str.swapcase])


@given(reference=words, candidate=words, ref_style=STYLES, cand_style=STYLES)
def test_case_does_not_change_the_score(submission, reference, candidate, ref_style, cand_style):
    # Each text gets its own style: "THE" in one text must still match "the" in the other.
    plain = score(submission, " ".join(reference), " ".join(candidate))
    styled = score(submission, ref_style(" ".join(reference)), cand_style(" ".join(candidate)))
    if plain != styled:
        raise WrongAnswer(f"changing the letters' case changed the score from {plain} to {styled}")


@given(reference=words, candidate=words, data=st.data())
def test_whitespace_does_not_change_the_score(submission, reference, candidate, data):
    def spaced(tokens):
        gaps = data.draw(st.lists(WHITESPACE, min_size=len(tokens) + 1, max_size=len(tokens) + 1))
        return gaps[0] + "".join(t + g for t, g in zip(tokens, gaps[1:]))

    plain = score(submission, " ".join(reference), " ".join(candidate))
    messy = score(submission, spaced(reference), spaced(candidate))
    if plain != messy:
        raise WrongAnswer(f"changing the whitespace between words changed the score from {plain} to {messy}")


@given(reference=words, candidate=st.lists(st.sampled_from(OTHER_WORDS), max_size=12), alpha=alphas, beta=betas, gamma=gammas)
def test_no_common_word_scores_0(submission, reference, candidate, alpha, beta, gamma):
    got = score(submission, " ".join(reference), " ".join(candidate), alpha=alpha, beta=beta, gamma=gamma)
    if got != 0.0:
        raise WrongAnswer(f"texts with no word in common must score 0.0, got {got}")


@given(text=st.sampled_from(["", " ", "\n\t  "]), other=words, which=st.booleans())
def test_a_text_without_words_scores_0(submission, text, other, which):
    reference, candidate = (text, " ".join(other)) if which else (" ".join(other), text)
    got = score(submission, reference, candidate)
    if got != 0.0:
        raise WrongAnswer(f"a text with no words must score 0.0, got {got}")


@given(tokens=some_words, alpha=alphas, beta=betas, gamma=gammas)
def test_identical_texts_have_one_chunk(submission, tokens, alpha, beta, gamma):
    text = " ".join(tokens)
    got = score(submission, text, text, alpha=alpha, beta=beta, gamma=gamma)
    # Every word matches and forms one chunk, so P = R = 1 and Pen = gamma * (1/n)^beta.
    expect_score(got, 1 - gamma * (1 / len(tokens)) ** beta)


@given(reference=some_words, index=st.integers(0, 11), repeats=st.integers(2, 8))
def test_a_repeated_word_matches_only_as_often_as_in_the_reference(submission, reference, index, repeats):
    word = reference[index % len(reference)]
    available = reference.count(word)
    assume(repeats > available)
    got = score(submission, " ".join(reference), " ".join([word] * repeats))
    # The first `available` copies match, in one chunk; the rest are clipped.
    p, r = available / repeats, available / len(reference)
    expect_score(got, fmean(p, r, 0.9) * (1 - 0.5 * (1 / available) ** 3))


@given(matched=st.lists(st.sampled_from(VOCABULARY[:6]), min_size=2, max_size=6, unique=True), data=st.data())
def test_more_chunks_never_raise_the_score(submission, matched, data):
    fillers = data.draw(st.lists(st.sampled_from(OTHER_WORDS), min_size=len(matched) - 1, max_size=len(matched) + 2))
    reference = " ".join(matched)
    together = " ".join(matched + fillers)
    # Same words, same m, P and R; only the number of chunks grows.
    interleaved = [w for pair in zip(matched, fillers) for w in pair] + matched[len(fillers):] + fillers[len(matched):]
    contiguous_score = score(submission, reference, together)
    scattered_score = score(submission, reference, " ".join(interleaved))
    if scattered_score > contiguous_score:
        raise WrongAnswer(
            f"splitting the matched words into more chunks raised the score from {contiguous_score} to {scattered_score}"
        )


@given(reference=words, candidate=words, extra=st.lists(st.sampled_from(OTHER_WORDS), min_size=1, max_size=4))
def test_unmatched_words_at_the_end_never_raise_the_score(submission, reference, candidate, extra):
    before = score(submission, " ".join(reference), " ".join(candidate))
    after = score(submission, " ".join(reference), " ".join(candidate + extra))
    if after > before:
        raise WrongAnswer(f"adding words that match nothing raised the score from {before} to {after}")


@given(reference=words, candidate=words)
def test_gamma_0_scores_the_fmean_alone(submission, reference, candidate):
    with_penalty = score(submission, " ".join(reference), " ".join(candidate))
    without = score(submission, " ".join(reference), " ".join(candidate), gamma=0)
    if without < with_penalty:
        raise WrongAnswer(f"with gamma=0 there is no penalty, so the score cannot drop: {with_penalty} became {without}")
