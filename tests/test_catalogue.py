"""The catalogue: every wrong solution fails a test a student sees in the browser; every correct one passes all."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from grader import exercise
from grader.runner import Report, run
from grader.sandbox import SandboxedSubmission

CATALOGUE = Path(__file__).resolve().parent / "catalogue"
WRONG = sorted((CATALOGUE / "wrong").glob("*.py"))
CORRECT = sorted((CATALOGUE / "correct").glob("*.py"))
EXERCISE = exercise.load()
BROWSER_TIERS = EXERCISE.browser_tiers

# The ids the issue asks for; the diagnosis names them, so each must have its wrong solution.
REQUIRED_MISTAKES = {
    "no_lowercase", "no_clipping", "split_on_space", "alpha_swapped", "alpha_hardcoded", "beta_hardcoded",
    "gamma_hardcoded", "penalty_over_candidate_length", "chunks_in_reference", "every_match_own_chunk",
    "p_r_swapped", "f1_mean", "set_matching", "punctuation_stripped", "no_rounding", "two_decimals",
    "truncation", "crash_on_empty", "none_on_empty", "penalty_not_subtracted", "chunks_off_by_one",
    "right_to_left_matching", "fmean_over_total_length", "returns_string", "rounding_to_int",
    "recall_over_candidate", "reference_not_lowercased", "empty_gives_one",
}


def grade(path: Path, tiers: tuple[str, ...]) -> Report:
    return run(lambda: SandboxedSubmission(path, EXERCISE.function, EXERCISE.call_timeout), path.name, tiers=tiers)


def header(path: Path) -> tuple[str | None, str | None]:
    """The file's docstring and its MISTAKE id, read without running it."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    mistake = None
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["MISTAKE"]:
            mistake = ast.literal_eval(node.value)
    return ast.get_docstring(tree), mistake


def ids(paths: list[Path]) -> list[str]:
    return [p.stem for p in paths]


def test_the_catalogue_has_30_wrong_and_6_correct_solutions():
    assert len(WRONG) >= 30
    assert len(CORRECT) >= 6


def test_the_browser_tiers_are_examples_hidden_and_properties():
    # The catalogue's promise is about what a student sees, so it must not lean on the private tier.
    assert set(BROWSER_TIERS) == {"examples", "hidden", "properties"}


def test_every_required_mistake_has_a_wrong_solution():
    found = {header(path)[1] for path in WRONG}
    assert REQUIRED_MISTAKES - found == set()


@pytest.mark.parametrize("path", WRONG, ids=ids(WRONG))
def test_a_wrong_solution_says_its_mistake_in_one_sentence(path):
    docstring, mistake = header(path)
    assert docstring and "\n" not in docstring.strip() and docstring.rstrip().endswith(".")
    assert mistake == path.stem and re.fullmatch(r"[a-z][a-z0-9_]*", mistake)


@pytest.mark.parametrize("path", WRONG, ids=ids(WRONG))
def test_a_wrong_solution_fails_a_browser_tier(path):
    # examples and hidden take a fraction of a second; the properties tier runs only if they find nothing.
    report = grade(path, ("examples", "hidden"))
    if report.passed == len(report.tests):
        report = grade(path, ("properties",))
    assert report.status == "graded", report.message
    assert report.tests, "no test ran"
    assert {t.tier for t in report.tests} <= set(BROWSER_TIERS)
    failed = [t for t in report.tests if t.status != "pass"]
    assert failed, f"{path.name} ({header(path)[1]}) passed every browser tier"
    for test in failed:
        assert test.message, f"{test.name} failed without saying why"
        assert test.score == 0


@pytest.mark.parametrize("path", CORRECT, ids=ids(CORRECT))
def test_a_correct_solution_passes_every_tier(path):
    report = grade(path, tuple(EXERCISE.tiers))
    assert report.status == "graded", report.message
    assert {t.tier for t in report.tests} == set(EXERCISE.tiers)
    failed = [f"{t.name}: {t.message}" for t in report.tests if t.status != "pass"]
    assert failed == []
    assert report.score == report.max_score > 0


@pytest.mark.parametrize("path", CORRECT, ids=ids(CORRECT))
def test_a_correct_solution_has_a_one_sentence_docstring(path):
    docstring, mistake = header(path)
    assert docstring and "\n" not in docstring.strip()
    assert mistake is None
