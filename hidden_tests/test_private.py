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

from grader import exercise
from grader.checks import expect_score

pytestmark = pytest.mark.tier("private")

EXAMPLES = exercise.load().private_examples
# "Straße" and "STRASSE" agree under casefold() but not under lower(), which the rules use.
VOCABULARY = ["the", "The", "THE", "cat", "sat", "on", "mat", "a", "sky", "sky.", "x", "y", "z", "Straße", "STRASSE"]
SEPARATORS = [" ", "  ", "\t", "\n", " \n "]
RAW_ALPHABET = "ab .,\n\tAB"


def _load_reference():
    path = exercise.KIT_ROOT / "solutions" / "reference.py"
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
