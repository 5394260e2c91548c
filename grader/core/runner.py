"""Runs the hidden tests through pytest and turns what happened into a report."""

from __future__ import annotations

import io
import os
import re
import sys
import time
from collections.abc import Callable, Mapping
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hypothesis
import pytest

from grader.core import exercise, replay, scoring
from grader.core.checks import WrongAnswer
from grader.core.results import Status, SubmissionStatus, TestResult
from grader.core.submission import LoadError, Submission, SubmissionError

OUTPUT_LIMIT = 500


@dataclass
class Report:
    """One submission's verdicts, each with the points the grading policy paid (`scored`)."""

    submission: str
    status: SubmissionStatus
    message: str
    tests: list[TestResult] = field(default_factory=list)
    duration: float = 0.0

    def __post_init__(self) -> None:
        if type(self.status) is not SubmissionStatus:
            self.status = SubmissionStatus(self.status)

    @property
    def score(self) -> float:
        return sum(t.score for t in self.tests)

    @property
    def max_score(self) -> float:
        return sum(t.max_score for t in self.tests)

    @property
    def passed(self) -> int:
        return sum(t.status == Status.PASS for t in self.tests)

    def as_json(self) -> dict[str, Any]:
        # Flat fields only (asdict's deep copy cost a class grading a millisecond per submission).
        data = {**vars(self), "tests": [dict(vars(t)) for t in self.tests]}
        data.update(score=self.score, max_score=self.max_score, passed=self.passed)
        return data

    @classmethod
    def not_run(cls, submission: str, status: str, message: str, template: list[dict]) -> Report:
        """A report whose tests never ran (the grader failed, the run was cut short): each test says why."""
        return cls(submission, SubmissionStatus(status), message, [not_run(t, message) for t in template])

    @classmethod
    def could_not_load(cls, submission: str, error: str, template: list[dict]) -> Report:
        """The report of a submission that did not load: every test an error with the reason, as a real run gives."""
        message = f"{LOAD_PREFIX}{error}"
        return cls(submission, SubmissionStatus.ERROR, message, [not_run(t, message, status=Status.ERROR) for t in template])


LOAD_PREFIX = "could not load the submission: "
TESTS_BROKEN_PREFIX = "the exercise's hidden tests do not run: "


class TestsBroken(RuntimeError):
    """The exercise's own tests fail to import or to collect: no submission can be graded with them."""

    __test__ = False  # pytest collects classes named Test*; this one is an error.


class _CollectionErrors:
    """Each test module (or other collector) pytest could not collect, with the last line of its error."""

    def __init__(self) -> None:
        self.found: list[str] = []

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            lines = [line for line in str(report.longrepr).splitlines() if line.strip()]
            self.found.append(f"{report.nodeid or '.'}: {lines[-1].strip() if lines else 'error'}")


def not_run(test: dict, message: str, status: Status = Status.NOT_RUN) -> TestResult:
    """One test of a template (name, tier, max_score) that earned nothing, and why."""
    return TestResult(test["name"], test["tier"], status, message, "", 0.0, test["max_score"])


def truncate(text: str, limit: int = OUTPUT_LIMIT) -> str:
    """Keep the head and say how much was cut."""
    if len(text) <= limit:
        return text
    note = f"\n... [{len(text) - limit} more characters cut]"
    return text[: limit - len(note)] + note if limit > len(note) else text[:limit]


def hypothesis_notes(exc: BaseException) -> str:
    """The shrunk counterexample hypothesis attached to a failure, and the calls it made."""
    lines = "\n".join(getattr(exc, "__notes__", [])).splitlines()
    return "\n".join(line for line in lines if "submission=" not in line and not line.startswith("You can add @seed"))


# Each collected test's place in the reports (the order collected) and its stage (Exercise.stages),
# set when the tests' plugin puts them in run order.
DISPLAY_KEY = pytest.StashKey[int]()
STAGE_KEY = pytest.StashKey[int]()


class SubmissionProvider:
    """Hands the tests the submission to call; the conftest asks for it by plugin name.

    Each stage of the run (Exercise.stages) gets a fresh child: the tests of a tier whose inputs
    are secret run after the public ones, and no child that saw them answers a public test.
    """

    def __init__(self, factory: Callable[[], Submission]):
        self._factory = factory
        self._submission: Submission | None = None
        self._stage = 0
        self._stage_error: str | None = None  # why the stage's fresh child did not load
        self.load_error: str | None = None

    def get(self, stage: int = 0) -> Submission:
        """The submission, as a test of `stage` calls it."""
        if self.load_error is not None:
            raise LoadError(self.load_error)
        if self._submission is None:
            try:
                self._submission = self._factory()
            except LoadError as exc:
                self.load_error = str(exc)
                raise
            self._stage = stage
        elif stage != self._stage:
            self._stage = stage
            self._stage_error = fresh_child(self._submission)
        if self._stage_error is not None:
            raise LoadError(self._stage_error)
        return self._submission


def fresh_child(submission: Submission) -> str | None:
    """Have `submission` answer from a fresh child (what the last one saw is gone); why it could not load, if so.

    A submission that runs in this process (the page's, the trusted reference) has no child: the
    page runs public tiers only, and what the trusted side runs is no student's.
    """
    restart = getattr(type(submission), "restart", None)
    if restart is None:
        return None
    spent = getattr(type(submission), "spent", None)
    if spent is not None and spent(submission):
        return None  # nothing more runs: each test says so
    try:
        restart(submission)
    except LoadError as exc:
        return str(exc)
    return None


class Collector:
    """A pytest plugin that classifies each test's outcome into a TestResult."""

    def __init__(self, tiers: Mapping[str, exercise.Tier]):
        self.tiers = tiers
        self.results: list[TestResult] = []  # in the order they ran
        self._shown: list[int] = []  # each one's place in the reports

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        outcome = yield
        report = outcome.get_result()
        if call.when == "call" or (call.when == "setup" and report.failed):
            self.results.append(verdict_of(item, call.excinfo, report.capstdout + report.capstderr, self.tiers))
            self._shown.append(item.stash.get(DISPLAY_KEY, len(self._shown)))

    def as_shown(self) -> list[TestResult]:
        """The verdicts in the order reports list them: as collected, not as run."""
        return in_display_order(self.results, self._shown)


def in_display_order(results: list[TestResult], places: list[int]) -> list[TestResult]:
    """`results` sorted by their `places` in the reports (stable: equal places keep their run order)."""
    return [result for _, result in sorted(zip(places, results), key=lambda pair: pair[0])]


def scored(ex: exercise.Exercise, tests: list[TestResult]) -> list[TestResult]:
    """The verdicts with the points the exercise's grading policy pays (grader/core/scoring.py), from all of them together."""
    return scoring.apply(tests, scoring.policy(ex))


def verdict_of(
    item: pytest.Item, excinfo: pytest.ExceptionInfo | None, output: str, tiers: Mapping[str, exercise.Tier]
) -> TestResult:
    """A test's verdict from how it ended (`excinfo`: None if it passed) and what it printed; `tiers`: the exercise's."""
    tier = tier_of(item)
    known = tiers.get(tier)
    status, message = classify(excinfo, shows_inputs=known is not None and known.shows_inputs)
    earned = known.points if known is not None else 0.0
    return TestResult(item.name, tier, Status(status), message, truncate(output), earned if status == "pass" else 0.0, earned)


class BriefFailures:
    """Builds a failed test's report with its exception's type alone, not pytest's formatted traceback.

    Verdicts come from the exceptions (Collector, classify), and a quiet session's text goes to
    a sink. Yet pytest formats every failure's traceback for its report even under --tb=no, in
    its long style, reading the source of each frame: about 2 ms a failing test, 0.15 s of a
    wrong submission's new behaviour in `grade` (docs/performance.md). A skip, and a group of
    skips, keep pytest's own report (its summary needs their location).
    """

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo) -> pytest.TestReport | None:
        excinfo = call.excinfo
        if excinfo is None or not isinstance(excinfo, pytest.ExceptionInfo):
            return None
        error = excinfo.value
        if isinstance(error, pytest.skip.Exception):
            return None
        if isinstance(error, BaseExceptionGroup) and error.split(pytest.skip.Exception)[1] is None:
            return None
        sections = [(f"Captured {key} {when}", content) for when, key, content in item._report_sections]
        return pytest.TestReport(
            item.nodeid,
            item.location,
            {keyword: 1 for keyword in item.keywords},
            "failed",
            f"{type(error).__name__} (the kit's report says more)",
            call.when,  # type: ignore[arg-type]  # never "collect": no report of a collection is made here
            sections,
            call.duration,
            call.start,
            call.stop,
            user_properties=item.user_properties,
        )


def last_test(item: pytest.Item) -> None:
    """Ends the session after `item`, as a session that ran fewer tests.

    Not `session.shouldstop` or `pytest.exit`: pytest reports an interrupted session with a long
    traceback, the source of each frame parsed (0.3-0.8 s of CPython, 1 s and more in Pyodide),
    for nobody to read: the page waited that long after Stop, a budget or the warm-up, and
    `grade` after a submission's budget ran out. pytest's loop over the items reads the list as
    it goes, so it ends after this one.
    """
    items = item.session.items
    del items[items.index(item) + 1 :]


def tier_of(item: pytest.Item) -> str:
    """The tier its `tier` mark names; "" without one (the tests' plugin runs no such test)."""
    marker = item.get_closest_marker("tier")
    return marker.args[0] if marker else ""


def classify(excinfo: pytest.ExceptionInfo | None, shows_inputs: bool = False) -> tuple[str, str]:
    """(status, message) of a test that ended so; the counterexample hypothesis found is added where its tier shows its inputs."""
    if excinfo is None:
        return "pass", ""
    return _classify(excinfo.value, shows_inputs)


def _classify(exc: BaseException, shows_inputs: bool) -> tuple[str, str]:
    bugs = getattr(exc, "exceptions", None)
    if bugs and _found_several(exc):
        # Hypothesis tells apart failures that raise from different places, and reports each
        # with its own example. Shown as one group, the student saw no example at all: the
        # simplest one (hypothesis lists them simplest last), and how many there are.
        status, message = _classify(bugs[-1], shows_inputs)
        return status, f"{message}\nHypothesis found {len(bugs)} distinct failures; the simplest is shown."
    notes = hypothesis_notes(exc) if shows_inputs else ""
    if isinstance(exc, LoadError):
        return "error", f"{LOAD_PREFIX}{exc}"
    if isinstance(exc, SubmissionError):
        if exc.status == "not_run":
            # The budget's own words, as a test the budget stopped before it began gets them: which
            # test was running when it ran out is the machine's timing, and must not change a message.
            return "not_run", exc.reason
        detail = f"\n{exc.traceback}" if exc.traceback else ""
        return exc.status, _join(exc.message + detail, notes)
    if isinstance(exc, WrongAnswer):
        return "fail", _join(str(exc), notes)
    if _is_flaky(exc):
        first = next(iter(getattr(exc, "exceptions", ())), None)
        return _status_of(first), _join(_flaky_message(first), notes.split(_NOT_REPRODUCED)[0].rstrip())
    if isinstance(exc, AssertionError):
        text = str(exc).split("\nassert ")[0]
        return "fail", _join(text, notes)
    return "error", _join(f"{type(exc).__name__}: {exc}", notes)


# Hypothesis's own account of a flaky test goes on with the traceback it expected, which names
# the kit's files: the student is told what happened in their terms instead.
_NOT_REPRODUCED = "Failed to reproduce exception."


def _found_several(exc: BaseException) -> bool:
    return isinstance(exc, BaseExceptionGroup) and not _is_flaky(exc) and "distinct failures" in str(exc)


def _is_flaky(exc: BaseException) -> bool:
    return any(c.__name__ == "Flaky" and c.__module__ == "hypothesis.errors" for c in type(exc).__mro__)


def _status_of(first: BaseException | None) -> str:
    """A flaky test's status is that of what went wrong the first time (a crash stays an error)."""
    if isinstance(first, SubmissionError):
        return first.status
    return "fail" if first is None or isinstance(first, (WrongAnswer, AssertionError)) else "error"


def _flaky_message(first: BaseException | None) -> str:
    said = (first.message if isinstance(first, SubmissionError) else str(first)) if first is not None else ""
    seen = f" The first time: {said.splitlines()[0]}" if said.strip() else ""
    return (
        "the same input gave a different result when it was tried again, so the result cannot be "
        "trusted: does your function use randomness, the clock, or remember earlier calls?" + seen
    )


def _join(message: str, notes: str) -> str:
    message = f"{message}\n{notes}" if notes else message
    # Hypothesis names the test's arguments, the submission object among them: its address would
    # make two runs of the same submission differ (and the memo's verdicts differ from a full run's).
    return _ADDRESS.sub(">", message)


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+>")


def run(
    ex: exercise.Exercise,
    factory: Callable[[], Submission],
    name: str,
    tiers: tuple[str, ...] | None = None,
    quiet: bool = True,
    plugins: tuple[object, ...] = (),
) -> Report:
    """Run the tests of `ex`'s `tiers` against the submission `factory` builds, in this process.

    `plugins` are extra pytest plugins, e.g. the page's, which reports each test as it starts.
    """
    started = time.perf_counter()
    done = session(ex, factory, [str(ex.tests_dir)], tiers, plugins=plugins, quiet=quiet)
    return Report(name, SubmissionStatus(done.status), done.message, scored(ex, done.results), time.perf_counter() - started)


@dataclass
class Session:
    """What one pytest run over the hidden tests gave: each test's verdict, and whether the run itself worked."""

    results: list[TestResult]
    status: str  # graded | error
    message: str


def session(
    ex: exercise.Exercise,
    factory: Callable[[], Submission],
    targets: list[str],
    tiers: tuple[str, ...] | None = None,
    plugins: tuple[object, ...] | list[object] = (),
    options: tuple[str, ...] | list[str] = (),
    quiet: bool = True,
) -> Session:
    """The one pytest run of the kit: `check`, the page and `pytest hidden_tests` come here, and `grade` collects
    its tests here once, then calls them directly (direct_run), with the verdicts of this run.

    `targets` are `ex`'s hidden tests' folder or node ids, and `options` more pytest options. A
    plugin that ends the session early does so with `last_test`, so the session is not interrupted.
    """
    replay.ensure(ex, run)  # the property tests' recorded examples, made once per kit version where the reference is
    tiers = tiers or tuple(ex.tiers)
    collector = Collector(ex.tiers)
    provider = SubmissionProvider(factory)
    args = [*targets, "-q", "-p", "no:cacheprovider", "--tiers", ",".join(tiers), "-o", "console_output_style=classic"]
    # Verdicts come from the exceptions, not pytest's report text, so pytest prints no traceback
    # of a failure (--tb=no), and in a quiet session builds none for its reports either
    # (BriefFailures: --tb=no alone still formats each one, in the long style). That style parses
    # the source of every frame of every failure (a failing submission ran 3x slower); "native",
    # which the kit used before, took 1.33 times the CPU of --tb=no on a wrong submission's
    # non-property tiers, with the same verdicts. unraisableexception runs full garbage
    # collections each session. xdist (the kit's own test suite runs in parallel) has nothing to
    # do in a grading session.
    args += ["--tb=no", "-p", "no:unraisableexception", "-p", "no:threadexception", "-p", "no:xdist", *options]
    sink = io.StringIO()
    _forget_other_test_modules(ex)
    broken = _CollectionErrors()
    all_plugins = [collector, _ProviderPlugin(provider), broken, *plugins]
    if quiet:
        all_plugins.append(BriefFailures())  # nobody reads pytest's text
    # The hidden tests' conftest loads the `kit` hypothesis profile; the caller keeps its own.
    profile = hypothesis.settings.get_current_profile_name()
    try:
        if quiet:
            with redirect_stdout(sink), redirect_stderr(sink):
                code = pytest.main(args, plugins=all_plugins)
        else:
            code = pytest.main(args, plugins=all_plugins)
    finally:
        hypothesis.settings.load_profile(profile)
    done = Session(collector.as_shown(), "graded", "")
    if broken.found:
        # Before a submission that does not load: the tests themselves are wrong, for every submission.
        done.status, done.message = "error", TESTS_BROKEN_PREFIX + "; ".join(broken.found)[:1000]
    elif provider.load_error is not None:
        done.status, done.message = "error", f"{LOAD_PREFIX}{provider.load_error}"
    elif code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        done.status, done.message = "error", f"the test run itself failed (pytest exit {int(code)}): {sink.getvalue()[-400:]}"
    return done


def _forget_other_test_modules(ex: exercise.Exercise) -> None:
    """pytest imports a test module under its file's name: `test_examples` of another exercise, imported
    earlier in this process (`audit` or the kit's own tests go from one exercise to the next), would
    make this session's collection fail ("import file mismatch"). Those are forgotten first."""
    for path in ex.tests_dir.glob("*.py"):
        module = sys.modules.get(path.stem)
        if module is not None and not _same_file(getattr(module, "__file__", None), path):
            del sys.modules[path.stem]


def _same_file(where: str | None, path: Path) -> bool:
    try:
        return where is not None and os.path.samefile(where, path)
    except OSError:  # the other exercise's folder is gone (a temporary one)
        return False


PROVIDER_KEY = pytest.StashKey[SubmissionProvider]()


class _ProviderPlugin:
    """Registers the provider under a known name, so the conftest can find it."""

    def __init__(self, provider: SubmissionProvider):
        self.provider = provider

    def pytest_configure(self, config: pytest.Config) -> None:
        config.stash[PROVIDER_KEY] = self.provider
