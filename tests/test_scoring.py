"""The grading policy (grader/core/scoring.py): when a verdict pays, on toy verdicts and on the kit's own tests.

Its targets on real submissions (correct, one-mistake, constants, the hard-coder) are measured
in tests/test_catalogue.py.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import pytest
from conftest import KIT_ROOT, load_module

from grader.core import exercise, runner, scoring
from grader.core.checks import WrongAnswer
from grader.core.runner import Report, TestResult, run
from grader.core.submission import LoadError

correct_roundings = exercise.load(KIT_ROOT).module("values").correct_roundings  # the exercise's value rule

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


# ---------------------------------------------------------------- the twins


class Recorder:
    def __init__(self, reference):
        self.reference = reference
        self.calls: list[tuple] = []

    def meteor_score(self, ref, cand, alpha=0.9, beta=3, gamma=0.5):
        self.calls.append((ref, cand, alpha, beta, gamma))
        return self.reference.meteor_score(ref, cand, alpha, beta, gamma)


class Constant:
    def __init__(self, value: float):
        self.value = value

    def meteor_score(self, *args, **kwargs):
        return self.value


@pytest.fixture(scope="module")
def modules():
    load = lambda name: load_module(KIT_ROOT / "hidden_tests" / f"{name}.py", f"{name}_for_scoring")  # noqa: E731
    return load("test_examples"), load("test_hidden"), load("test_private")


def twin_calls(private, reference) -> dict[str, list[tuple]]:
    calls = {}
    for key in private.TWINS:
        recorder = Recorder(reference)
        private.test_twin(recorder, key)
        calls[key] = recorder.calls
    return calls


def test_no_twin_asks_what_a_visible_test_asks(modules, reference):
    # The hard-coder's table is every call of the browser tiers (test_catalogue.py keeps it current).
    tree = ast.parse((KIT_ROOT / "tests" / "catalogue" / "cheat" / "hard_codes_visible_tests.py").read_text(encoding="utf-8"))
    table = next(n.value for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == "ANSWERS")
    visible = set(ast.literal_eval(table))
    calls = twin_calls(modules[2], reference)
    assert set(calls) == {k for k in POLICY.rule_of}
    assert all(calls.values())
    assert [(k, c) for k, cs in calls.items() for c in cs if c in visible] == []


def test_a_twin_checks_another_answer_than_its_visible_test(modules, reference):
    examples, hidden, private = modules
    visible = {f"examples-{n}": (r, c, kw) for n, (r, c, kw, _) in examples.EXAMPLES.items()}
    visible |= {f"hidden-{c.name}": (c.reference, c.candidate, c.kwargs) for c in hidden.CASES}
    for key, twin in private.ANSWERS.items():
        for row, _ in twin.rows if key in visible else ():
            mine, theirs = (
                reference.meteor_score(*row.args, **row.kwargs),
                reference.meteor_score(*visible[key][:2], **visible[key][2]),
            )
            assert mine != theirs or key in POLICY.constant_passes, key


def verdicts_for(value: float, modules) -> list[V]:
    """Every visible single-answer test and its twin, run in this process against a constant."""
    examples, hidden, private = modules
    submission = Constant(value)

    def status(test, *args) -> str:
        try:
            test(submission, *args)
        except WrongAnswer:
            return "fail"
        return "pass"

    tests = [V(f"test_statement_example[{n}]", "examples", status(examples.test_statement_example, n)) for n in examples.EXAMPLES]
    tests += [V(f"test_rule[{c.name}]", "hidden", status(hidden.test_rule, c)) for c in hidden.CASES]
    for name in ("test_fragmented_matches_score_lower_than_contiguous", "test_longer_exact_match_is_close_to_1"):
        tests.append(V(name, "hidden", status(getattr(hidden, name))))
    for key in private.TWINS:
        if key.startswith("properties-"):
            # The worst case for the policy: every property a constant can pass passes, twin too.
            verdict = "pass" if key in POLICY.constant_passes else "fail"
            tests.append(V(f"test_{key.removeprefix('properties-')}", "properties", verdict))
            tests.append(V(POLICY.twin_of(key), "private", verdict))
        else:
            tests.append(V(POLICY.twin_of(key), "private", status(private.test_twin, key)))
    return tests


def test_no_constant_earns_a_point(modules, reference):
    # A constant passes a test with one answer only if it is a correct rounding of that answer:
    # trying each of those (and 0.0, 0.5, 1.0) tries every constant that could pass anything.
    examples, hidden, private = modules
    exacts = [e for *_, e in examples.EXAMPLES.values()] + [c.exact for c in hidden.CASES]
    exacts += [exact for twin in private.ANSWERS.values() for _, exact in twin.rows]  # the twins judge the unrounded score
    constants = {0.0, 0.5, 1.0} | {v for e in exacts for v in correct_roundings(e)}
    assert len(constants) > 40
    earned = {}
    for value in sorted(constants):
        tests = verdicts_for(value, modules)
        points = scoring.points(tests, POLICY)
        assert any(t.status == "pass" and not POLICY.is_twin(t) for t in tests), value  # it does pass tests
        if sum(s for s, _ in points):
            earned[value] = [t.name for t, (s, _) in zip(tests, points) if s]
    assert earned == {}
