"""When a test's points are paid: the grading policy, computed from the verdicts alone.

Verdicts (pass/fail per test) never change here; only points do. Two conditions, both read
from `[scoring]` in problem/exercise.toml (docs/scoring.md says why):

1. A test students can read (a browser tier) pays only if its twin passes too: a test of the
   same rule on inputs they never see, in a secret tier (`twin_tier`: by default the exercise's
   one tier with browser = false). Answers copied from the visible tests earn nothing. The twins
   pay nothing themselves.
2. A test that a constant answer passes pays only alongside a paid test of its rule that no
   constant passes: returning 0.0 (or 0.5, or 1.0) earns nothing.

Shipped to the browser too, where the secret tiers do not run: a twin that was not run at
all counts as passed there, so the page shows the most the visible tests can earn.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Protocol, TypeVar

from grader.core import exercise


class Verdict(Protocol):
    name: str
    tier: str
    status: str


@dataclass(frozen=True)
class Policy:
    points: dict[str, float]  # per test, by tier
    visible: frozenset[str]  # the tiers students can read, whose tests need twins
    twin_test: str
    twin_tier: str | None  # None: the exercise has no secret tier, so no twins
    rule_of: dict[str, str]  # test key -> its rule
    anchors: dict[str, str]  # rule -> the rule whose paid tests let its constant-passable ones pay
    constant_passes: frozenset[str]  # test keys a constant answer passes

    def twin_of(self, key: str) -> str:
        return f"{self.twin_test}[{key}]"

    def is_twin(self, test: Verdict) -> bool:
        return test.tier == self.twin_tier and test.name.startswith(self.twin_test + "[")


def parse(ex: exercise.Exercise) -> Policy:
    data = ex.scoring
    rule_of = {key: rule for rule, keys in data.get("rules", {}).items() for key in keys}
    return Policy(
        points={name: tier.points for name, tier in ex.tiers.items()},
        visible=frozenset(ex.browser_tiers),
        twin_test=data.get("twin_test", "test_twin"),
        twin_tier=data.get("twin_tier", _only_secret_tier(ex)),
        rule_of=rule_of,
        anchors=dict(data.get("anchors", {})),
        constant_passes=frozenset(data.get("constant_passes", ())),
    )


def _only_secret_tier(ex: exercise.Exercise) -> str | None:
    """Where the twins are when [scoring] does not say: the exercise's secret tier, when it has one alone."""
    secret = exercise.secret_tiers(ex.tiers)
    return secret[0] if len(secret) == 1 else None


@cache
def policy(ex: exercise.Exercise) -> Policy:
    """`ex`'s policy, read once."""
    return parse(ex)


def key(tier: str, name: str) -> str:
    """How the policy names a test: "<tier>-<parameter id>", else "<tier>-<function name without test_>"."""
    if name.endswith("]") and "[" in name:
        return f"{tier}-{name[name.index('[') + 1 : -1]}"
    return f"{tier}-{name.removeprefix('test_')}"


def points(tests: Sequence[Verdict], rules: Policy) -> list[tuple[float, float]]:
    """(score, max_score) of each test, in order."""
    status: dict[tuple[str | None, str], str] = {(t.tier, t.name): t.status for t in tests}
    twins_ran = any(rules.is_twin(t) for t in tests)

    def twin_passed(k: str) -> bool:
        found = status.get((rules.twin_tier, rules.twin_of(k)))
        # Not run at all (the page, `check --tiers`): the most it could earn. Run and missing: no.
        return found == "pass" if twins_ran else True

    def holds(test: Verdict) -> bool:
        """Passed, and (for a visible test) its twin too."""
        if test.status != "pass":
            return False
        return test.tier not in rules.visible or twin_passed(key(test.tier, test.name))

    # The rules with a paid test that no constant passes: their constant-passable tests pay too.
    shown = [t for t in tests if t.tier in rules.visible]
    earned_rules = {
        rules.rule_of[k]
        for t in shown
        if (k := key(t.tier, t.name)) in rules.rule_of and k not in rules.constant_passes and holds(t)
    }
    result = []
    for test in tests:
        most = 0.0 if rules.is_twin(test) else rules.points.get(test.tier, 0.0)
        paid = holds(test)
        k = key(test.tier, test.name)
        if paid and k in rules.constant_passes:
            rule = rules.rule_of.get(k)
            paid = rule is not None and rules.anchors.get(rule, rule) in earned_rules
        result.append((most if paid else 0.0, most))
    return result


T = TypeVar("T")


def apply(tests: Sequence[T], rules: Policy) -> list[T]:
    """Copies of the test results (dataclasses) with `score` and `max_score` set by the policy."""
    return [
        dataclasses.replace(test, score=score, max_score=most)  # type: ignore[type-var]
        for test, (score, most) in zip(tests, points(tests, rules))  # type: ignore[arg-type]
    ]
