"""Tier `private`: differential tests against the reference solution. Never shipped to the page."""

import importlib.util
import random

import pytest

from grader.core import exercise

EXERCISE = exercise.holding(__file__)  # the exercise whose folder holds this file
VALUES = EXERCISE.module("values")

pytestmark = pytest.mark.tier("private")


def _reference():
    spec = importlib.util.spec_from_file_location("_wer_reference", EXERCISE.root / "solutions" / "reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _inputs(count: int) -> list[tuple[str, str]]:
    chooser = random.Random(12)
    vocabulary = ["a", "b", "c", "A", "the", "cat", "x"]
    texts = [" ".join(chooser.choices(vocabulary, k=chooser.randint(0, 7))) for _ in range(count * 2)]
    return list(zip(texts[::2], texts[1::2]))


def test_matches_the_reference(submission):
    reference = _reference()
    for ref, hyp in _inputs(EXERCISE.private_examples):
        VALUES.expect_rate(
            submission.word_error_rate(ref, hyp), reference.word_error_rate(ref, hyp), call=f"word_error_rate({ref!r}, {hyp!r})"
        )


def test_detail_matches_the_reference(submission):
    reference = _reference()
    for ref, hyp in _inputs(40):
        if ref.split():
            VALUES.expect_detail(
                submission.word_error_rate(ref, hyp, detail=True),
                reference.word_error_rate(ref, hyp, detail=True),
                call=f"word_error_rate({ref!r}, {hyp!r}, detail=True)",
            )
