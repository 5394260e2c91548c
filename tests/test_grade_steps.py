"""The grade as a chain of pure steps: verdicts, then points (scoring), adjustments, and the scaling to a gradebook."""

from __future__ import annotations

import tomllib
from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from grader.core import adjustments, scaling, scoring
from grader.core.results import SubmissionResult, SubmissionStatus, TestResult

# Two visible tests (2 points each), the twin of each, and a secret test (3 points): 7 points in all.
POLICY = scoring.Policy(
    points={"shown": 2.0, "secret": 3.0},
    visible=frozenset({"shown"}),
    twin_test="test_twin",
    twin_tier="secret",
    rule_of={"shown-a": "r", "shown-b": "r"},
    anchors={},
    constant_passes=frozenset(),
)


def verdicts(**statuses: str) -> list[TestResult]:
    names = [("test_rule[a]", "shown"), ("test_rule[b]", "shown"), ("test_twin[shown-a]", "secret")]
    names += [("test_twin[shown-b]", "secret"), ("test_differential", "secret")]
    return [TestResult(name, tier, statuses.get(name, "pass"), "", "", 0.0, 0.0) for name, tier in names]


def result_of(tests: list[TestResult], name: str = "ann.py") -> SubmissionResult:
    """The points step: the policy's points on the verdicts, and the submission's totals."""
    paid = scoring.apply(tests, POLICY)
    return SubmissionResult(
        submission=name,
        path=name,
        student=None,
        note="",
        status=SubmissionStatus.GRADED,
        message="",
        tests=paid,
        duration=0.0,
        score=sum(t.score for t in paid),
        max_score=sum(t.max_score for t in paid),
        passed=sum(t.status == "pass" for t in paid),
    )


def plan(text: str) -> adjustments.Plan:
    return adjustments.parse_plan(tomllib.loads(text))


def test_the_chain_from_verdicts_to_a_gradebooks_cell():
    # A visible test whose twin fails pays nothing (rule 1 of docs/scoring.md): 5 of 7 points.
    result = result_of(verdicts(**{"test_twin[shown-b]": "fail"}))
    assert (result.score, result.max_score, result.passed) == (5.0, 7.0, 4)
    (adjusted,), summary = adjustments.apply([result], plan('[[student]]\nwho = "ann"\nchange = 1.5\nreason = "r"\n'))
    assert adjusted.final_score == 6.5 and adjusted.score == 5.0 and summary is not None and summary.adjusted == 1
    assert scaling.scaled(adjusted, 50.0) == round(6.5 / 7 * 50, 2) == 46.43
    assert scaling.scaled(result, 50.0) == 35.71  # each step reads the one before it, and changes nothing of it


def test_scaling_takes_the_adjusted_score_to_the_gradebooks_maximum():
    full = result_of(verdicts())
    assert full.score == full.max_score == 7.0
    assert scaling.scaled(full, 50.0) == 50.0 and scaling.scaled(full, None) == 7.0  # no maximum: the exercise's points
    assert scaling.scaled(replace(full, adjusted_score=3.5), 10.0) == 5.0
    assert scaling.scaled(replace(full, max_score=0.0), 10.0) == 0.0  # nothing to take a share of


def test_a_gradebook_cell_is_blank_unless_there_is_a_grade_to_give():
    assert scaling.gradebook_score(None, 50.0, "zero") == 0.0 and scaling.gradebook_score(None, 50.0, "blank") is None
    interrupted = replace(result_of(verdicts()), status=SubmissionStatus.NOT_GRADED, score=0.0)
    assert scaling.gradebook_score(interrupted, 50.0) is None  # never a 0 that reads as a grade
    assert scaling.gradebook_score(result_of(verdicts()), 50.0) == 50.0


@given(
    score=st.floats(0, 500, allow_nan=False),
    extra=st.floats(0, 500, allow_nan=False),
    maximum=st.floats(0.01, 1000, allow_nan=False),
)
def test_a_scaled_score_stays_within_zero_and_the_gradebooks_maximum(score, extra, maximum):
    result = replace(result_of(verdicts()), score=score, max_score=score + extra)
    assert 0.0 <= scaling.scaled(result, maximum) <= round(maximum, 2)


def test_the_points_step_changes_points_only_never_a_verdict_nor_the_order():
    tests = verdicts(**{"test_rule[a]": "fail", "test_differential": "timeout"})
    paid = scoring.apply(tests, POLICY)
    assert [(t.name, t.status) for t in paid] == [(t.name, t.status) for t in tests]
    assert [t.score for t in paid] == [0.0, 2.0, 0.0, 0.0, 0.0] and [t.score for t in tests] == [0.0] * 5
