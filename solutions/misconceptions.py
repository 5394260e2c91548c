"""Misconception models: the reference's steps with one classic mistake each (instructor side only).

Each model is the right computation with exactly one step replaced, so wherever a model's
score differs from the reference, the difference comes from that one mistake. The
diagnosis compares a submission's answers with these models' answers on a fixed probe set.
PAIRS puts two common mistakes together, for a student who makes both.
Nothing here ships to the browser; the page gets only the models' outputs (grader/judging/diagnose.py).
This is the exercise's trusted seam module (exercise.toml [seam] trusted): MODELS, PAIRS, probes() and RULES.
"""

from __future__ import annotations

import ast
import math
import string
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from grader.core import exercise

HERE = Path(__file__).resolve().parent.parent  # the exercise folder
DEFAULTS = exercise.load(HERE).defaults  # alpha, beta, gamma: the signature's


# The statement's rules, in the words the student read (problem/statement.md): (where, the rule,
# the rule of exercise.toml's [scoring.rules] whose tests it breaks, "" for none).
RULE_CASE = ("rule 1, Tokens", "lowercase each text with str.lower() before comparing words", "case")
RULE_SPLIT = ("rule 1, Tokens", "split each text on any run of whitespace with str.split()", "split")
RULE_PUNCT = ("rule 1, Tokens", "punctuation stays part of its token, so sky. and sky are different words", "punct")
RULE_CLIP = ("rule 2, Matching", "each reference word can be matched only once", "clip")
RULE_LEFT = (
    "rule 2, Matching",
    "scan the candidate from left to right, each word taking an unused copy from the reference",
    "left",
)
RULE_PR = (
    "rule 3, Precision and recall",
    "P = m / |c| divides by the candidate's length and R = m / |r| by the reference's",
    "fmean",
)
RULE_FMEAN = ("rule 3, F-mean", "Fmean = P·R / (α·P + (1 − α)·R)", "fmean")
RULE_ALPHA = ("rule 3, F-mean", "use the alpha that was passed in: Fmean = P·R / (α·P + (1 − α)·R)", "fmean")
RULE_CHUNKS = ("rule 4, Chunks", "a chunk is a maximal run of consecutive matched positions in the candidate", "chunks")
RULE_PENALTY = ("rule 4, Penalty", "Pen = γ·(ch / m)^β", "penalty")
RULE_BETA = ("rule 4, Penalty", "use the beta that was passed in: Pen = γ·(ch / m)^β", "penalty")
RULE_GAMMA = ("rule 4, Penalty", "use the gamma that was passed in: Pen = γ·(ch / m)^β", "penalty")
RULE_IDENTICAL = (
    "rule 4, Penalty",
    "identical texts are still one chunk, so Pen = γ·(1/n)^β and the score stays below 1",
    "penalty",
)
RULE_SCORE = ("rule 5, Score", "score = Fmean·(1 − Pen)", "penalty")
RULE_ROUND = ("rule 5, Score", "round the final score to 3 decimal places with round(score, 3)", "round")
RULE_EMPTY = ("rule 6, Nothing to match", "the score is 0.0 when either text has no words or nothing matches", "empty")
RULE_OUTPUT = ("Output", "return a float between 0 and 1", "")
RULE_SIGNATURE = ("Problem statement", f"the function is {exercise.load(HERE).signature}", "")

# Each rule of exercise.toml's [scoring.rules] as the statement says it (where, the rule): where no
# model matches, the diagnosis names the rules whose tests fail in these words.
RULES = {
    "whole": ("rules 1 to 5, as the worked example shows", "the whole computation, from the tokens to the rounded score"),
    **{
        rule[2]: rule[:2]
        for rule in (RULE_CASE, RULE_SPLIT, RULE_PUNCT, RULE_CLIP, RULE_LEFT, RULE_CHUNKS, RULE_ROUND, RULE_EMPTY)
    },
    "fmean": ("rule 3, Precision, recall, F-mean", "P = m / |c|, R = m / |r| and Fmean = P·R / (α·P + (1 − α)·R)"),
    "penalty": ("rules 4 and 5, Penalty and Score", "Pen = γ·(ch / m)^β and score = Fmean·(1 − Pen)"),
}


@dataclass(frozen=True)
class Alignment:
    reference: list[str]
    candidate: list[str]
    matched: list[bool]  # per candidate token
    used: list[bool]  # per reference token: taken by a match


@dataclass(frozen=True)
class Steps:
    """The computation, one replaceable function per rule of the statement."""

    ref_tokens: Callable[[str], list[str]]
    cand_tokens: Callable[[str], list[str]]
    align: Callable[[list[str], list[str]], Alignment]
    count_m: Callable[[Alignment], int]
    chunks: Callable[[Alignment], int]
    precision: Callable[[int, int, int], float]  # (m, |c|, |r|)
    recall: Callable[[int, int, int], float]
    fmean: Callable[[float, float, float], float]  # (P, R, alpha)
    penalty: Callable[[int, int, int, int, float, float], float]  # (ch, m, |c|, |r|, beta, gamma)
    combine: Callable[[float, float], float]  # (Fmean, Pen)
    finish: Callable[[float], Any]  # rounding and the returned type
    nothing: Callable[[str, str, list[str], list[str]], Any]  # the value when nothing can match
    # An early return before anything else, from (reference, candidate, alpha, beta, gamma); GO_ON to go on.
    shortcut: Callable[..., Any] = lambda *args: GO_ON
    # (|c|, |r|) for precision and recall, from the texts and their tokens.
    lengths: Callable[[str, str, list[str], list[str]], tuple[int, int]] = lambda rt, ct, ref, cand: (len(cand), len(ref))


GO_ON = object()


def _tokens(text: str) -> list[str]:
    return text.lower().split()


def _align_left_to_right(ref: list[str], cand: list[str]) -> Alignment:
    used = [False] * len(ref)
    matched = []
    for word in cand:
        j = next((j for j, r in enumerate(ref) if r == word and not used[j]), None)
        if j is not None:
            used[j] = True
        matched.append(j is not None)
    return Alignment(ref, cand, matched, used)


def _runs(flags: list[bool]) -> int:
    return sum(1 for i, hit in enumerate(flags) if hit and (i == 0 or not flags[i - 1]))


def _fmean(p: float, r: float, alpha: float) -> float:
    return p * r / (alpha * p + (1 - alpha) * r)


RIGHT = Steps(
    ref_tokens=_tokens,
    cand_tokens=_tokens,
    align=_align_left_to_right,
    count_m=lambda a: sum(a.matched),
    chunks=lambda a: _runs(a.matched),
    precision=lambda m, c, r: m / c,
    recall=lambda m, c, r: m / r,
    fmean=_fmean,
    penalty=lambda ch, m, c, r, beta, gamma: gamma * (ch / m) ** beta,
    combine=lambda f, pen: f * (1 - pen),
    finish=lambda score: round(score, 3),
    nothing=lambda reference, candidate, ref, cand: 0.0,
)


def compute(
    steps: Steps,
    reference,
    candidate,
    alpha=DEFAULTS["alpha"],
    beta=DEFAULTS["beta"],
    gamma=DEFAULTS["gamma"],
    *,
    rounded: bool = True,
):
    early = steps.shortcut(reference, candidate, alpha, beta, gamma)
    if early is not GO_ON:
        return early
    ref, cand = steps.ref_tokens(reference), steps.cand_tokens(candidate)
    if not ref or not cand:
        return steps.nothing(reference, candidate, ref, cand)
    alignment = steps.align(ref, cand)
    m = steps.count_m(alignment)
    if m == 0:
        return steps.nothing(reference, candidate, ref, cand)
    ch = steps.chunks(alignment)
    c_len, r_len = steps.lengths(reference, candidate, ref, cand)
    p = steps.precision(m, c_len, r_len)
    r = steps.recall(m, c_len, r_len)
    score = steps.combine(steps.fmean(p, r, alpha), steps.penalty(ch, m, len(cand), len(ref), beta, gamma))
    return steps.finish(score) if rounded else score


@dataclass(frozen=True)
class Model:
    id: str
    when: str  # completes "Your scores match what happens when ..."
    section: str  # where the broken rule lives in the statement
    rule: str  # the rule, as the statement says it
    steps: Steps
    signature: str = "standard"  # "positional": alpha, beta, gamma are not keyword parameters
    family: str = ""  # the mistake this is one form of (its own id when empty)
    changed: tuple[str, ...] = ()  # the steps it replaces
    parts: tuple[str, ...] = ()  # for two mistakes at once: the two models' ids
    breaks: str = ""  # the rule of [scoring.rules] whose tests it breaks ("" for none)

    @property
    def mistake(self) -> str:
        return self.family or self.id

    def meteor_score(self, reference, candidate, *args, **kwargs):
        if self.signature == "positional" and kwargs:
            raise TypeError(f"meteor_score() got an unexpected keyword argument {next(iter(kwargs))!r}")
        return compute(self.steps, reference, candidate, *args, **kwargs)

    def unrounded(self, reference, candidate, **kwargs):
        """The score before the last step rounds it (probe-quality checks only)."""
        return compute(self.steps, reference, candidate, **kwargs, rounded=False)


def _model(id: str, when: str, rule: tuple[str, str, str], **changes: Any) -> Model:
    signature = changes.pop("signature", "standard")
    family = changes.pop("family", "")
    changed = tuple(sorted(changes)) + (("signature",) if signature != "standard" else ())
    return Model(id, when, rule[0], rule[1], replace(RIGHT, **changes), signature, family, changed, breaks=rule[2])


# Step replacements used by the models below.


def _split_space_keep_empty(text: str) -> list[str]:
    # An empty or blank text still counts as no words, as in most such submissions.
    return text.lower().split(" ") if text.strip() else []


def _split_space_drop_empty(text: str) -> list[str]:
    return [t for t in text.lower().split(" ") if t]


_NO_PUNCT = str.maketrans("", "", string.punctuation)


def _strip_punctuation(text: str) -> list[str]:
    return text.lower().translate(_NO_PUNCT).split()


def _align_unclipped(ref: list[str], cand: list[str]) -> Alignment:
    words = set(ref)
    return Alignment(ref, cand, [w in words for w in cand], [w in set(cand) for w in ref])


def _align_right_to_left(ref: list[str], cand: list[str]) -> Alignment:
    flipped = _align_left_to_right(ref, cand[::-1])
    return Alignment(ref, cand, flipped.matched[::-1], flipped.used)


def _align_set(ref: list[str], cand: list[str]) -> Alignment:
    common = set(ref) & set(cand)
    return Alignment(ref, cand, [w in common for w in cand], [w in common for w in ref])


def _chunks_in_both(a: Alignment) -> int:
    """Full METEOR's chunks: consecutive in the candidate and in the reference."""
    used = [False] * len(a.reference)
    target: list[int | None] = []
    for word in a.candidate:
        j = next((j for j, r in enumerate(a.reference) if r == word and not used[j]), None)
        if j is not None:
            used[j] = True
        target.append(j)
    chunks = 0
    for i, j in enumerate(target):
        if j is None:
            continue
        previous = target[i - 1] if i > 0 else None
        if previous is None or previous + 1 != j:
            chunks += 1
    return chunks


def _chunks_skip_first(a: Alignment) -> int:
    return sum(1 for i in range(1, len(a.matched)) if a.matched[i] and not a.matched[i - 1])


def _align_by_position(ref: list[str], cand: list[str]) -> Alignment:
    matched = [i < len(ref) and ref[i] == w for i, w in enumerate(cand)]
    return Alignment(ref, cand, matched, [i < len(cand) and cand[i] == w for i, w in enumerate(ref)])


def _unclipped_flags(a: Alignment) -> list[bool]:
    words = set(a.reference)
    return [w in words for w in a.candidate]


def _unique(text: str) -> list[str]:
    return list(dict.fromkeys(text.lower().split()))


def _chunks_split_at_repeats(a: Alignment) -> int:
    flags, words = a.matched, a.candidate
    return sum(1 for i, hit in enumerate(flags) if hit and (i == 0 or not flags[i - 1] or words[i] == words[i - 1]))


def _power_int_beta(ch, m, c, r, beta, gamma):
    ratio = 1.0
    for _ in range(int(beta)):
        ratio *= ch / m
    return gamma * ratio


def _fmean_no_brackets(p: float, r: float, alpha: float) -> float:
    # P * R / alpha * P + (1 - alpha) * R; at alpha = 0 it divides by zero, where the right value is kept
    return p * r / alpha * p + (1 - alpha) * r if alpha else _fmean(p, r, alpha)


def _strict_parameters(reference, candidate, alpha, beta, gamma):
    if not 0 < alpha < 1 or not 0 < gamma < 1 or beta <= 0:
        raise ValueError("parameter out of range")
    return GO_ON


def _crash_on_no_match(reference, candidate, ref, cand):
    if ref and cand:
        raise ZeroDivisionError("float division by zero")
    return 0.0


def _crash_on_blank(reference, candidate, ref, cand):
    if (not ref and reference) or (not cand and candidate):
        raise ZeroDivisionError("division by zero")
    return 0.0


def _truncate(score: float) -> float:
    return math.floor(score * 1000) / 1000


def _round_up(score: float) -> float:
    return math.ceil(score * 1000) / 1000


def _crash(reference, candidate, ref, cand):
    raise ZeroDivisionError("division by zero")


def _crash_on_empty(reference, candidate, ref, cand):
    if not ref or not cand:
        raise ZeroDivisionError("division by zero")
    return 0.0


def _none_on_empty(reference, candidate, ref, cand):
    return None if not ref or not cand else 0.0


def _one_when_both_empty(reference, candidate, ref, cand):
    return 1.0 if not ref and not cand else 0.0


def _one_when_any_empty(reference, candidate, ref, cand):
    return 1.0 if not ref or not cand else 0.0


def _rounded_steps(steps: Steps) -> Steps:
    r3 = lambda x: round(x, 3)  # noqa: E731
    return replace(
        steps,
        precision=lambda m, c, rr: r3(m / c),
        recall=lambda m, c, rr: r3(m / rr),
        fmean=lambda p, r, alpha: r3(_fmean(p, r, alpha)),
        penalty=lambda ch, m, c, rr, beta, gamma: r3(gamma * (ch / m) ** beta),
    )


MODELS: list[Model] = [
    # Tokens
    _model(
        "no_lowercase", "the words are compared without lowercasing them", RULE_CASE, ref_tokens=str.split, cand_tokens=str.split
    ),
    _model("reference_not_lowercased", "only the candidate is lowercased, not the reference", RULE_CASE, ref_tokens=str.split),
    _model("candidate_not_lowercased", "only the reference is lowercased, not the candidate", RULE_CASE, cand_tokens=str.split),
    _model(
        "split_on_space",
        "the texts are split with split(' '), so runs of spaces give empty words and tabs or newlines separate nothing",
        RULE_SPLIT,
        ref_tokens=_split_space_keep_empty,
        cand_tokens=_split_space_keep_empty,
    ),
    _model(
        "split_ignores_tabs_newlines",
        "the texts are split on spaces only, so tabs and newlines do not separate words",
        RULE_SPLIT,
        family="split_on_space",
        ref_tokens=_split_space_drop_empty,
        cand_tokens=_split_space_drop_empty,
    ),
    _model(
        "casefold_not_lower",
        "the texts are folded with str.casefold() instead of str.lower()",
        RULE_CASE,
        ref_tokens=lambda t: t.casefold().split(),
        cand_tokens=lambda t: t.casefold().split(),
    ),
    _model(
        "unique_words",
        "repeated words are removed from both texts before scoring",
        RULE_CLIP,
        ref_tokens=_unique,
        cand_tokens=_unique,
        align=_align_unclipped,
    ),
    _model(
        "punctuation_stripped",
        "punctuation is stripped from the words",
        RULE_PUNCT,
        ref_tokens=_strip_punctuation,
        cand_tokens=_strip_punctuation,
    ),
    # Matching
    _model("no_clipping", "repeated words are not clipped", RULE_CLIP, align=_align_unclipped),
    _model(
        "set_matching",
        "m is the number of distinct shared words (a set intersection)",
        RULE_CLIP,
        align=_align_set,
        count_m=lambda a: len(set(a.reference) & set(a.candidate)),
    ),
    _model(
        "matches_counted_from_reference",
        "m counts the reference words found anywhere in the candidate",
        RULE_CLIP,
        align=_align_unclipped,
        count_m=lambda a: sum(w in set(a.candidate) for w in a.reference),
    ),
    _model(
        "chunks_ignore_clipping",
        "chunks are found by marking every copy of a matched word, clipped or not",
        RULE_CLIP,
        chunks=lambda a: _runs(_unclipped_flags(a)),
    ),
    _model(
        "positional_matching",
        "a word only matches the word at the same position in the other text",
        RULE_LEFT,
        align=_align_by_position,
    ),
    _model("right_to_left_matching", "the candidate is scanned from right to left", RULE_LEFT, align=_align_right_to_left),
    # Precision, recall, F-mean
    _model(
        "p_r_swapped",
        "precision and recall trade places (which gives the same scores as alpha weighing recall instead of precision)",
        RULE_PR,
        precision=lambda m, c, r: m / r,
        recall=lambda m, c, r: m / c,
    ),
    _model("recall_over_candidate", "recall is divided by the candidate's length", RULE_PR, recall=lambda m, c, r: m / c),
    _model(
        "precision_over_reference", "precision is divided by the reference's length", RULE_PR, precision=lambda m, c, r: m / r
    ),
    _model(
        "characters_not_tokens",
        "the texts' lengths are counted in characters instead of words",
        RULE_PR,
        lengths=lambda rt, ct, ref, cand: (len(ct), len(rt)),
    ),
    _model(
        "alpha_hardcoded", "alpha is fixed at 0.9 whatever is passed", RULE_ALPHA, fmean=lambda p, r, alpha: _fmean(p, r, 0.9)
    ),
    _model(
        "f1_mean", "the F-mean is the plain F1 score 2PR / (P + R)", RULE_FMEAN, fmean=lambda p, r, alpha: 2 * p * r / (p + r)
    ),
    _model(
        "fmean_precedence",
        "the F-mean's denominator has no brackets: P·R / α·P + (1 − α)·R",
        RULE_FMEAN,
        fmean=_fmean_no_brackets,
    ),
    _model(
        "arithmetic_mean",
        "the F-mean is the weighted average α·P + (1 − α)·R",
        RULE_FMEAN,
        fmean=lambda p, r, alpha: alpha * p + (1 - alpha) * r,
    ),
    _model(
        "fmean_over_total_length",
        "the F-mean is m divided by the total number of words in both texts",
        RULE_FMEAN,
        precision=lambda m, c, r: m / (c + r),
        fmean=lambda p, r, alpha: p,
    ),
    # Chunks
    _model(
        "chunks_in_reference",
        "chunks are counted in the reference instead of the candidate",
        RULE_CHUNKS,
        chunks=lambda a: _runs(a.used),
    ),
    _model(
        "chunks_adjacent_in_both",
        "a chunk must also be consecutive in the reference, as in full METEOR",
        RULE_CHUNKS,
        chunks=_chunks_in_both,
    ),
    _model("every_match_own_chunk", "every matched word counts as its own chunk", RULE_CHUNKS, chunks=lambda a: sum(a.matched)),
    _model("repeated_word_starts_chunk", "a repeated word starts a new chunk", RULE_CHUNKS, chunks=_chunks_split_at_repeats),
    _model(
        "chunks_off_by_one",
        "a chunk that starts at the candidate's first word is not counted",
        RULE_CHUNKS,
        chunks=_chunks_skip_first,
    ),
    _model(
        "chunks_minus_one",
        "the gaps between chunks are counted instead of the chunks (one too few)",
        RULE_CHUNKS,
        family="chunks_off_by_one",
        chunks=lambda a: _runs(a.matched) - 1,
    ),
    _model(
        "chunks_plus_one",
        "one more chunk is counted than there is",
        RULE_CHUNKS,
        family="chunks_off_by_one",
        chunks=lambda a: _runs(a.matched) + 1,
    ),
    _model("single_chunk", "the matched words always count as a single chunk", RULE_CHUNKS, chunks=lambda a: 1),
    # Penalty
    _model(
        "penalty_over_candidate_length",
        "the chunks are divided by the candidate's length instead of m",
        RULE_PENALTY,
        penalty=lambda ch, m, c, r, beta, gamma: gamma * (ch / c) ** beta,
    ),
    _model(
        "penalty_over_reference_length",
        "the chunks are divided by the reference's length instead of m",
        RULE_PENALTY,
        penalty=lambda ch, m, c, r, beta, gamma: gamma * (ch / r) ** beta,
    ),
    _model(
        "penalty_precedence",
        "only m is raised to the power β: γ·ch / m^β",
        RULE_PENALTY,
        penalty=lambda ch, m, c, r, beta, gamma: gamma * ch / m**beta,
    ),
    _model(
        "gamma_inside_power",
        "gamma is raised to the power β together with the ratio: (γ·ch / m)^β",
        RULE_PENALTY,
        penalty=lambda ch, m, c, r, beta, gamma: (gamma * ch / m) ** beta,
    ),
    _model(
        "penalty_ratio_inverted",
        "the penalty uses m / ch instead of ch / m",
        RULE_PENALTY,
        penalty=lambda ch, m, c, r, beta, gamma: gamma * (m / ch) ** beta,
    ),
    _model(
        "beta_as_factor",
        "beta multiplies the fragmentation instead of being its power",
        RULE_PENALTY,
        penalty=lambda ch, m, c, r, beta, gamma: gamma * (ch / m) * beta,
    ),
    _model(
        "beta_gamma_swapped",
        "beta and gamma trade places in the penalty",
        RULE_PENALTY,
        penalty=lambda ch, m, c, r, beta, gamma: beta * (ch / m) ** gamma,
    ),
    _model(
        "beta_hardcoded",
        "beta is fixed at 3 whatever is passed",
        RULE_BETA,
        penalty=lambda ch, m, c, r, beta, gamma: gamma * (ch / m) ** 3,
    ),
    _model(
        "beta_truncated_to_int",
        "a fractional beta loses its fraction, as with a loop over range(int(beta))",
        RULE_BETA,
        penalty=_power_int_beta,
    ),
    _model(
        "beta_squared",
        "the fragmentation is squared whatever beta is passed",
        RULE_BETA,
        family="beta_hardcoded",
        penalty=lambda ch, m, c, r, beta, gamma: gamma * (ch / m) ** 2,
    ),
    _model(
        "gamma_hardcoded",
        "gamma is fixed at 0.5 whatever is passed",
        RULE_GAMMA,
        penalty=lambda ch, m, c, r, beta, gamma: 0.5 * (ch / m) ** beta,
    ),
    _model(
        "parameters_ignored",
        "alpha, beta and gamma are fixed at their defaults whatever is passed",
        RULE_SIGNATURE,
        fmean=lambda p, r, alpha: _fmean(p, r, 0.9),
        penalty=lambda ch, m, c, r, beta, gamma: 0.5 * (ch / m) ** 3,
    ),
    # Score
    _model(
        "penalty_not_subtracted",
        "the F-mean is multiplied by the penalty instead of by 1 − Pen",
        RULE_SCORE,
        combine=lambda f, pen: f * pen,
    ),
    _model("penalty_ignored", "the penalty is left out, so the score is the F-mean alone", RULE_SCORE, combine=lambda f, pen: f),
    _model(
        "penalty_subtracted_from_fmean",
        "the penalty is subtracted from the F-mean instead of scaling it",
        RULE_SCORE,
        combine=lambda f, pen: f - pen,
    ),
    # Rounding and the returned value
    _model("no_rounding", "the score is not rounded", RULE_ROUND, finish=lambda s: s),
    _model("two_decimals", "the score is rounded to 2 decimals", RULE_ROUND, finish=lambda s: round(s, 2)),
    _model("truncation", "the score is cut down to 3 decimals instead of rounded", RULE_ROUND, finish=_truncate),
    _model("rounding_up", "the score is rounded up to 3 decimals", RULE_ROUND, finish=_round_up),
    _model("rounding_to_int", "round(score) is called without the number of decimals", RULE_ROUND, finish=lambda s: round(s)),
    _model(
        "rounds_intermediate_values",
        "P, R, Fmean and Pen are each rounded before the score is computed",
        RULE_ROUND,
        **{k: getattr(_rounded_steps(RIGHT), k) for k in ("precision", "recall", "fmean", "penalty")},
    ),
    _model(
        "returns_string",
        "the score is returned as a string",
        RULE_OUTPUT,
        finish=lambda s: f"{s:.3f}",
        nothing=lambda *a: "0.000",
    ),
    # Nothing to match
    _model("crash_on_empty", "a text without words makes the function crash", RULE_EMPTY, nothing=_crash_on_empty),
    _model(
        "crash_on_no_match", "the function crashes when the texts share no word (m = 0)", RULE_EMPTY, nothing=_crash_on_no_match
    ),
    _model("whitespace_only_crashes", "a text of only whitespace makes the function crash", RULE_EMPTY, nothing=_crash_on_blank),
    _model(
        "crash_when_nothing_matches",
        "the function crashes when nothing can match (no words, or no shared word)",
        RULE_EMPTY,
        nothing=_crash,
    ),
    _model("none_on_empty", "None is returned for a text without words", RULE_EMPTY, nothing=_none_on_empty),
    _model("empty_gives_one", "two texts without words score 1.0", RULE_EMPTY, nothing=_one_when_both_empty),
    _model(
        "identical_gives_one",
        "identical texts return 1.0 straight away",
        RULE_IDENTICAL,
        shortcut=lambda reference, candidate, *params: 1.0 if reference == candidate else GO_ON,
    ),
    _model(
        "any_empty_gives_one",
        "a text without words scores 1.0",
        RULE_EMPTY,
        family="empty_gives_one",
        nothing=_one_when_any_empty,
    ),
    # The signature
    _model(
        "rejects_boundary_parameters",
        "alpha or gamma of exactly 0 or 1, or beta of 0, is rejected as out of range",
        RULE_SIGNATURE,
        shortcut=_strict_parameters,
    ),
    _model("keyword_names_differ", "alpha, beta and gamma cannot be passed by name", RULE_SIGNATURE, signature="positional"),
]

BY_ID = {m.id: m for m in MODELS}

# Students often make two mistakes at once. These common ones are also tried in pairs, when no
# single model matches (kept to a short list: the page downloads every pair's answers).
PAIRABLE = (
    "no_lowercase",
    "reference_not_lowercased",
    "split_on_space",
    "punctuation_stripped",
    "no_clipping",
    "set_matching",
    "right_to_left_matching",
    "p_r_swapped",
    "recall_over_candidate",
    "alpha_hardcoded",
    "f1_mean",
    "chunks_in_reference",
    "every_match_own_chunk",
    "chunks_off_by_one",
    "penalty_over_candidate_length",
    "beta_hardcoded",
    "gamma_hardcoded",
    "penalty_not_subtracted",
    "penalty_ignored",
    "no_rounding",
    "two_decimals",
    "truncation",
    "crash_on_empty",
    "none_on_empty",
)


def pair(a: Model, b: Model) -> Model | None:
    """Both mistakes at once, or None when they replace the same step (one would hide the other)."""
    if set(a.changed) & set(b.changed):
        return None
    changes = {name: getattr(m.steps, name) for m in (a, b) for name in m.changed if name != "signature"}
    signature = a.signature if a.signature != "standard" else b.signature
    return Model(
        f"{a.id}+{b.id}",
        f"{a.when}, and {b.when}",
        b.section,
        f"{a.rule} ({a.section}); and {b.rule}",
        replace(RIGHT, **changes),
        signature,
        "",
        a.changed + b.changed,
        (a.id, b.id),
    )


PAIRS = [p for i, a in enumerate(PAIRABLE) for b in PAIRABLE[i + 1 :] if (p := pair(BY_ID[a], BY_ID[b]))]


def find(model_id: str) -> Model:
    """A model, or a pair of them, by id."""
    if model_id in BY_ID:
        return BY_ID[model_id]
    a, _, b = model_id.partition("+")
    found = pair(BY_ID[a], BY_ID[b])
    if found is None:
        raise KeyError(model_id)
    return found


# Mistakes that give exactly the same scores as a model above, so the diagnosis names that model.
# P·R / ((1−α)·P + α·R) with P and R swapped is P·R / (α·P + (1−α)·R) with alpha moved: one formula.
SAME_SCORES_AS = {"alpha_swapped": "p_r_swapped"}


# (reference, candidate, keyword arguments): each probe separates some models from the reference.
OUR_PROBES: list[tuple[str, str, dict]] = [
    ("the old man and the sea", "the old man sees the sea", {}),
    ("The Old Man sees the sea", "the old man saw The Sea", {}),
    ("Birds Fly South", "birds fly south again", {}),
    ("cold wind blows here", "The Cold Wind blows", {}),
    ("one two\tthree\nfour", "one two three four five", {}),
    ("green  tea is hot", "green tea  is very hot", {}),
    (" stars shine ", "stars shine bright tonight", {}),
    ("Stop, look and listen.", "stop look and listen", {}),
    ("hello, my good friend!", "Hello, my friend", {}),
    ("go home now", "go go go home", {}),
    ("we will we will rock you", "we will we will go", {}),
    ("sun moon", "sun sun moon", {}),
    ("sun moon", "sun rain sun moon", {}),
    ("one two three four", "three four one two", {}),
    ("red x green y blue", "red green blue", {}),
    ("p q r s t", "z p q z r s", {}),
    ("one two three four five six seven", "one two x four five y seven", {}),  # three chunks
    ("sun moon star sky", "sun moon rain sky cloud", {}),  # two chunks, the last word unmatched
    ("big red sun", "sun big sun", {}),  # an extra copy that scanning from either end leaves out
    ("blue sky", "green grass", {}),
    ("", "some words here", {}),
    ("some words here", "", {}),
    ("", "", {}),
    ("  \t", "\n", {}),
    ("a few words", "   ", {}),
    ("the quick fox", "the quick fox", {}),
    ("hi", "hi", {}),
    ("Hello", "hello", {}),
    ("so so good", "so so good", {}),
    ("Sie grüßt den Mann", "sie grüsst den mann", {}),
    ("a long sentence with many words in it today", "long words today", {}),
    ("short one", "short one plus many extra words here", {}),
    ("the red fox runs into the dark wood today", "a red fox runs through the wood", {"alpha": 0.5}),
    ("the red fox runs into the dark wood today", "a red fox runs through the wood", {"alpha": 0.2}),
    ("the red fox runs into the dark wood today", "a red fox runs through the wood", {"alpha": 0.0}),
    ("the red fox runs into the dark wood today", "a red fox runs through the wood", {"alpha": 1.0}),
    ("the red fox runs into the dark wood today", "a red fox runs through the wood", {"beta": 2}),
    ("the red fox runs into the dark wood today", "a red fox runs through the wood", {"beta": 1.5}),
    ("the red fox runs into the dark wood today", "a red fox runs through the wood", {"beta": 0}),
    ("the red fox runs into the dark wood today", "a red fox runs through the wood", {"gamma": 0.25}),
    ("the red fox runs into the dark wood today", "a red fox runs through the wood", {"gamma": 1.0}),
    ("the red fox runs into the dark wood today", "a red fox runs through the wood", {"gamma": 0.0}),
    ("the red fox runs into the dark wood today", "a red fox runs through the wood", {"alpha": 0.3, "beta": 1, "gamma": 0.8}),
]


def statement_examples() -> tuple[tuple[str, str, dict], ...]:
    """The examples tier's inputs: public, since the statement shows them. Read, not imported (it is a test module)."""
    source = (HERE / "hidden_tests" / "test_examples.py").read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "EXAMPLES" for t in node.targets):
            return tuple(tuple(ast.literal_eval(part) for part in value.elts[:3]) for value in node.value.values)
    raise LookupError("hidden_tests/test_examples.py defines no EXAMPLES")


def probes() -> list[dict]:
    """The diagnosis's inputs, for the engine: the statement's examples first, then ours."""
    examples = [{"args": [r, c], "kwargs": k, "origin": "examples"} for r, c, k in statement_examples()]
    ours = [{"args": [r, c], "kwargs": k, "origin": "probe"} for r, c, k in OUR_PROBES]
    return examples + ours
