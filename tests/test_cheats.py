"""Cheats earn nothing on the shipped exercises, measured by grader/judging/cheats.py, which any exercise can use."""

from __future__ import annotations

import shutil

import pytest
from conftest import KIT_ROOT

from grader.core import exercise
from grader.judging import cheats

WER = KIT_ROOT / "tests" / "exercises" / "wer"


@pytest.mark.parametrize("folder", [KIT_ROOT, WER], ids=["meteor", "wer"])
def test_no_constant_nor_table_of_the_visible_answers_earns_more_than_5_percent(folder):
    found = cheats.measure(exercise.load(folder))
    assert found.problems() == []
    assert len(found.shares) == 2 * len(cheats.CONSTANTS) and max(found.shares.values()) <= cheats.MOST
    assert found.table_misses == []  # the table passes every visible test: only the policy stops it


@pytest.fixture
def wer_copy(tmp_path):
    shutil.copytree(WER, tmp_path / "wer")
    return tmp_path / "wer"


def test_without_scoring_a_table_of_the_visible_answers_earns_most_points(wer_copy):
    # WER as it was: neither [scoring] nor twins.
    for path, cut in (
        (wer_copy / "problem" / "exercise.toml", "\n# When a test's points"),
        (wer_copy / "hidden_tests" / "test_private.py", "\n# Twins"),
    ):
        path.write_text(path.read_text(encoding="utf-8").split(cut)[0], encoding="utf-8")
    found = cheats.measure(exercise.load(wer_copy), constants=(0.0,))
    assert found.shares["a table of every visible answer, else 0.0"] > 0.8
    assert {"examples-one_insertion has no rule in [scoring.rules]", "examples-one_insertion has no twin"} <= set(
        found.problems()
    )


def test_a_twin_repeating_a_visible_input_and_a_constant_pass_not_listed_are_named(wer_copy):
    private = wer_copy / "hidden_tests" / "test_private.py"
    source = private.read_text(encoding="utf-8")
    private.write_text(source.replace('call("a red fox ran", "a red fox ran away")', 'call("the cat sat", "the cat sat down")'))
    toml = wer_copy / "problem" / "exercise.toml"
    listed = '"examples-identical", "hidden-empty_reference"'
    toml.write_text(toml.read_text(encoding="utf-8").replace(listed, '"hidden-empty_reference"'), encoding="utf-8")
    problems = cheats.measure(exercise.load(wer_copy), constants=(0.0,)).problems()
    assert any(p.startswith("the twin of examples-one_insertion asks what a visible test asks") for p in problems), problems
    assert "examples-identical and its twin pass with 0.0, but it is not in constant_passes" in problems
