"""Tier `private`: instructors only, never shipped to the browser.

Differential tests: the submission must agree with the reference solution on generated inputs.
The reference runs here, on the trusted side; the submission runs in its sandbox.
"""

import importlib.util

import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

from grader import exercise
from grader.checks import expect_score

pytestmark = pytest.mark.tier("private")

EXAMPLES = exercise.load().private_examples


def _load_reference():
    path = exercise.KIT_ROOT / "solutions" / "reference.py"
    spec = importlib.util.spec_from_file_location("meteor_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


REFERENCE = _load_reference()

vocabulary = st.sampled_from(["the", "The", "THE", "cat", "sat", "on", "mat", "a", "sky", "sky.", "x", "y", "z"])
separators = st.sampled_from([" ", "  ", "\t", "\n", " \n "])


@st.composite
def texts(draw):
    tokens = draw(st.lists(vocabulary, max_size=15))
    seps = draw(st.lists(separators, min_size=len(tokens) + 1, max_size=len(tokens) + 1))
    return seps[0] + "".join(t + s for t, s in zip(tokens, seps[1:]))


parameters = st.fixed_dictionaries(
    {},
    optional={
        "alpha": st.one_of(st.sampled_from([0.0, 1.0]), st.floats(0, 1)),
        "beta": st.one_of(st.sampled_from([0, 1, 2]), st.floats(0, 8)),
        "gamma": st.one_of(st.sampled_from([0.0, 1.0]), st.floats(0, 1)),
    },
)


def _agrees(submission, reference, candidate, params):
    note(f"meteor_score({reference!r}, {candidate!r}, **{params!r})")
    exact = REFERENCE.explain(reference, candidate, **params)["score_unrounded"]
    expect_score(submission.meteor_score(reference, candidate, **params), exact)


@settings(max_examples=EXAMPLES)
@given(reference=texts(), candidate=texts(), params=parameters)
def test_agrees_with_the_reference(submission, reference, candidate, params):
    _agrees(submission, reference, candidate, params)


@settings(max_examples=EXAMPLES // 3)
@given(
    reference=st.text(alphabet="ab .,\n\tAB", max_size=40),
    candidate=st.text(alphabet="ab .,\n\tAB", max_size=40),
    params=parameters,
)
def test_agrees_with_the_reference_on_raw_text(submission, reference, candidate, params):
    _agrees(submission, reference, candidate, params)
