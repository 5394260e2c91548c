"""What cheats earn, through grader/judging/cheats.py, and whether `constant_passes` lists exactly the tests constants pass.

`cheats.measure` grades a small set of constants and a table of the reference's answers to
every visible call (falling back on each constant), and names a visible test without a rule or
a twin, a twin that asks a visible call, and a test a constant passes with its twin that is not
listed. Here the same measure, run once more with nothing listed, also says which listed tests
no constant passes (stale), with more constants: every answer a visible test expects on each of
its calls, the one constant that could pass it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from grader.core import exercise, scoring
from grader.judging import cheats


@dataclass
class Cheating:
    problems: list[str]  # one line each, for the author to fix
    shares: dict[str, float]  # each cheat -> the share of the points it earns
    constants: int  # constants tried for constant_passes
    listed: int  # tests in constant_passes
    notes: list[str] = field(default_factory=list)


def check(ex: exercise.Exercise, answers: dict[tuple[str, str], list[Any]]) -> Cheating:
    """`answers`: the reference's answers to each test's calls, (tier, test) -> answers (inputs.Pool.answers)."""
    found = cheats.measure(ex)
    problems = found.problems()
    policy = scoring.policy(ex)
    extra = _expected_constants(answers, policy.visible)
    constants = (*cheats.CONSTANTS, *extra)
    if not ex.scoring:
        return Cheating(problems, found.shares, len(constants), 0, ["no [scoring] in exercise.toml: every passed test pays"])
    # With nothing listed, what measure calls unlisted is every test some constant passes with its twin.
    bare = dataclasses.replace(ex, scoring={**ex.scoring, "constant_passes": []})
    passed = cheats.measure(bare, constants=constants).unlisted
    problems += [
        f"{key} and its twin pass with {', '.join(values)}, but it is not in constant_passes"
        for key, values in sorted(passed.items())
        if key not in policy.constant_passes and key not in found.unlisted
    ]
    problems += [
        f"{key} is in constant_passes, but none of the {len(constants)} constants tried passes it with its twin: stale"
        for key in sorted(policy.constant_passes - set(passed))
    ]
    return Cheating(problems, found.shares, len(constants), len(policy.constant_passes))


def _expected_constants(answers: dict[tuple[str, str], list[Any]], visible: frozenset[str] | set[str]) -> tuple[Any, ...]:
    """Each answer that a visible test expects on every one of its calls, not already among cheats.CONSTANTS."""
    known = {_identity(value) for value in cheats.CONSTANTS}
    found: dict[tuple[str, str], Any] = {}
    for (tier, _), given in sorted(answers.items()):
        if tier in visible and given and len({_identity(value) for value in given}) == 1:
            found.setdefault(_identity(given[0]), given[0])
    return tuple(value for key, value in found.items() if key not in known)


def _identity(value: Any) -> tuple[str, str]:
    return type(value).__name__, repr(value)
