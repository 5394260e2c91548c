"""The engine's pytest plumbing for an exercise's hidden_tests/: the `submission` fixture, tiers, the hypothesis profile.

Each exercise's hidden_tests/conftest.py takes it whole: `from grader.core.tests_plugin import *`.
The session's exercise is the one whose folder holds that conftest (`exercise_of`), wherever it is.
"""

from __future__ import annotations

__all__ = [
    "pytest_addoption",
    "pytest_configure",
    "pytest_collection_modifyitems",
    "submission",
    "pytest_runtest_makereport",
    "pytest_pyfunc_call",
]


from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings

from grader.core import exercise, replay, runner
from grader.core import hypothesis_adapter as internals
from grader.core.runner import PROVIDER_KEY
from grader.core.submission import SubmissionError

# Set when this conftest made the provider (`pytest hidden_tests --submission`): the page and
# `meteor-kit check` bring their own, and their own reporters read each test's report.
SANDBOXED_KEY = pytest.StashKey[bool]()
EXERCISE_KEY = pytest.StashKey[exercise.Exercise]()
DEFAULT_SUBMISSION = Path("solutions") / "reference.py"  # in the exercise's folder


def exercise_of(config: pytest.Config) -> exercise.Exercise:
    """The session's exercise: the one whose folder holds the conftest that took this plugin."""
    found = config.stash.get(EXERCISE_KEY, None)
    if found is None:
        exercises = _exercises(config.pluginmanager)
        if len(exercises) != 1:
            raise pytest.UsageError(f"one exercise's hidden tests at a time, not {len(exercises)}")
        found = config.stash[EXERCISE_KEY] = exercises.pop()
    return found


def _exercises(plugins: pytest.PytestPluginManager) -> set[exercise.Exercise]:
    """The exercises whose folders hold a conftest that took this plugin."""
    conftests = {
        plugin.__file__
        for plugin in plugins.get_plugins()
        if getattr(plugin, "submission", None) is submission and getattr(plugin, "__file__", None)
    }
    return {exercise.holding(path) for path in conftests}


def use_profile(ex: exercise.Exercise) -> None:
    """Load the `kit` hypothesis profile, as `ex` sets it."""
    settings.register_profile(
        "kit",
        derandomize=True,
        database=None,
        deadline=None,
        max_examples=ex.hypothesis_examples,
        print_blob=False,
        # No "explain" phase: its coverage notes name lines of the test file, which students can't act on.
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    settings.load_profile("kit")


# Hypothesis's bookkeeping of failing examples made cheaper (a known hypothesis only), and no
# constants of the judging process's modules in what it draws: the same inputs everywhere.
internals.speed_up()
internals.no_local_constants()


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    # The conftest registering this plugin is registered already: its exercise names the defaults.
    found = _exercises(pluginmanager)
    ex = found.pop() if len(found) == 1 else None
    group = parser.getgroup(ex.id if ex else "exercise", f"{ex.title} exercise" if ex else "the exercise's hidden tests")
    budget = f"{ex.budget:g}" if ex else "the exercise's"
    group.addoption(
        "--submission",
        default=None,
        help=f"the .py file to test (default: the exercise's {DEFAULT_SUBMISSION.as_posix()}); "
        "it runs in a sandboxed process, never in this one",
    )
    group.addoption(
        "--no-sandbox",
        action="store_true",
        help="where no isolation works (not root, no usable bubblewrap), run the submission anyway, NOT isolated",
    )
    group.addoption(
        "--budget",
        type=float,
        default=None,
        help=f"seconds the submission may use in all, its loads and calls (default {budget}, as "
        "`meteor-kit grade`); the tests after that are not run",
    )
    group.addoption(
        "--tiers",
        default=None,
        help=f"comma-separated tiers to run (default: all of {', '.join(ex.tiers) if ex else 'the exercise'})",
    )


def pytest_configure(config: pytest.Config) -> None:
    # Each session, not only on import: a process may have run another exercise's tests, or changed profile.
    ex = exercise_of(config)
    use_profile(ex)
    config.addinivalue_line("markers", "tier(name): the exercise tier a test belongs to")
    unknown = set(_tiers(config)) - set(ex.tiers)
    if unknown:
        raise pytest.UsageError(f"--tiers: unknown tier(s) {', '.join(sorted(unknown))}; known: {', '.join(ex.tiers)}")
    # No provider yet: plain `pytest hidden_tests`, whose sandboxed one grader.judging.tests_sandbox adds.


def _tiers(config: pytest.Config) -> list[str]:
    chosen = config.getoption("--tiers")
    if chosen is None:
        return list(exercise_of(config).tiers)
    return [t.strip() for t in chosen.split(",") if t.strip()]


def budget(config: pytest.Config) -> float:
    """--budget, else the exercise's."""
    chosen = config.getoption("--budget")
    return exercise_of(config).budget if chosen is None else chosen


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The tests of the tiers asked for, in the order they run: each tier after the ones it must follow.

    Run order is exercise.toml's (`Exercise.stages`): every public tier first, then each tier
    whose inputs students never get; a tier with `fresh_child` starts a new child (`SubmissionProvider.get`).
    Reports list the tests as collected (`DISPLAY_KEY`), whatever order they ran in.
    """
    ex = exercise_of(config)
    wanted = set(_tiers(config))
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        marker = item.get_closest_marker("tier")
        (keep if marker and marker.args[0] in wanted else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
    for shown, item in enumerate(keep):
        item.stash[runner.DISPLAY_KEY] = shown
        item.stash[runner.STAGE_KEY] = ex.stage_of(runner.tier_of(item))
    order = {tier: position for position, tier in enumerate(ex.run_order)}
    keep.sort(key=lambda item: order.get(runner.tier_of(item), len(order)))
    items[:] = keep


@pytest.fixture
def submission(request: pytest.FixtureRequest):
    """The student's code: an object whose attribute named as the exercise's function is the submitted function.

    Once a sandboxed submission has used up its time budget, the tests left are not run: each
    says so at once, and the whole run ends within the budget and a little time of our own.
    """
    provider = request.config.stash.get(PROVIDER_KEY, None)
    if provider is None:  # `pytest hidden_tests` without the kit's plugin: the kit is not installed
        pytest.exit(
            "no submission to test: the kit's pytest plugin (grader.judging.tests_sandbox) is not installed "
            "in this Python; install the kit (`pip install -e .`, or `make setup`) and run again",
            returncode=pytest.ExitCode.USAGE_ERROR,
        )
    return provided_submission(provider, request.node.stash.get(runner.STAGE_KEY, 0))


def provided_submission(provider: runner.SubmissionProvider, stage: int = 0):
    """What the `submission` fixture gives a test of `stage`: the provider's submission, or "not_run" once its budget is spent."""
    provided = provider.get(stage)
    spent = getattr(provided, "spent", None)
    why = spent() if spent is not None else None
    if why:
        raise SubmissionError("not_run", why)
    return provided


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """A test left out by the budget reads as one line, not a traceback through this file."""
    outcome = yield
    excinfo = call.excinfo
    if not item.config.stash.get(SANDBOXED_KEY, False):
        return
    if excinfo is not None and isinstance(excinfo.value, SubmissionError) and excinfo.value.kind == "not_run":
        outcome.get_result().longrepr = excinfo.value.message


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """A @given test runs on the examples recorded against the reference, and goes to hypothesis only if one differs."""
    return replay.run_item(pyfuncitem, exercise_of(pyfuncitem.config))
