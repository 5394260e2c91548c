"""The page's side of a test run, inside Pyodide: the kit's own runner on the editor's code.

The worker calls `run_tests` and `try_it`; `post(kind, json)` is its one callback, used to say
which test is running so the page's timer can interrupt just that test (and when the diagnosis
starts, so the timer covers it too).
"""

from __future__ import annotations

import gc
import io
import json
import os
import re
import signal
import sys
import time
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from _pytest.unraisableexception import gc_collect_iterations_key

from grader.core import diagnosis as diagnosis_core
from grader.core import exercise, replay, runner
from grader.core.checks import describe
from grader.core.submission import LoadError, LocalSubmission, SubmissionError

# The exercise the site's kit.zip holds, beside this file (under CPython, the parity tests run it from
# the engine's web/py/: the kit's own exercise).
HERE = Path(__file__).resolve().parent
EXERCISE = exercise.load(HERE if (HERE / "problem" / "exercise.toml").is_file() else exercise.KIT_ROOT)
# How the diagnosis compares answers: the exercise's value rule's own way, else as plain data.
NORMALIZE = getattr(EXERCISE.module("values"), "normalize", None) or diagnosis_core.normalize
# After this many timeouts in one run, the remaining tests are not run: a loop that never
# ends would otherwise cost every test the full time limit.
MAX_TIMEOUTS = 3
# Written next to this file by the page's boot, from the site's py/diagnosis-table.json.
DIAGNOSIS_TABLE = Path(__file__).with_name("diagnosis-table.json")
# The property tests' recorded examples (grader/core/replay.py), from the site's kit.zip.
os.environ.setdefault(replay.ENV_FILE, str(Path(__file__).with_name("replay.json")))

# What one test may print, kept as it is printed: a loop printing a million lines costs its
# time, never the page's memory (the report shows 500 characters anyway).
PRINT_LIMIT = 4000

Post = Callable[[str, str], None]
Halted = Callable[[], str]  # why the page wants the run to end now ("" while it does not)


def never_halted() -> str:
    return ""


class CappedText(io.TextIOBase):
    """A stream that keeps the first `limit` characters written to it and counts the rest."""

    def __init__(self, target: Any, limit: int = PRINT_LIMIT):
        self.target = target
        self.room = limit
        self.dropped = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        kept = text[: max(self.room, 0)]
        if kept:
            self.target.write(kept)
            self.room -= len(kept)
        self.dropped += len(text) - len(kept)
        return len(text)

    def flush(self) -> None:
        if self.dropped:
            self.target.write(f"\n... [{self.dropped} more characters printed, not kept]")
            self.dropped = 0
        # Also called when this stream is finalized, long after its test: pytest's capture is closed by then.
        if not getattr(self.target, "closed", False):
            self.target.flush()


def landing_reported(post: Post) -> Callable[[int, Any], None]:
    """SIGINT's handler during a run: the page's interrupt has landed, and the page hears so at once.

    The page restarts Python when its interrupt seems not to land. Once it has landed, Python is
    alive and unwinding, which may take a while on a busy machine: the page then waits longer.
    """

    def landed(signum: int, frame: Any) -> None:
        try:
            post("interrupted", "{}")
        finally:
            raise KeyboardInterrupt

    return landed


class WarmUpOver(BaseException):
    """Ends the warm-up run at a call: not an Exception, so hypothesis lets it through unshrunk."""


class Guard:
    """Remembers the timeouts of a run, so calls after one fail at once instead of looping again."""

    def __init__(self, halted: Halted = never_halted, warm_up: bool = False) -> None:
        self.timeouts = 0
        self.test_timed_out = False
        self.returned: list[str] = []  # what the current test's calls returned, for the page
        self.all_returned: list[str] = []  # every call's answer in the run: all None is a missing return
        self.halted = halted
        self.warm_up = warm_up
        self.asked: float | None = None  # when the warm-up first saw that the page asked for a run
        self.out_of_memory = False

    def warm_up_asked(self) -> bool:
        """True when this is the warm-up run and the page has asked for a run: it gives way (noting when, the first time)."""
        if not (self.warm_up and self.halted()):
            return False
        self.asked = self.asked or time.perf_counter()
        return True

    def start_test(self) -> None:
        self.test_timed_out = False
        self.returned = []

    def check(self) -> None:
        if self.out_of_memory:
            raise SubmissionError("not_run", "not run: Python ran out of memory in an earlier test")
        if self.warm_up_asked():
            raise WarmUpOver("the page asked for a run")
        reason = self.halted()
        if reason:
            raise SubmissionError("not_run", f"not run: {reason}")
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

    def call(self, *args: Any, **kwargs: Any) -> Any:
        self.guard.check()
        # The student's prints go to pytest's capture, capped as they are printed.
        out, err = sys.stdout, sys.stderr
        capped = CappedText(out)
        sys.stdout = sys.stderr = capped
        try:
            value = super().call(*args, **kwargs)
        except MemoryError:  # raised again while the error was being described
            self.guard.out_of_memory = True
            raise SubmissionError("exception", OUT_OF_MEMORY) from None
        except SubmissionError as exc:
            if exc.kind == "timeout":
                self.guard.timed_out()
            if exc.message.startswith(f"{EXERCISE.function} raised MemoryError"):
                self.guard.out_of_memory = True
                exc.message = OUT_OF_MEMORY
            raise
        finally:
            sys.stdout, sys.stderr = out, err
            capped.flush()
        shown = describe(value)
        self.guard.returned.append(shown)
        self.guard.all_returned.append(shown)
        return value


OUT_OF_MEMORY = (
    f"{EXERCISE.function} ran out of memory (MemoryError): it keeps more and more data. "
    "Python was restarted; look for a list that grows in a loop that never ends."
)


class Progress:
    """A pytest plugin telling the page what was collected, which test runs now and how it ended."""

    def __init__(self, post: Post, guard: Guard):
        self.post = post
        self.guard = guard
        self.collector: runner.Collector | None = None
        self.collected: list[dict] = []
        self.times: dict[str, float] = {}  # when each phase of the run ended, for the page's timings

    def pytest_sessionstart(self) -> None:
        self.times["configured"] = time.perf_counter()

    def pytest_configure(self, config: pytest.Config) -> None:
        # The report never shows pytest's own tracebacks, and its default style parses the test
        # file's source for every failure hypothesis meets: "native" is 3x faster on a failing
        # run, and "no" (as runner.session) prints none; runner.BriefFailures builds none.
        config.option.tbstyle = "no"
        # pytest ends each session with five full garbage collections, 40 ms each in Pyodide,
        # to report unraisable exceptions; the page has no use for them.
        config.stash[gc_collect_iterations_key] = 0
        found = [p for p in config.pluginmanager.get_plugins() if isinstance(p, runner.Collector)]
        self.collector = found[0] if found else None

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.times["collected"] = time.perf_counter()
        if self.guard.warm_up_asked():  # while pytest started: no test
            session.items.clear()
        # The report's template: the page fills it in for the tests a run cut short never reached.
        self.collected = [
            {"name": item.name, "tier": runner.tier_of(item), "max_score": EXERCISE.tiers[runner.tier_of(item)].points}
            for item in session.items
        ]
        self.post("collected", json.dumps(self.collected))

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        if self.guard.warm_up_asked():  # this test is skipped, and is the last
            runner.last_test(item)
            pytest.skip("the page asked for a run")
        # Stopped, out of budget or out of memory: this test is the last (its calls are not run).
        if self.guard.halted() or self.guard.out_of_memory:
            runner.last_test(item)
        self.guard.start_test()
        self.post("start", json.dumps({"name": item.name, "tier": runner.tier_of(item)}))

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        results = self.collector.results if self.collector else []
        if results:
            self.post("finish", json.dumps({**asdict(results[-1]), "returned": self.guard.returned[:3]}))
        self.times["tested"] = time.perf_counter()


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
            # After one timeout the remaining probes are not run: the page's calls cost the student's wait.
            guard = diagnosis_core.ProbeGuard(timeouts_allowed=0)
            outputs = diagnosis_core.run_probes(LocalSubmission(source, EXERCISE.function), table, NORMALIZE, guard)
        except (LoadError, KeyboardInterrupt):
            return None  # an interrupt that landed between two calls: no diagnosis rather than a wrong one
        finally:
            # No student code runs after this point: the page stops its timer, so the trusted
            # work left (matching the table, the report) never counts as a hang, however slow.
            post("probed", "{}")
    # As the CLI: probes cut short by a timeout could point at the wrong mistake; the tests still speak.
    trusted = not guard.timeouts or all(isinstance(out, dict) and "error" in out for out in outputs)
    found = diagnosis_core.diagnose_outputs(outputs if trusted else None, table, diagnosis_core.evidence(tests, EXERCISE))
    return {**found, "text": diagnosis_core.full_text(found)} if found else None


def run_tests(source: str, post: Post, halted: Halted = never_halted, warm_up: bool = False) -> str:
    """Run the browser tiers against `source`; the JSON report, as the CLI's `--json` gives it.

    Besides the CLI's fields: `advice`, plain sentences for a beginner's mistakes, each said
    once for the whole run, and `restart`, true when Python must be restarted before the next run.
    `warm_up`: the run nobody sees, which `halted` ends at its next call (see `warm_up_run`).
    """
    previous = signal.signal(signal.SIGINT, landing_reported(post))
    try:
        return run_tests_reported(source, post, halted, warm_up)
    finally:
        signal.signal(signal.SIGINT, previous)


def run_tests_reported(source: str, post: Post, halted: Halted, warm_up: bool) -> str:
    """`run_tests`, with the page told when an interrupt lands."""
    started = time.perf_counter()
    source = source.lstrip("\ufeff")
    guard = Guard(halted, warm_up)
    progress = Progress(post, guard)
    try:
        report = runner.run(
            EXERCISE,
            lambda: PageSubmission(source, guard),
            "submission.py",
            tiers=EXERCISE.browser_tiers,
            plugins=(progress,),
        )
    except MemoryError:  # raised in pytest's own code, while the submission held the memory
        guard.out_of_memory = True
        report = runner.Report("submission.py", "graded", OUT_OF_MEMORY, [], 0.0)
    pytest_ended = time.perf_counter()
    result = report.as_json()
    not_reached(result, progress.collected, guard)
    # pytest itself failed (an INTERNALERROR): this interpreter may be broken, so the page restarts it.
    broken = result["status"] == "error" and not result["message"].startswith("could not load")
    if guard.out_of_memory or broken and "MemoryError" in result["message"]:
        guard.out_of_memory = True
        result["status"], result["message"] = "graded", OUT_OF_MEMORY
    elif broken:
        result["message"] = "the test run itself failed, so Python was restarted: run the tests again. " + result["message"]
    failed = result["status"] == "graded" and report.passed < len(result["tests"])
    halted = guard.halted() or guard.out_of_memory
    diagnosing = time.perf_counter()
    result["diagnosis"] = diagnosis(source, result["tests"], post) if failed and not halted else None
    diagnosed = time.perf_counter()
    result["advice"] = advice(source, result, guard)
    if result["advice"] and result["diagnosis"] and result["diagnosis"]["kind"] != "unknown":
        # The advice names the mistake (a missing return, input()): not a rule of the statement.
        if result["diagnosis"]["kind"] == "no_answer" or guard.all_returned and set(guard.all_returned) == {"None"}:
            result["diagnosis"] = None
    result["restart"] = guard.out_of_memory or broken
    text = json.dumps(result)
    spent = phases(progress.times, started, pytest_ended, diagnosing, diagnosed)
    if guard.asked is not None:  # the warm-up: how long it took to give way once the page asked
        spent["unwound"] = round(time.perf_counter() - guard.asked, 4)
    post("phases", json.dumps(spent))
    return text


def phases(times: dict[str, float], started: float, pytest_ended: float, diagnosing: float, diagnosed: float) -> dict:
    """Seconds each part of a run took inside Python, for the page's timings and the benchmark."""
    ended = time.perf_counter()
    configured = times.get("configured", started)
    collected = times.get("collected", configured)
    tested = times.get("tested", collected)
    return {
        "configure": configured - started,  # pytest's arguments, plugins, conftest
        "collect": collected - configured,
        "tests": tested - collected,
        "session_end": pytest_ended - tested,  # pytest's teardown and summary
        "diagnosis": diagnosed - diagnosing,
        "report": ended - pytest_ended - (diagnosed - diagnosing),  # advice, not-run rows, JSON
    }


def not_reached(result: dict, collected: list[dict], guard: Guard) -> None:
    """The tests a halted run never reached, as not_run with the reason, so the report lists them all."""
    seen = {t["name"] for t in result["tests"]}
    reason = "Python ran out of memory in an earlier test" if guard.out_of_memory else guard.halted() or "the run ended early"
    result["tests"] += [asdict(runner.not_run(t, f"not run: {reason}")) for t in collected if t["name"] not in seen]
    result["max_score"] = sum(t["max_score"] for t in result["tests"])


STDIN_MESSAGE = "reading from stdin while output is captured"


def advice(source: str, result: dict, guard: Guard) -> list[str]:
    """One plain sentence for each beginner's mistake the run shows; load errors leave the cards."""
    said: list[str] = []
    tests = result["tests"]
    prefix = "could not load the submission: "
    load = result["message"].removeprefix(prefix) if result["message"].startswith(prefix) else ""
    everything = load + "\n".join(t["message"] for t in tests)
    if STDIN_MESSAGE in everything or "EOFError" in everything and "input(" in source:
        for test in tests:
            test["message"] = re.sub(
                r"OSError: pytest: reading from stdin while output is captured!.*?`-s`\.?",
                "input() has nothing to read here (see the message above)",
                test["message"],
            )
        said.append(
            f"Your code calls input(), but nobody types anything here: {EXERCISE.function} gets everything it needs "
            f"as its parameters, {EXERCISE.signature}. Remove the input() calls."
        )
    missing = re.search(r"ModuleNotFoundError: No module named '([^'.]+)", everything)
    if missing and missing.group(1) not in sys.stdlib_module_names:
        said.append(
            f"Only Python's standard library is available in this exercise, and {missing.group(1)} is not part of it: "
            f"remove `import {missing.group(1)}` and write that part in plain Python."
        )
    if load and "KeyboardInterrupt" in load:
        said.append(
            "Your file ran out of time while loading: code outside any function runs as soon as the file "
            f"loads, and a loop there never ended. Move it into {EXERCISE.function}, or make it end."
        )
    elif load and not said:
        said.append(f"Your file could not be loaded, so no test could call {EXERCISE.function}: {load}")
    if load:
        for test in tests:  # the reason is said once above, not on every card
            test["message"] = "not run: your file could not be loaded (see the message above)"
    if guard.all_returned and set(guard.all_returned) == {"None"}:
        said.append(
            f"{EXERCISE.function} returned None every time: it has no return statement, or its return gives no value. "
            "End it with `return` and the answer it computed."
        )
    if guard.out_of_memory:
        said.append(OUT_OF_MEMORY)
    reason = guard.halted()
    if reason:
        said.append(f"The run ended early: {reason}. The tests it did not reach are marked not run.")
    return said


def warm_up() -> None:
    """Collect the tests once, so the first real run finds them imported and rewritten."""
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        pytest.main(
            [
                str(EXERCISE.tests_dir),
                "-q",
                "--collect-only",
                "-p",
                "no:cacheprovider",
                "--tiers",
                ",".join(EXERCISE.browser_tiers),
            ]
        )
    # What is loaded now stays for the page's life: keep the collector from scanning it again and again.
    gc.collect()
    gc.freeze()


def warm_up_run(halted: Halted = never_halted, slow: float = 0.0) -> float:
    """A run nobody sees, so the student's first run does not pay for running Python's code the first time.

    Restored from the build's snapshot, Python has everything imported, but this browser has yet
    to compile the WebAssembly behind most of its functions. The worker makes this run half a
    second after Python is ready (unless the page asked for a run first), on a function that always answers 0.0 (it passes some tests and fails the
    rest). Once `halted` says the page asked for something, it ends at its next test (skipped,
    and made the last: `last_test`) or at its next call (WarmUpOver, which ends the current test
    at once); asked while pytest starts, it collects and runs no test. It is never ended by an
    interrupt: one landing in pytest's own code could leave its capture or hooks half undone for
    the student's run. `slow` (tests only): seconds of work first that checks nothing, as
    pytest's start and collection are on a slow machine. Returns the seconds it took to give way
    once asked (0 if it ran to its end).
    """
    end = time.monotonic() + slow
    while time.monotonic() < end:
        pass
    unwound = 0.0

    def post(kind: str, data: str) -> None:
        nonlocal unwound
        if kind == "phases":
            unwound = json.loads(data).get("unwound", 0.0)

    source = f"def {EXERCISE.function}(*args, **kwargs):\n    return 0.0\n"
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        run_tests(source, post, halted, warm_up=True)
    return unwound


def settle() -> None:
    """Nothing: a call the worker makes before each of its calls, where a stale interrupt is raised."""
    for _ in range(2):  # a backward jump: CPython raises a signal it has taken in but not yet raised
        pass


def try_it(source: str, args_json: str, kwargs_json: str) -> str:
    """Call the editor's function once, on the student's own input."""
    args, kwargs = json.loads(args_json), json.loads(kwargs_json)
    source = source.lstrip("\ufeff")
    out = io.StringIO()
    result: dict[str, Any]
    with redirect_stdout(out), redirect_stderr(out):
        try:
            value = PageSubmission(source, Guard()).call(*args, **kwargs)
            result = {"status": "ok", "value": runner.truncate(repr(value), 300), "type": type(value).__name__}
        except LoadError as exc:
            result = {"status": "error", "message": f"could not load your code: {exc}"}
        except SubmissionError as exc:
            result = {"status": exc.status, "message": exc.message, "traceback": exc.traceback}
        except BaseException as exc:
            result = {"status": "error", "message": f"{type(exc).__name__}: {exc}"}
    result["output"] = runner.truncate(out.getvalue(), 2000)
    return json.dumps(result)
