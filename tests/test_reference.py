"""The reference solution: it passes every tier, checks its input, and agrees with a second implementation."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
import warnings
from fractions import Fraction

import pytest
from conftest import KIT_ROOT, load_module
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.core import exercise

correct_roundings = exercise.load(KIT_ROOT).module("values").correct_roundings  # the exercise's value rule

with warnings.catch_warnings():
    # Their `tier` mark is registered by hidden_tests/conftest.py, not in this session.
    warnings.simplefilter("ignore", pytest.PytestUnknownMarkWarning)
    HIDDEN = load_module(KIT_ROOT / "hidden_tests" / "test_hidden.py", "kit_test_hidden")
    EXAMPLES = load_module(KIT_ROOT / "hidden_tests" / "test_examples.py", "kit_test_examples").EXAMPLES
WRONG_FILE = KIT_ROOT / "tests" / "catalogue" / "wrong" / "no_clipping.py"

MANY = settings(max_examples=3000, derandomize=True, database=None, deadline=None)
SOME = settings(max_examples=300, derandomize=True, database=None, deadline=None)


def hidden_tests(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "hidden_tests", "-q", "-p", "no:cacheprovider", *args],
        cwd=KIT_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


# ---------------------------------------------------------------- every tier


def test_the_reference_passes_every_tier():
    done = hidden_tests()
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "failed" not in done.stdout


def test_a_wrong_submission_makes_the_hidden_tests_exit_1():
    done = hidden_tests("--submission", str(WRONG_FILE), "--tiers", "examples,hidden")
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]
    assert "test_statement_example[repeated_word_is_clipped]" in done.stdout


# ---------------------------------------------------------------- explain


def test_explain_gives_every_value_of_the_worked_example(reference):
    e = reference.explain("Rain falls gently from the sky", "Gentle rain drops from the sky")
    assert e["reference_tokens"] == ["rain", "falls", "gently", "from", "the", "sky"]
    assert e["candidate_tokens"] == ["gentle", "rain", "drops", "from", "the", "sky"]
    assert e["matched"] == [False, True, False, True, True, True]
    assert e["chunk_spans"] == [(1, 2), (3, 6)]
    assert (e["m"], e["chunks"]) == (4, 2)
    assert e["precision"] == pytest.approx(4 / 6) and e["recall"] == pytest.approx(4 / 6)
    assert e["fmean"] == pytest.approx(4 / 6)
    assert e["penalty"] == pytest.approx(0.0625)
    assert e["score_unrounded"] == pytest.approx(0.625)
    assert e["score"] == 0.625


def test_explain_of_texts_without_words_is_all_zero(reference):
    e = reference.explain(" \t", "the cat")
    assert (e["m"], e["chunks"], e["score_unrounded"], e["score"]) == (0, 0, 0.0, 0.0)
    assert e["reference_tokens"] == [] and e["matched"] == [False, False]


def test_explain_and_meteor_score_take_the_same_arguments(reference):
    args = ("the cat sat on the mat", "the cat on the mat")
    params = {"alpha": 0.5, "beta": 2, "gamma": 0.25}
    assert reference.meteor_score(*args, **params) == reference.explain(*args, **params)["score"] == 0.9
    assert reference.meteor_score(*args, 0.5, 2, 0.25) == 0.9


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("value", [None, b"the cat", 3, ["the", "cat"]], ids=["None", "bytes", "int", "list"])
@pytest.mark.parametrize("position", ["reference", "candidate"])
def test_a_text_that_is_not_a_str_is_a_type_error_naming_it(reference, value, position):
    args = {"reference": "the cat", "candidate": "the cat", position: value}
    with pytest.raises(TypeError, match=rf"^{position} must be a str, not {type(value).__name__}$"):
        reference.meteor_score(args["reference"], args["candidate"])
    with pytest.raises(TypeError, match=position):
        reference.explain(**args)


@pytest.mark.parametrize(
    "params",
    [
        {"alpha": -0.01},
        {"alpha": 1.01},
        {"alpha": math.nan},
        {"alpha": math.inf},
        {"gamma": -1},
        {"gamma": 2},
        {"gamma": math.nan},
        {"beta": -0.5},
        {"beta": -math.inf},
        {"beta": math.inf},
        {"beta": math.nan},
    ],
    ids=repr,
)
def test_a_parameter_out_of_range_is_a_value_error_naming_it(reference, params):
    (name,) = params
    with pytest.raises(ValueError, match=name):
        reference.meteor_score("the cat", "the cat", **params)


@pytest.mark.parametrize("params", [{"alpha": "0.9"}, {"beta": None}, {"gamma": True}], ids=repr)
def test_a_parameter_that_is_not_a_number_is_a_type_error_naming_it(reference, params):
    (name,) = params
    with pytest.raises(TypeError, match=name):
        reference.meteor_score("the cat", "the cat", **params)


@pytest.mark.parametrize("params", [{"alpha": 0}, {"alpha": 1}, {"gamma": 0}, {"gamma": 1}, {"beta": 0}, {"beta": 1e6}])
def test_the_bounds_themselves_are_accepted(reference, params):
    assert 0.0 <= reference.meteor_score("a b c", "a x c", **params) <= 1.0


# ---------------------------------------------------------------- a second implementation

WORDS = ["the", "cat", "sat", "on", "mat", "a", "sky", "sky.", "rain,", "it's", "straße", "x", "y"]
SEPARATORS = [" ", "  ", "\t", "\n", "\r\n", "\x0b", "\x0c", "\x1c", "\u00a0", "\u2003", "\u3000"]


STYLED = sorted({style(w) for w in WORDS for style in (str, str.upper, str.title)})


@st.composite
def texts(draw, max_words=14):
    words = draw(st.lists(st.sampled_from(STYLED), max_size=max_words))
    gaps = draw(st.lists(st.sampled_from(SEPARATORS), min_size=len(words) + 1, max_size=len(words) + 1))
    # Leading and trailing whitespace is optional; between words there is always some.
    gaps[0] *= draw(st.booleans())
    gaps[-1] *= draw(st.booleans())
    return gaps[0] + "".join(w + g for w, g in zip(words, gaps[1:]))


alphas = st.one_of(st.sampled_from([0.0, 0.5, 0.9, 1.0]), st.floats(0, 1))
betas = st.one_of(st.sampled_from([0, 1, 2, 3, 3.0]), st.integers(0, 10), st.floats(0, 12))
gammas = st.one_of(st.sampled_from([0.0, 0.5, 1.0]), st.floats(0, 1))


def words_of(text: str) -> list[str]:
    """Tokens by scanning for whitespace characters one by one (no str.split)."""
    tokens, current = [], []
    for ch in text.lower():
        if ch.isspace():
            if current:
                tokens.append("".join(current))
                current = []
        else:
            current.append(ch)
    if current:
        tokens.append("".join(current))
    return tokens


def second_opinion(reference: str, candidate: str, alpha=0.9, beta=3, gamma=0.5) -> tuple[int, int, Fraction | float]:
    """(m, chunks, score): free reference positions per word, matched candidate positions, exact fractions."""
    ref, cand = words_of(reference), words_of(candidate)
    free: dict[str, list[int]] = {}
    for i, word in enumerate(ref):
        free.setdefault(word, []).append(i)
    positions = []
    for j, word in enumerate(cand):
        if free.get(word):
            free[word].pop()
            positions.append(j)
    m = len(positions)
    if not ref or not cand or m == 0:
        return m, 0, Fraction(0)
    chunks = 1 + sum(1 for a, b in zip(positions, positions[1:]) if b != a + 1)
    p, r, a = Fraction(m, len(cand)), Fraction(m, len(ref)), Fraction(alpha)
    fmean = p * r / (a * p + (1 - a) * r)
    ratio = Fraction(chunks, m)
    # Only a fractional beta needs a float power; every other step is exact.
    power = ratio ** int(beta) if float(beta).is_integer() else Fraction(float(ratio) ** beta)
    return m, chunks, fmean * (1 - Fraction(gamma) * power)


def test_the_second_implementation_gives_the_statement_values():
    assert second_opinion("Rain falls gently from the sky", "Gentle rain drops from the sky")[2] == Fraction(5, 8)
    # The float 0.9 is not 9/10 exactly, so the exact statement value needs alpha = 9/10.
    assert second_opinion("the cat", "the the the cat", Fraction(9, 10)) == (2, 2, Fraction(5, 11))
    assert second_opinion("a b c d", "c d a b") == (4, 1, Fraction(127, 128))
    assert second_opinion("", "x")[2] == 0


@pytest.fixture(scope="module")
def reference_solution(reference):
    """The reference under another name: in the hypothesis tests `reference` is a text."""
    return reference


def random_case(seed: int) -> tuple[str, str, float, float, float]:
    """Two texts and three parameters from one seed: a hypothesis draw per example, not per word."""
    rng = random.Random(seed)

    def text() -> str:
        words = rng.choices(STYLED, k=rng.randint(0, 14))
        gaps = rng.choices(SEPARATORS, k=len(words) + 1)
        gaps[0] *= rng.random() < 0.5
        gaps[-1] *= rng.random() < 0.5
        return gaps[0] + "".join(w + g for w, g in zip(words, gaps[1:]))

    def param(bounds: list[float], high: float) -> float:
        return rng.choice(bounds) if rng.random() < 0.3 else rng.uniform(0, high)

    return text(), text(), param([0.0, 0.9, 1.0], 1), param([0, 1, 2, 3], 12), param([0.0, 0.5, 1.0], 1)


def agrees(solution, reference: str, candidate: str, alpha, beta, gamma) -> None:
    m, chunks, exact = second_opinion(reference, candidate, alpha, beta, gamma)
    e = solution.explain(reference, candidate, alpha, beta, gamma)
    assert (e["m"], e["chunks"]) == (m, chunks)
    assert abs(e["score_unrounded"] - float(exact)) <= 1e-12
    assert any(abs(e["score"] - ok) < 1e-12 for ok in correct_roundings(float(exact)))


@MANY
@given(seed=st.integers(0, 2**64))
def test_the_reference_agrees_with_a_second_implementation(reference_solution, seed):
    agrees(reference_solution, *random_case(seed))


@SOME
@given(reference=texts(), candidate=texts(), alpha=alphas, beta=betas, gamma=gammas)
def test_the_reference_agrees_with_a_second_implementation_on_shrinkable_inputs(
    reference_solution, reference, candidate, alpha, beta, gamma
):
    agrees(reference_solution, reference, candidate, alpha, beta, gamma)


@pytest.mark.parametrize("mistake", ["no_clipping", "chunks_off_by_one", "alpha_swapped", "beta_truncated_to_int"])
def test_the_second_implementation_tells_a_wrong_solution_apart(mistake):
    # The comparison has teeth: on the same random cases it catches mistakes of the catalogue.
    wrong = load_module(KIT_ROOT / "tests" / "catalogue" / "wrong" / f"{mistake}.py", f"wrong_{mistake}")
    differ = 0
    for seed in range(300):
        reference, candidate, alpha, beta, gamma = random_case(seed)
        exact = float(second_opinion(reference, candidate, alpha, beta, gamma)[2])
        got = wrong.meteor_score(reference, candidate, alpha, beta, gamma)
        differ += all(abs(got - ok) > 1e-9 for ok in correct_roundings(exact))
    assert differ > 0


@SOME
@given(reference=texts(), candidate=texts(), alpha=alphas, beta=st.one_of(betas, st.floats(0, 1e300)), gamma=gammas)
def test_the_reference_never_returns_nan(reference_solution, reference, candidate, alpha, beta, gamma):
    e = reference_solution.explain(reference, candidate, alpha, beta, gamma)
    for key in ("precision", "recall", "fmean", "penalty", "score_unrounded", "score"):
        assert not math.isnan(e[key]), key
    assert 0.0 <= e["score"] <= 1.0
    assert type(reference_solution.meteor_score(reference, candidate, alpha, beta, gamma)) is float


@SOME
@given(reference=texts(max_words=4), candidate=texts(max_words=4))
def test_short_texts_agree_too(reference_solution, reference, candidate):
    # Short texts reach the empty and single-word cases far more often.
    assert reference_solution.explain(reference, candidate)["score_unrounded"] == pytest.approx(
        float(second_opinion(reference, candidate)[2]), abs=1e-12
    )


# ---------------------------------------------------------------- the tests' expected values


@pytest.mark.parametrize("case", HIDDEN.CASES, ids=[c.name for c in HIDDEN.CASES])
def test_a_hidden_case_expects_the_reference_score(reference, case):
    got = reference.explain(case.reference, case.candidate, **case.kwargs)["score_unrounded"]
    assert abs(got - case.exact) <= 1e-12
    assert abs(float(second_opinion(case.reference, case.candidate, **case.kwargs)[2]) - case.exact) <= 1e-12


def test_the_hidden_cases_have_unique_names_and_a_rule_of_the_module():
    names = [c.name for c in HIDDEN.CASES]
    assert len(names) == len(set(names))
    rules = {v for k, v in vars(HIDDEN).items() if k.startswith("RULE_")}
    assert {c.rule for c in HIDDEN.CASES} <= rules


def test_the_inline_hidden_values_are_the_reference_scores(reference):
    ref = "a b c d e f g h"
    assert reference.explain(ref, "a b c d w x y z")["score_unrounded"] == pytest.approx(0.49609375, abs=1e-12)
    assert reference.explain(ref, "a w b x c y d z")["score_unrounded"] == pytest.approx(0.25, abs=1e-12)
    assert reference.explain(HIDDEN.LONG, HIDDEN.LONG)["score_unrounded"] == pytest.approx(0.9999638310185185, abs=1e-12)


@pytest.mark.parametrize("name", EXAMPLES)
def test_an_example_expects_the_reference_score(reference, name):
    ref, cand, kwargs, exact = EXAMPLES[name]
    assert abs(reference.explain(ref, cand, **kwargs)["score_unrounded"] - exact) <= 1e-12


@pytest.mark.parametrize("name", EXAMPLES)
def test_an_example_appears_in_the_statement_with_its_result(reference, name):
    ref, cand, kwargs, exact = EXAMPLES[name]
    extra = "".join(f", {k}={v!r}" for k, v in kwargs.items())
    call = f"meteor_score({json.dumps(ref)}, {json.dumps(cand)}{extra})"
    statement = (KIT_ROOT / "problem" / "statement.md").read_text(encoding="utf-8")
    lines = [line for line in statement.splitlines() if call in line]
    assert lines, f"{call} is not in statement.md"
    result = repr(reference.meteor_score(ref, cand, **kwargs))
    assert any(f"`{result}`" in line or f"# {result}" in line for line in lines), (call, result)
