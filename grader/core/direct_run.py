"""Runs the hidden tests pytest collected, each called directly: the verdicts of pytest's run, without its per-test work.

`grade` runs a part of the hidden tests for each new behaviour. Through `runner.session`,
pytest configures itself, collects all the tests again, and runs each through its protocol:
setup, call and teardown, a report for each, capture, warnings and a dozen plugins' hooks. For
this exercise's tests, whose one fixture is `submission`, that work was two thirds of the run's
CPU (docs/performance.md): a session of the 116 tests against the reference took 0.18 s of
CPU, and the same tests called directly 0.056 s.

So the tests are collected once per process (`Tests.collect`, through runner.session itself),
and each run calls each test as pytest would: the `submission` fixture's work (the provider's
submission, or "not_run" once its budget is spent), then the kit's pytest_pyfunc_call (the
property tests' replay) or the test function itself, under what hypothesis's pytest plugin
sets, with the output caught and the warnings recorded, not shown. Each outcome is classified
as runner.Collector classifies pytest's (runner.verdict_of). Where a test needs more of pytest
than that (another fixture, a skip or xfail mark, a warnings filter, a parametrized @given
test), `collect` says so and the caller runs pytest instead. tests/test_direct_run.py holds
the verdicts, output and messages to pytest's own on wrong, correct and cheating submissions.
"""

from __future__ import annotations

import io
import os
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass

import hypothesis
import pytest

from grader.core import hypothesis_adapter as internals
from grader.core import runner, tests_plugin
from grader.core.exercise import Exercise
from grader.core.submission import Submission

_CURRENT = "PYTEST_CURRENT_TEST"  # pytest keeps the running test's node id and phase here
# Marks whose meaning pytest's run gives (skipping, warnings, extra fixtures): a test with one runs through pytest.
_PYTEST_MARKS = {"skip", "skipif", "xfail", "usefixtures", "filterwarnings"}


@dataclass
class Tests:
    """An exercise's hidden tests as pytest collected them, in its run order (tests_plugin), each with its node id."""

    exercise: Exercise
    items: list[pytest.Function]
    nodeids: dict[str, str]  # by test name

    @classmethod
    def collect(cls, ex: Exercise, options: list[str]) -> Tests | None:
        """`ex`'s hidden tests, collected by pytest once (with the `options` of the runs it stands for); None if a
        test needs pytest's own run (see the module), or hypothesis is a version whose pytest plugin the kit does not know."""
        if not internals.known():
            return None
        grab = _Grab()
        done = runner.session(ex, _never, [str(ex.tests_dir)], plugins=[grab], options=options)
        if done.status != "graded" or grab.config is None or not grab.items:
            return None
        config = grab.config
        if config.getini("filterwarnings") or getattr(config.known_args_namespace, "pythonwarnings", None):
            return None
        items = [item for item in grab.items if isinstance(item, pytest.Function)]
        if len(items) != len(grab.items) or not all(_direct(item) for item in items):
            return None
        return cls(ex, items, {item.name: node_id(item) for item in items})

    def run(
        self,
        factory: Callable[[], Submission],
        nodeids: list[str] | None = None,
        stop: Callable[[], str | None] | None = None,
    ) -> runner.Session:
        """Each test named by `nodeids` (all when None), in pytest's run order; `stop`, asked after each, ends the run.

        As runner.session reports it: the verdicts in the order collected, and a submission that
        did not load makes the whole run an error too.
        """
        provider = runner.SubmissionProvider(factory)
        wanted = set(nodeids) if nodeids is not None else None
        results: list[runner.TestResult] = []
        shown: list[int] = []
        with _as_pytest_runs_them(self.exercise):
            for item in self.items:
                if wanted is not None and node_id(item) not in wanted:
                    continue
                excinfo, output = _call(item, provider)
                results.append(runner.verdict_of(item, excinfo, output, self.exercise.tiers))
                shown.append(item.stash.get(runner.DISPLAY_KEY, len(shown)))
                if stop is not None and stop():
                    break
        results = runner.in_display_order(results, shown)
        if provider.load_error is not None:
            return runner.Session(results, "error", f"{runner.LOAD_PREFIX}{provider.load_error}")
        return runner.Session(results, "graded", "")


def node_id(item: pytest.Item) -> str:
    return f"{item.path}::{item.name}"


class _Grab:
    """Keeps what pytest collected, and runs none of it."""

    def __init__(self) -> None:
        self.items: list[pytest.Item] = []
        self.config: pytest.Config | None = None

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.items = list(session.items)
        self.config = session.config

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        return True


def _never() -> Submission:
    raise AssertionError("collecting runs no test")


def _direct(item: pytest.Function) -> bool:
    """Whether calling the test as `_call` does is all pytest's run of it does."""
    params = set(_params(item))
    # `request` is there for the `submission` fixture, which asks for it; a test that does is left to pytest.
    if not set(item._fixtureinfo.names_closure) <= {"submission", "request"} | params:
        return False
    if "request" in item._fixtureinfo.argnames:
        return False
    if "submission" in item._fixtureinfo.names_closure:
        definitions = item._fixtureinfo.name2fixturedefs.get("submission", ())
        func = getattr(definitions[-1], "func", None) if definitions else None
        if getattr(func, "__module__", None) != tests_plugin.__name__:
            return False  # an exercise's own `submission` fixture
    if any(mark.name in _PYTEST_MARKS for mark in item.iter_markers()):
        return False
    # hypothesis's plugin gives a parametrized @given test settings and a database key of its own.
    return not (hypothesis.is_hypothesis_test(item.obj) and params)


@contextmanager
def _as_pytest_runs_them(ex: Exercise) -> Iterator[None]:
    """The hypothesis profile the tests' conftest loads, and what hypothesis's pytest plugin sets for every run."""
    profile = hypothesis.settings.get_current_profile_name()
    tests_plugin.use_profile(ex)
    internals.set_as_pytest_plugin_does()
    try:
        yield
    finally:
        hypothesis.settings.load_profile(profile)


def _call(item: pytest.Function, provider: runner.SubmissionProvider) -> tuple[pytest.ExceptionInfo | None, str]:
    """One test, as pytest's setup and call would run it: the exception it ended with (None if it passed), and its output."""
    output = io.StringIO(newline="")
    reports: list[object] = []  # hypothesis's reports: pytest's plugin keeps them out of the output too
    try:
        with (
            redirect_stdout(output),
            redirect_stderr(output),
            warnings.catch_warnings(record=True),
            internals.as_pytest_item(item, reports.append),
        ):
            warnings.simplefilter("always")
            # As pytest keeps it for each phase: what runs in the test can tell which test it is (memo.current_test).
            os.environ[_CURRENT] = f"{item.nodeid} (setup)"
            item.funcargs = {**_params(item), **_fixtures(item, provider)}
            os.environ[_CURRENT] = f"{item.nodeid} (call)"
            if not tests_plugin.pytest_pyfunc_call(item):
                item.obj(**{name: item.funcargs[name] for name in item._fixtureinfo.argnames})
    except (KeyboardInterrupt, pytest.exit.Exception):
        raise
    except BaseException as exc:
        return pytest.ExceptionInfo.from_exception(exc), output.getvalue()
    finally:
        item.funcargs = {}
        os.environ.pop(_CURRENT, None)
    return None, output.getvalue()


def _params(item: pytest.Function) -> dict:
    callspec = getattr(item, "callspec", None)
    return dict(callspec.params) if callspec is not None else {}


def _fixtures(item: pytest.Function, provider: runner.SubmissionProvider) -> dict:
    """The `submission` fixture's work (tests_plugin.submission), with the run's provider."""
    if "submission" not in item._fixtureinfo.names_closure:
        return {}
    return {"submission": tests_plugin.provided_submission(provider, item.stash.get(runner.STAGE_KEY, 0))}
