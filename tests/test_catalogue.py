"""The catalogue: every wrong solution fails a test a student sees in the browser; every correct one passes all.

And the grading policy's targets, measured on the whole catalogue graded as a class: correct
solutions keep every point, one-mistake solutions keep partial credit, and neither a constant
nor a file that hard-codes the visible tests' answers earns more than returning 0.0.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from grader.core import exercise
from grader.core.results import SubmissionResult
from grader.core.runner import Report, run
from grader.judging.discovery import read_source
from grader.reports.gradescope import to_gradescope
from grader.sandbox.host import SandboxedSubmission

CATALOGUE = Path(__file__).resolve().parent / "catalogue"
KIT_ROOT = CATALOGUE.parent.parent
WRONG = sorted((CATALOGUE / "wrong").glob("*.py"))
CORRECT = sorted((CATALOGUE / "correct").glob("*.py"))
CONSTANTS = sorted((CATALOGUE / "cheat").glob("returns_*.py"))
HARD_CODER = CATALOGUE / "cheat" / "hard_codes_visible_tests.py"
EXERCISE = exercise.load(KIT_ROOT)
BROWSER_TIERS = EXERCISE.browser_tiers

# The ids the issue asks for; the diagnosis names them, so each must have its wrong solution.
REQUIRED_MISTAKES = {
    "no_lowercase",
    "no_clipping",
    "split_on_space",
    "alpha_swapped",
    "alpha_hardcoded",
    "beta_hardcoded",
    "gamma_hardcoded",
    "penalty_over_candidate_length",
    "chunks_in_reference",
    "every_match_own_chunk",
    "p_r_swapped",
    "f1_mean",
    "set_matching",
    "punctuation_stripped",
    "no_rounding",
    "two_decimals",
    "truncation",
    "crash_on_empty",
    "none_on_empty",
    "penalty_not_subtracted",
    "chunks_off_by_one",
    "right_to_left_matching",
    "fmean_over_total_length",
    "returns_string",
    "rounding_to_int",
    "recall_over_candidate",
    "reference_not_lowercased",
    "empty_gives_one",
}


def grade(path: Path, tiers: tuple[str, ...]) -> Report:
    return run(
        EXERCISE,
        lambda: SandboxedSubmission(path, EXERCISE.function, EXERCISE.call_timeout, source=read_source(path)),
        path.name,
        tiers=tiers,
    )


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


# ---------------------------------------------------------------- the hard-coder's table


def visible_answers() -> dict[tuple, float]:
    """Every call the browser tiers make, with the reference's answer: what a student can copy.

    Recorded as the audit records any exercise's calls (grader/authoring/inputs.py), each keyed
    by the signature's parameters, defaults filled in. Run it in a fresh process (see
    `generate_hard_coder`): hypothesis then draws exactly what `meteor-kit check` and `grade` draw.
    """
    from grader.authoring import inputs

    names = [*EXERCISE.parameters, *EXERCISE.defaults]
    answers: dict[tuple, float] = {}
    for (tier, _), calls in inputs.recorded(EXERCISE).items():
        for call, answer in calls if tier in BROWSER_TIERS else ():
            given = {**EXERCISE.defaults, **dict(zip(names, call.args)), **call.kwargs}
            answers[tuple(given[name] for name in names)] = answer
    assert answers
    return answers


def hard_coder_source(answers: dict[tuple, float]) -> str:
    lines = [f"    {key!r}: {value!r},\n" for key, value in sorted(answers.items(), key=repr)]
    return (
        '"""Answers every call the visible tests make from a table of the right answers, and 0.0 to anything else."""\n\n'
        'CHEAT = "hard_codes_visible_tests"\n\n'
        "# Every call of the tiers the page ships (examples, hidden, properties: hypothesis draws the same\n"
        "# inputs on every run), with the reference's answer. Written by tests/test_catalogue.py;\n"
        "# METEOR_UPDATE_GOLDEN=1 rewrites it when the tests change.\n"
        "ANSWERS = {\n" + "".join(lines) + "}\n\n\n"
        "def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n"
        "    return ANSWERS.get((reference, candidate, alpha, beta, gamma), 0.0)\n"
    )


def generate_hard_coder() -> str:
    code = (
        "import sys; sys.path[:0] = [sys.argv[1], sys.argv[2]]\n"
        "from test_catalogue import hard_coder_source, visible_answers\n"
        "sys.stdout.write(hard_coder_source(visible_answers()))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(KIT_ROOT / "tests"), str(KIT_ROOT)],
        cwd=KIT_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_the_hard_coder_holds_every_answer_the_visible_tests_ask_for():
    source = generate_hard_coder()
    if os.environ.get("METEOR_UPDATE_GOLDEN"):
        HARD_CODER.write_text(source, encoding="utf-8")
    assert source.count("\n    (") > 300  # the properties' draws too, not only the examples and hidden cases
    assert HARD_CODER.read_text(encoding="utf-8") == source, "run with METEOR_UPDATE_GOLDEN=1 to rewrite it"


# ---------------------------------------------------------------- the grading policy's targets


@pytest.fixture(scope="module")
def graded(tmp_path_factory, meteor_kit) -> dict[str, dict]:
    """The whole catalogue (correct, wrong, cheats) graded as one class by `meteor-kit grade`."""
    klass = tmp_path_factory.mktemp("catalogue")
    for kind in ("correct", "wrong", "cheat"):
        for path in (CATALOGUE / kind).glob("*.py"):
            shutil.copy(path, klass / f"{kind}__{path.name}")
    out = tmp_path_factory.mktemp("out")
    done = subprocess.run(
        [str(meteor_kit), "grade", str(klass), "--out", str(out), "--timeout", "2", "--budget", "30"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))["submissions"]
    return {r["submission"].removesuffix(".py").replace("__", "/", 1): r for r in results}


def share(result: dict) -> float:
    return result["score"] / result["max_score"]


def test_every_correct_solution_keeps_every_point(graded):
    correct = {name: share(r) for name, r in graded.items() if name.startswith("correct/")}
    assert len(correct) == len(CORRECT)
    assert set(correct.values()) == {1.0}, correct


def test_a_constant_answer_earns_at_most_5_percent(graded):
    constants = {name: r for name, r in graded.items() if name.startswith("cheat/returns_")}
    assert len(constants) == len(CONSTANTS) >= 3
    for name, result in constants.items():
        assert result["status"] == "graded" and result["passed"] > 0, name  # it passes tests: the policy is what stops it
        assert share(result) <= 0.05, (name, result["score"])


def test_hard_coding_the_visible_tests_earns_no_more_than_returning_0(graded):
    cheat = graded["cheat/hard_codes_visible_tests"]
    visible = [t for t in cheat["tests"] if t["tier"] in BROWSER_TIERS]
    # Its verdicts are those of a correct solution on every test a student can read ...
    assert visible and all(t["status"] == "pass" for t in visible), [t["name"] for t in visible if t["status"] != "pass"]
    # ... and it earns no more than doing nothing, in every output: results.json and Gradescope's.
    assert cheat["score"] <= graded["cheat/returns_0_0"]["score"]
    assert to_gradescope(SubmissionResult.from_json(cheat), EXERCISE)["score"] == cheat["score"]


def test_one_mistake_solutions_keep_partial_credit(graded):
    wrong = {name: share(r) for name, r in graded.items() if name.startswith("wrong/")}
    assert len(wrong) == len(WRONG)
    assert statistics.median(wrong.values()) >= 0.40, sorted(wrong.items(), key=lambda kv: kv[1])
    assert max(wrong.values()) < 1.0
    # Most keep something: only a mistake that breaks every rule's non-zero answers earns nothing.
    assert sum(v > 0 for v in wrong.values()) >= 0.9 * len(wrong)


def test_a_test_pays_only_if_it_passes_and_no_more_than_its_tier(graded):
    points = {name: t.points for name, t in EXERCISE.tiers.items()}
    for name, result in graded.items():
        assert result["score"] == sum(t["score"] for t in result["tests"]), name
        for test in result["tests"]:
            assert test["score"] in (0.0, test["max_score"]) and test["max_score"] <= points[test["tier"]]
            assert test["status"] == "pass" or test["score"] == 0.0, (name, test["name"])


def test_check_gives_the_points_grade_gives(graded, meteor_kit):
    for name in ("cheat/hard_codes_visible_tests", "wrong/no_rounding"):
        done = subprocess.run(
            [str(meteor_kit), "check", str(CATALOGUE / f"{name}.py"), "--json"], capture_output=True, text=True, timeout=600
        )
        checked = json.loads(done.stdout)
        assert [(t["name"], t["status"], t["score"], t["max_score"]) for t in checked["tests"]] == [
            (t["name"], t["status"], t["score"], t["max_score"]) for t in graded[name]["tests"]
        ], name
        assert checked["score"] == graded[name]["score"] and checked["max_score"] == graded[name]["max_score"] == 113
