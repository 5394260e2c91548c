"""The page's side of a test run, inside Pyodide: the kit's own runner on the editor's code.

The worker calls `run_tests` and `try_it`; `post(kind, json)` is its one callback, used to say
which test is running so the page's timer can interrupt just that test (and when the diagnosis
starts, so the timer covers it too).
"""

from __future__ import annotations

import gc
import io
import json
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable

import pytest
from _pytest.unraisableexception import gc_collect_iterations_key

from grader import diagnosis_core, exercise, runner
from grader.checks import describe
from grader.submission import LoadError, LocalSubmission, SubmissionError

EXERCISE = exercise.load()
# After this many timeouts in one run, the remaining tests are not run: a loop that never
# ends would otherwise cost every test the full time limit.
MAX_TIMEOUTS = 3
# Written next to this file by the page's boot, from the site's py/diagnosis-table.json.
DIAGNOSIS_TABLE = Path(__file__).with_name("diagnosis-table.json")

Post = Callable[[str, str], None]


class Guard:
    """Remembers the timeouts of a run, so calls after one fail at once instead of looping again."""

    def __init__(self) -> None:
        self.timeouts = 0
        self.test_timed_out = False
        self.returned: list[str] = []  # what the current test's calls returned, for the page

    def start_test(self) -> None:
        self.test_timed_out = False
        self.returned = []

    def check(self) -> None:
        if self.timeouts >= MAX_TIMEOUTS:
            raise SubmissionError("not_run", f"not run: {MAX_TIMEOUTS} tests already ran past the time limit")
        if self.test_timed_out:
            raise SubmissionError("timeout", "an earlier call in this test ran past the time limit")

    def timed_out(self) -> None:
        self.timeouts += 1
        self.test_timed_out = True


class PageSubmission(LocalSubmission):
    def __init__(self, source: str, guard: Guard):
        self.guard = guard
        super().__init__(source, EXERCISE.function)

    def meteor_score(self, *args: Any, **kwargs: Any) -> Any:
        self.guard.check()
        try:
            value = super().meteor_score(*args, **kwargs)
        except SubmissionError as exc:
            if exc.kind == "timeout":
                self.guard.timed_out()
            raise
        self.guard.returned.append(describe(value))
        return value


class Progress:
    """A pytest plugin telling the page what was collected, which test runs now and how it ended."""

    def __init__(self, post: Post, guard: Guard):
        self.post = post
        self.guard = guard
        self.collector: runner.Collector | None = None

    def pytest_configure(self, config: pytest.Config) -> None:
        # The report never shows pytest's own tracebacks, and its default style parses the test
        # file's source for every failure hypothesis meets: "native" is 3x faster on a failing run.
        config.option.tbstyle = "native"
        # pytest ends each session with five full garbage collections, 40 ms each in Pyodide,
        # to report unraisable exceptions; the page has no use for them.
        config.stash[gc_collect_iterations_key] = 0
        found = [p for p in config.pluginmanager.get_plugins() if isinstance(p, runner.Collector)]
        self.collector = found[0] if found else None

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        tests = [{"name": item.name, "tier": runner.tier_of(item)} for item in session.items]
        self.post("collected", json.dumps(tests))

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        self.guard.start_test()
        self.post("start", json.dumps({"name": item.name, "tier": runner.tier_of(item)}))

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        results = self.collector.results if self.collector else []
        if results:
            self.post("finish", json.dumps({**asdict(results[-1]), "returned": self.guard.returned[:3]}))


class ProbeGuard:
    """The diagnosis's calls: after one timeout, the remaining probes are not run."""

    def __init__(self, submission: LocalSubmission):
        self.submission = submission
        self.timed_out = False

    def meteor_score(self, *args: Any, **kwargs: Any) -> Any:
        if self.timed_out:
            raise SubmissionError("not_run", "the diagnosis ran out of time")
        try:
            return self.submission.meteor_score(*args, **kwargs)
        except SubmissionError as exc:
            self.timed_out = exc.kind == "timeout"
            raise


def diagnosis(source: str, tests: list[dict], post: Post) -> dict | None:
    """What `meteor-kit check --json` says under "diagnosis": the same engine, on the build's table."""
    try:
        table = json.loads(DIAGNOSIS_TABLE.read_text(encoding="utf-8"))
    except OSError:
        return None
    post("diagnosing", "{}")  # the page's timer covers the probes, as it does each test
    # What the submission prints while probed is not part of any report.
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        try:
            probed = ProbeGuard(LocalSubmission(source, EXERCISE.function))
            outputs = diagnosis_core.run_probes(probed, table)
        except (LoadError, KeyboardInterrupt):
            return None  # an interrupt that landed between two calls: no diagnosis rather than a wrong one
        finally:
            # No student code runs after this point: the page stops its timer, so the trusted
            # work left (matching the table, the report) never counts as a hang, however slow.
            post("probed", "{}")
    # As the CLI: probes cut short by a timeout could point at the wrong mistake.
    if probed.timed_out and not all(isinstance(out, dict) and "error" in out for out in outputs):
        return None
    found = diagnosis_core.diagnose_outputs(outputs, table, diagnosis_core.failing_calls(tests))
    return {**found, "text": diagnosis_core.full_text(found)} if found else None


def run_tests(source: str, post: Post) -> str:
    """Run the browser tiers against `source`; the JSON report, as the CLI's `--json` gives it."""
    guard = Guard()
    report = runner.run(
        lambda: PageSubmission(source, guard),
        "submission.py",
        tiers=EXERCISE.browser_tiers,
        plugins=(Progress(post, guard),),
    )
    result = report.as_json()
    failed = report.status == "graded" and report.passed < len(report.tests)
    result["diagnosis"] = diagnosis(source, result["tests"], post) if failed else None
    return json.dumps(result)


def warm_up() -> None:
    """Collect the tests once, so the first real run finds them imported and rewritten."""
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        pytest.main(
            [str(runner.TESTS_DIR), "-q", "--collect-only", "-p", "no:cacheprovider", "--tiers", ",".join(EXERCISE.browser_tiers)]
        )
    # What is loaded now stays for the page's life: keep the collector from scanning it again and again.
    gc.collect()
    gc.freeze()


def try_it(source: str, reference: str, candidate: str, params_json: str) -> str:
    """Call the editor's function once, on the student's own input."""
    params = json.loads(params_json)
    out = io.StringIO()
    result: dict[str, Any]
    with redirect_stdout(out), redirect_stderr(out):
        try:
            value = PageSubmission(source, Guard()).meteor_score(reference, candidate, **params)
            result = {"status": "ok", "value": runner.truncate(repr(value), 300), "type": type(value).__name__}
        except LoadError as exc:
            result = {"status": "error", "message": f"could not load your code: {exc}"}
        except SubmissionError as exc:
            result = {"status": exc.status, "message": exc.message, "traceback": exc.traceback}
        except BaseException as exc:  # noqa: BLE001 - e.g. a repr() that raises: still the student's
            result = {"status": "error", "message": f"{type(exc).__name__}: {exc}"}
    result["output"] = runner.truncate(out.getvalue(), 2000)
    return json.dumps(result)
