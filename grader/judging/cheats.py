"""What an exercise's points pay a cheat: constants, a table of every visible call's answer, twins that repeat a visible input.

The cheats part of an exercise's audit (docs/scoring.md), for any exercise: `measure(ex)` runs
its tests in this process against the kit's own submissions (the reference, recorded; a
constant; a table of the reference's answers to every call of the tiers students can read) and
says what each earns and what the policy misses. Every submission here is trusted code.
"""

from __future__ import annotations

import copy
import functools
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from grader.core import exercise, runner, scoring, twins
from grader.core.runner import TestResult
from grader.core.submission import CallsByName

# Each is returned for every call; a table of the visible answers falls back on each in turn.
CONSTANTS: tuple[Any, ...] = (0.0, 0.5, 1.0, 0, 1, -1, None, "", [], {}, True, False)
MOST = 0.05  # the share of the points a cheat may earn
# Sessions of several exercises in one process: their test modules share file names (test_hidden.py ...),
# so each is imported under its whole path, never one imported before from another folder.
OPTIONS = ("--import-mode=importlib", "--rootdir=/")


def bind(ex: exercise.Exercise, args: tuple, kwargs: dict) -> tuple:
    """A call as its parameters' values, defaults filled in, comparable by value: equal calls ask the same."""
    names = [*ex.parameters, *ex.defaults]
    values = {**ex.defaults, **dict(zip(names, args)), **kwargs}
    return _frozen((sorted(values.items()), args[len(names) :]))


def _frozen(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted(((repr(k), _frozen(v)) for k, v in value.items()), key=repr))
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


class Recorder(CallsByName):
    """The reference, noting each call it answers under the test that made it."""

    def __init__(self, ex: exercise.Exercise) -> None:
        self.function = ex.function
        self._reference = getattr(twins.reference(ex.root), ex.function)
        self._ex = ex
        self.test: tuple[str, str] = ("", "")  # (tier, name) of the test running
        self.calls: dict[tuple[str, str], list[tuple[tuple, Any]]] = {}

    def call(self, *args: Any, **kwargs: Any) -> Any:
        answer = self._reference(*args, **kwargs)
        self.calls.setdefault(self.test, []).append((bind(self._ex, args, kwargs), copy.deepcopy(answer)))
        return answer

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Iterator[None]:
        self.test = (runner.tier_of(item), item.name)
        yield


class Constant(CallsByName):
    """Returns `value` whatever it is asked."""

    def __init__(self, function: str, value: Any) -> None:
        self.function, self.value = function, value

    def call(self, *args: Any, **kwargs: Any) -> Any:
        return copy.deepcopy(self.value)


class HardCoder(CallsByName):
    """Answers every call of the visible tests from a table of the reference's answers, and `default` to any other."""

    def __init__(self, ex: exercise.Exercise, table: dict[tuple, Any], default: Any) -> None:
        self.function, self._ex, self._table, self.default = ex.function, ex, table, default

    def call(self, *args: Any, **kwargs: Any) -> Any:
        return copy.deepcopy(self._table.get(bind(self._ex, args, kwargs), self.default))


@dataclass
class Cheats:
    """What `measure` found."""

    shares: dict[str, float]  # each cheat ("return 0.0", "table, else 0.0" ...) -> its share of the points
    max_score: float
    table_misses: list[str] = field(default_factory=list)  # visible tests the table fails: it is not every visible call
    without_rule: list[str] = field(default_factory=list)  # visible tests (keys) without a rule in [scoring.rules]
    without_twin: list[str] = field(default_factory=list)  # visible tests (keys) whose twin did not run
    repeated: dict[str, list[tuple]] = field(default_factory=dict)  # twin key -> the calls it shares with a visible test
    unlisted: dict[str, list[str]] = field(default_factory=dict)  # visible key -> constants passing it and its twin

    def problems(self, most: float = MOST) -> list[str]:
        """What an author must fix, one line each; none when the exercise's points stop every cheat tried."""
        found = [f"{name} earns {share:.1%} (at most {most:.0%})" for name, share in self.shares.items() if share > most]
        found += [f"the table of visible answers fails {name}: a visible call was not recorded" for name in self.table_misses]
        found += [f"{key} has no rule in [scoring.rules]" for key in self.without_rule]
        found += [f"{key} has no twin" for key in self.without_twin]
        found += [f"the twin of {key} asks what a visible test asks: {calls[0]!r}" for key, calls in self.repeated.items()]
        found += [
            f"{key} and its twin pass with {', '.join(values)}, but it is not in constant_passes"
            for key, values in self.unlisted.items()
        ]
        return found


def measure(ex: exercise.Exercise, constants: tuple[Any, ...] = CONSTANTS) -> Cheats:
    """Every constant, and a table of the visible answers falling back on each, graded on all of `ex`'s tests."""
    policy = scoring.policy(ex)
    recorder = Recorder(ex)
    results = _run(ex, lambda: recorder, plugins=(recorder,))
    visible = {(t.tier, t.name) for t in results if t.tier in policy.visible}
    keys = {scoring.key(tier, name): (tier, name) for tier, name in visible}
    table = {call: answer for test in visible for call, answer in recorder.calls.get(test, [])}
    asked = set(table)
    found = Cheats({}, sum(t.max_score for t in runner.scored(ex, results)))
    found.without_rule = sorted(set(keys) - set(policy.rule_of))
    twins_run = {t.name for t in results if policy.is_twin(t)}
    found.without_twin = sorted(key for key in keys if policy.twin_of(key) not in twins_run)
    for key in sorted(keys):
        shared = [call for call, _ in recorder.calls.get((policy.twin_tier or "", policy.twin_of(key)), []) if call in asked]
        if shared:
            found.repeated[key] = shared
    for value in constants:
        tests = _run(ex, functools.partial(Constant, ex.function, value))
        found.shares[f"return {value!r}"] = _share(ex, tests)
        for key in _passed_with_twin(tests, policy) - policy.constant_passes:
            found.unlisted.setdefault(key, []).append(repr(value))
        cheat = _run(ex, functools.partial(HardCoder, ex, table, value))
        found.shares[f"a table of every visible answer, else {value!r}"] = _share(ex, cheat)
        missed = {t.name for t in cheat if t.tier in policy.visible and t.status != "pass"}
        found.table_misses = sorted(set(found.table_misses) | missed)
    return found


def _run(ex: exercise.Exercise, factory: Callable[[], Any], plugins: tuple[object, ...] = ()) -> list[TestResult]:
    with _own_test_modules(ex):
        done = runner.session(ex, factory, [str(ex.tests_dir)], plugins=plugins, options=OPTIONS)
    if done.status != "graded":
        raise RuntimeError(f"the tests of {ex.id} did not run: {done.message}")
    return done.results


@contextmanager
def _own_test_modules(ex: exercise.Exercise) -> Iterator[None]:
    """No module of another folder stands for one of `ex`'s tests, and none of `ex`'s is left for another's run.

    The recording of the property tests (replay) imports them by their bare names, as `check` does.
    """
    stems = {path.stem for path in ex.tests_dir.glob("test_*.py")}
    for name, folder in _test_modules():
        if name.rsplit(".", 1)[-1] in stems and folder.name == ex.tests_dir.name:
            del sys.modules[name]
    try:
        yield
    finally:
        for name, folder in _test_modules():
            if folder == ex.tests_dir:
                del sys.modules[name]


def _test_modules() -> list[tuple[str, Path]]:
    """Every module imported from a file, with its folder."""
    return [
        (name, Path(str(module.__file__)).parent)
        for name, module in list(sys.modules.items())
        if getattr(module, "__file__", None)
    ]


def _share(ex: exercise.Exercise, tests: list[TestResult]) -> float:
    scored = runner.scored(ex, tests)
    most = sum(t.max_score for t in scored)
    return sum(t.score for t in scored) / most if most else 0.0


def _passed_with_twin(tests: list[TestResult], policy: scoring.Policy) -> set[str]:
    """The keys of the visible tests that passed, their twins too."""
    status = {(t.tier, t.name): t.status for t in tests}
    return {
        key
        for t in tests
        if t.tier in policy.visible
        and t.status == "pass"
        and status.get((policy.twin_tier or "", policy.twin_of(key := scoring.key(t.tier, t.name)))) == "pass"
    }
