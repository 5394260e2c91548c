"""The grading policy (grader/core/scoring.py): when a verdict pays, on toy verdicts and on the kit's own tests.

Its targets on real submissions (correct, one-mistake, constants, the hard-coder) are measured
in tests/test_catalogue.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from conftest import KIT_ROOT, load_module

from grader.authoring import cheating, inputs
from grader.core import exercise, runner, scoring
from grader.core.runner import Report, TestResult, run
from grader.core.submission import LoadError
from grader.judging import cheats

EXERCISE = exercise.load(KIT_ROOT)
POLICY = scoring.policy(EXERCISE)
VISIBLE = EXERCISE.browser_tiers


@dataclass
class V:
    """A verdict, as the policy sees it."""

    name: str
    tier: str
    status: str


TOY = scoring.Policy(
    points={"shown": 2.0, "secret": 3.0},
    visible=frozenset({"shown"}),
    twin_test="test_twin",
    twin_tier="secret",
    rule_of={"shown-a": "r", "shown-zero": "r", "shown-other": "s", "shown-empty": "e"},
    anchors={"e": "r"},
    constant_passes=frozenset({"shown-zero", "shown-empty"}),
)


def toy(**statuses: str) -> list[V]:
    """Verdicts of the toy tests: a, zero, other and empty, their twins (twin_a ...) and one secret test."""
    tests = []
    for short in ("a", "zero", "other", "empty"):
        tests.append(V(f"test_rule[{short}]", "shown", statuses.get(short, "pass")))
        tests.append(V(f"test_twin[shown-{short}]", "secret", statuses.get(f"twin_{short}", "pass")))
    tests.append(V("test_differential", "secret", statuses.get("differential", "pass")))
    return tests


def paid(tests: list[V], policy: scoring.Policy = TOY) -> dict[str, float]:
    return {t.name: score for t, (score, _) in zip(tests, scoring.points(tests, policy))}


# ---------------------------------------------------------------- the rules, on toy verdicts


def test_everything_passing_earns_every_point_and_twins_are_worth_nothing():
    tests = toy()
    points = scoring.points(tests, TOY)
    assert sum(score for score, _ in points) == sum(most for _, most in points) == 4 * 2.0 + 3.0
    assert all(most == 0.0 for t, (_, most) in zip(tests, points) if t.name.startswith("test_twin"))


def test_a_visible_test_pays_only_when_its_twin_passes():
    got = paid(toy(twin_other="fail"))
    assert got["test_rule[other]"] == 0.0
    assert got["test_rule[a]"] == 2.0  # the other tests keep their points


def test_a_failed_visible_test_pays_nothing_even_when_its_twin_passes():
    assert paid(toy(other="fail"))["test_rule[other]"] == 0.0


def test_a_test_a_constant_passes_pays_only_alongside_a_paid_test_of_its_rule():
    assert paid(toy())["test_rule[zero]"] == 2.0
    assert paid(toy(a="fail"))["test_rule[zero]"] == 0.0
    assert paid(toy(twin_a="fail"))["test_rule[zero]"] == 0.0  # a copied answer does not unlock it either
    assert paid(toy(other="fail"))["test_rule[zero]"] == 2.0  # another rule's failure does not matter


def test_a_rule_of_constant_answers_only_pays_alongside_its_anchor_rule():
    assert paid(toy())["test_rule[empty]"] == 2.0
    assert paid(toy(a="fail"))["test_rule[empty]"] == 0.0


def test_a_test_outside_the_visible_tiers_pays_on_its_own_verdict():
    assert paid(toy(a="fail", twin_a="fail"))["test_differential"] == 3.0
    assert paid(toy(differential="fail"))["test_differential"] == 0.0


def test_without_any_twin_run_the_visible_tests_pay_what_they_could_earn():
    # The page runs no private test: it shows the most the visible tests can earn.
    shown = [t for t in toy(a="fail") if t.tier == "shown"]
    assert paid(shown) == {"test_rule[a]": 0.0, "test_rule[zero]": 0.0, "test_rule[other]": 2.0, "test_rule[empty]": 0.0}


def test_a_missing_twin_when_twins_ran_pays_nothing():
    tests = [t for t in toy() if t.name != "test_twin[shown-other]"]
    assert paid(tests)["test_rule[other]"] == 0.0


def test_a_visible_test_the_policy_does_not_know_still_needs_its_twin():
    tests = toy() + [V("test_new", "shown", "pass")]
    assert paid(tests)["test_new"] == 0.0
    assert paid(tests + [V("test_twin[shown-new]", "secret", "pass")])["test_new"] == 2.0


def test_verdicts_and_order_never_change_only_points():
    results = [TestResult(t.name, t.tier, t.status, "m", "", 9.0, 9.0) for t in toy(a="fail", twin_other="fail")]
    scored = scoring.apply(results, TOY)
    assert [(t.name, t.tier, t.status, t.message) for t in scored] == [(t.name, t.tier, t.status, t.message) for t in results]
    assert [t.score for t in results] == [9.0] * len(results)  # copies: the memo's results stay as they were


def test_the_key_of_a_test_is_its_tier_and_parameter_or_function_name():
    assert scoring.key("hidden", "test_rule[uppercase_reference]") == "hidden-uppercase_reference"
    assert scoring.key("properties", "test_case_does_not_change_the_score") == "properties-case_does_not_change_the_score"


# ---------------------------------------------------------------- the policy of this exercise


@pytest.fixture(scope="module")
def every_test() -> list[TestResult]:
    """Every test of every tier, as a submission that does not load gets them."""

    def refuse():
        raise LoadError("-")

    report = run(EXERCISE, refuse, "nothing")
    assert len(report.tests) > 100
    return report.tests


def keys(tests, tiers) -> set[str]:
    return {scoring.key(t.tier, t.name) for t in tests if t.tier in tiers}


def test_every_visible_test_has_one_rule_and_one_twin(every_test):
    visible = keys(every_test, VISIBLE)
    twins = {t.name for t in every_test if POLICY.is_twin(t)}
    assert visible == set(POLICY.rule_of)
    assert twins == {POLICY.twin_of(k) for k in visible}
    assert POLICY.constant_passes <= visible
    rules = EXERCISE.scoring["rules"]
    assert sum(len(v) for v in rules.values()) == len(visible)  # no test in two rules


def test_every_rule_can_be_earned_by_an_answer_no_constant_gives():
    for rule in set(POLICY.rule_of.values()):
        anchor = POLICY.anchors.get(rule, rule)
        assert any(r == anchor and k not in POLICY.constant_passes for k, r in POLICY.rule_of.items()), rule


def test_the_hidden_tiers_rule_texts_agree_with_the_policys_rules():
    hidden = load_module(KIT_ROOT / "hidden_tests" / "test_hidden.py", "hidden_for_scoring")
    texts: dict[str, set[str]] = {}
    for case in hidden.CASES:
        texts.setdefault(POLICY.rule_of[f"hidden-{case.name}"], set()).add(case.rule)
    assert all(len(t) == 1 for t in texts.values()), texts
    assert len({next(iter(t)) for t in texts.values()}) == len(texts)  # one statement rule per policy rule


def test_the_twins_add_no_points_to_the_total(every_test):
    report = Report("nothing", "error", "", runner.scored(EXERCISE, every_test))
    assert report.max_score == sum(EXERCISE.tiers[t.tier].points for t in every_test if not POLICY.is_twin(t)) == 113


# ---------------------------------------------------------------- the twins and the constants


def test_the_audit_finds_no_twin_on_a_visible_input_and_no_constant_that_earns():
    """The audit's cheats check (grader/authoring/cheating.py), as `meteor-kit audit` runs it on this exercise.

    Every twin asks what no visible test asks; a constant of a small set, or any answer a visible
    test expects, earns nothing; a table of the visible answers earns nothing; and constant_passes
    lists exactly the tests such a constant passes with their twins.
    """
    found = cheating.check(EXERCISE, inputs.pool(EXERCISE, draws=1).answers)
    assert found.problems == []
    assert found.constants > len(cheats.CONSTANTS) + 20  # the answers the visible tests expect, tried as constants
    assert max(found.shares.values()) == 0.0 and found.listed == len(POLICY.constant_passes)
