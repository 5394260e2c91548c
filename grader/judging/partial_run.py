"""Runs all or some of the hidden tests for class grading: called directly where they allow it (core.direct_run,
collected once per process), else through the kit's one pytest run (`runner.session`).

What class grading adds: naming the tests to run, ending a run whose budget is spent, and
learning each test's node id so later runs can name it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import pytest

from grader.core import exercise, replay, runner
from grader.core import hypothesis_adapter as internals
from grader.core.direct_run import Tests, node_id
from grader.core.submission import LoadError, Submission

# Beyond what every run of the kit turns off (runner.session), class grading turns off the
# plugins that add nothing to a run whose pytest output nobody reads.
FAST = [
    "-p",
    "no:faulthandler",
    "-p",
    "no:pastebin",
    "-p",
    "no:junitxml",
    "-p",
    "no:doctest",
    "-p",
    "no:stepwise",
    "-p",
    "no:legacypath",
    "-p",
    "no:setuponly",
    "-p",
    "no:setupplan",
    "-p",
    "no:logging",
]


@dataclass
class Outcome:
    tests: list[runner.TestResult]
    status: str  # graded | error
    message: str


class _NodeIds:
    def __init__(self) -> None:
        self.ids: dict[str, str] = {}

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        for item in session.items:
            self.ids[item.name] = node_id(item)


class _StopWhen:
    """Ends the session after a test once `reason()` says why (the submission's budget is spent).

    As a session that ran fewer tests (runner.last_test), not an interrupted one, whose report
    pytest would format at length for nobody.
    """

    def __init__(self, reason: Callable[[], str | None]):
        self.reason = reason
        self.stopped: str | None = None

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> object:
        result = yield
        why = self.reason()
        if why and not self.stopped:
            self.stopped = why
            runner.last_test(item)
        return result


class _Only:
    """Keeps the tests named by node id, in the order collected.

    Rather than naming each on pytest's command line, where each is resolved and matched apart:
    a run of 94 named tests took 1.08-1.14 times the CPU.
    """

    def __init__(self, nodeids: list[str]):
        self.nodeids = set(nodeids)

    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        kept: list[pytest.Item] = []
        dropped: list[pytest.Item] = []
        for item in items:
            (kept if node_id(item) in self.nodeids else dropped).append(item)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept


@cache
def collected(ex: exercise.Exercise) -> Tests | None:
    """`ex`'s hidden tests as pytest collected them, once per process, to call directly (direct_run); None where
    some need pytest's own run."""
    return Tests.collect(ex, FAST)


def run_tests(
    ex: exercise.Exercise,
    factory: Callable[[], Submission],
    nodeids: list[str] | None = None,
    stop: Callable[[], str | None] | None = None,
    direct: bool = True,
) -> tuple[Outcome, dict[str, str]]:
    """Run `ex`'s tests named by `nodeids` (all tests when None); also returns every test's node id.

    `stop`, if given, is asked after each test: a reason ends the run there, and the tests
    not run are left out of the outcome (the caller reports them as not run, with the reason).
    `direct`: each test called as pytest would (direct_run), where the tests allow it; else
    (and with False) through a pytest session.
    """
    tests = collected(ex) if direct else None
    if tests is not None:
        done = tests.run(factory, nodeids, stop)
        return Outcome(done.results, done.status, done.message), dict(tests.nodeids)
    ids = _NodeIds()
    stopper = _StopWhen(stop or (lambda: None))
    plugins: list[object] = [ids, stopper]
    if nodeids:
        plugins.append(_Only(nodeids))
    done = runner.session(ex, factory, [str(ex.tests_dir)], plugins=plugins, options=FAST)
    return Outcome(done.results, done.status, done.message), ids.ids


@dataclass
class Catalogue:
    """Every test of an exercise, as reports list them: its verdict shape for a submission that cannot load, and its node id.

    `stages`: the tests' names in run order, one list per child that answers them (Exercise.stages).
    """

    exercise: exercise.Exercise
    template: list[dict]
    nodeids: dict[str, str]
    stages: list[list[str]]

    @property
    def names(self) -> list[str]:
        return [t["name"] for t in self.template]


def catalogue(ex: exercise.Exercise) -> Catalogue:
    """`ex`'s tests, taken from a real run against a submission that does not load, not rebuilt by hand."""

    def refuse():
        raise LoadError("-")

    outcome, ids = run_tests(ex, refuse)
    if outcome.status == "error" and outcome.message.startswith(runner.TESTS_BROKEN_PREFIX):
        raise runner.TestsBroken(outcome.message)
    tests = runner.scored(ex, outcome.tests)  # max_score as the grading policy says
    template = [{**vars(t), "message": ""} for t in tests]
    return Catalogue(ex, template, ids, stages(ex, template))


def stages(ex: exercise.Exercise, template: list[dict]) -> list[list[str]]:
    """The tests of `template` (as reports list them) in run order, one list per stage (Exercise.stages)."""
    order = {tier: position for position, tier in enumerate(ex.run_order)}
    ran = sorted(template, key=lambda t: order.get(t["tier"], len(order)))  # stable: each tier's tests keep their order
    numbers = sorted({ex.stage_of(t["tier"]) for t in ran})
    return [[t["name"] for t in ran if ex.stage_of(t["tier"]) == number] for number in numbers]


def prepare_before_fork(ex: exercise.Exercise) -> None:
    """Do once, before the workers fork, what every run of every worker needs the same.

    The inputs hypothesis draws must be a function of the answers alone: it mixes in the literal
    constants of every "local" module loaded so far, so a module imported between two runs (the
    diagnosis, say) would change what a later run generates. They are turned off, as the tests'
    plugin and the page do (hypothesis_adapter.no_local_constants). The diagnosis's table and the property
    tests' recorded examples are made here too, once, not once per worker.
    """
    from grader.judging import diagnose

    diagnose._table(ex)  # built once here, before workers fork, not once per worker
    internals.no_local_constants()
    replay.ensure(ex, runner.run)  # likewise the property tests' recorded examples
    collected(ex)  # and the hidden tests, collected
