"""A whole class graded, each submission jailed, several at a time: the worker pool, and what a worker does with one submission.

`grade_all` forks `jobs` workers, one a core, and hands each the next submission as soon as it is free (and to
extra workers while the cores stand idle: runs.IdleCores); a worker that dies or runs past its budget
is replaced, and its submission reported. Each worker's
`Grader` reads the file (discovery.prepare), loads it in a sandbox of its own jail
(grader/sandbox/host.py), runs the tests through its `Runs` (runs.py) and diagnoses the failures.
`Memoized` runs them unless --no-memo says `Plain`, or the memoized side is not there; this module
alone chooses (pyproject.toml's import-linter contract). The results go back to the pipeline
(pipeline.py) as results.json's dictionaries.
"""

from __future__ import annotations

import gc
import itertools
import multiprocessing
import os
import signal
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait

from grader.core import replay, runner
from grader.core.safe_text import clean
from grader.core.submission import SUBMISSION_FILENAME, LoadError
from grader.core.tuning import GRACE, POOL_LONGEST, POOL_POLL
from grader.judging.diagnose import diagnosis_of
from grader.judging.discovery import SOURCE_LIMIT, Prepared, Spec, UsageError, discover, prepare, who  # noqa: F401 - cli/autograder.py, the tests
from grader.judging.partial_run import Catalogue, catalogue, prepare_before_fork
from grader.judging.runs import Deferred, Explorers, IdleCores, Plain, Runs, Settings, pool_size
from grader.reports.progress import Progress
from grader.sandbox.host import Jail, Limits, SandboxedSubmission

try:
    from grader.judging.memoized import Memoized
except ModuleNotFoundError as missing:  # the memoized side is an acceleration: without it, every class is graded Plain
    if missing.name != "grader.judging.memoized":
        raise
    Memoized = None  # type: ignore[assignment,misc]


def runs_for(settings: Settings, tests: Catalogue) -> Runs:
    """How a worker runs each submission's tests: through the memo unless --no-memo, or the memoized side is not there."""
    if settings.memo and Memoized is not None:
        return Memoized(settings, tests)
    return Plain(settings, tests)


def paths(settings: Settings) -> dict[str, str]:
    """Which way this run's tests and property tests run, as results.json and the summary say it."""
    tests = "memoized" if settings.memo and Memoized is not None else "plain"
    return {"tests": tests, **replay.path()}


# ---------------------------------------------------------------- one submission, in a worker


class Grader:
    """Grades submissions one after another in this (trusted) process, one jail for all of them."""

    def __init__(self, settings: Settings, tests: Catalogue, runs: Runs | None = None):
        self.settings = settings
        self.tests = tests
        self.runs = runs if runs is not None else Plain(settings, tests)
        self.ex = settings.exercise
        self.jail: Jail | None = None  # one jail for all this grader's submissions, one at a time

    def close(self) -> None:
        if self.jail is not None:
            self.jail.close()
            self.jail = None

    def grade(self, spec: Spec) -> tuple[dict, bytes | None]:
        """The submission's result (as results.json holds it), and what other workers may learn from its run."""
        prepared = prepare(spec)
        result, learned = self._grade(spec, prepared)
        # The code as graded, for the class report's side-by-side view (a notebook's code cells).
        result["source"] = prepared.source[:SOURCE_LIMIT] if prepared.source else None
        if prepared.note:
            result["note"] = prepared.note
        return result, learned

    def _grade(self, spec: Spec, prepared: Prepared) -> tuple[dict, bytes | None]:
        started = time.monotonic()
        if prepared.problem:
            return self._unloadable(spec.name, prepared.problem, started), None
        if self.jail is None:
            self.jail = Jail(Limits.of(self.ex))
        try:
            # One file name for every submission's tracebacks: a crash that two students share
            # then reads the same, and the memo can recognise it.
            sandbox = SandboxedSubmission(
                spec.path,
                self.ex.function,
                self.settings.timeout,
                source=prepared.source,
                filename=SUBMISSION_FILENAME,
                budget=self.settings.budget,
                signature=self.ex.signature,
                jail=self.jail,
                modules=prepared.modules,
            )
        except LoadError as exc:
            message = str(exc)
            if prepared.notebook is not None:
                message = prepared.notebook.relabel(message)
            return self._unloadable(spec.name, message, started), None
        try:
            ran = self.runs.run(spec.name, sandbox, prepared.source or "")
            result = ran.report.as_json()
            result["duration"] = round(time.monotonic() - started, 3)
            result["from_memo"] = ran.from_memo
            result["diagnosis"] = diagnosis_of(self.ex, sandbox, result)
            return result, ran.learned
        finally:
            sandbox.close()

    def _unloadable(self, name: str, reason: str, started: float) -> dict:
        report = runner.Report.could_not_load(name, reason, self.tests.template)
        report.duration = round(time.monotonic() - started, 3)
        result = report.as_json()
        result["from_memo"] = 0
        result["diagnosis"] = None
        return result


# ---------------------------------------------------------------- the workers


def _worker(conn: Connection, settings: Settings, tests: Catalogue, cores: set[int] | None = None) -> None:
    """A grading process: takes (index, spec, what other workers learned) and answers (index, result, what it learned).

    What a worker learned travels packed (Ran.learned): the parent passes the bytes on to the other
    workers without reading them, so it takes no CPU from the cores the workers compute on.
    `cores`: where it and its jail run, one core for each of --jobs's workers (runs.IdleCores's extra
    ones share them): a worker and its jail take turns (a call, an answer), a switch on one core
    rather than a wakeup sent to another (bench/log.md has the figures).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if cores is not None:
        try:
            os.sched_setaffinity(0, cores)
        except OSError:
            pass
    grader = Grader(settings, tests, runs_for(settings, tests))

    def stop(*_: object) -> None:
        # The parent ends a busy worker with SIGTERM when the run is interrupted. An exception
        # would not do: pytest, mid-run, catches even SystemExit and goes on.
        grader.close()
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)

    def explore(index: int) -> Callable[[str], bool]:
        def ask(key: str) -> bool:
            conn.send(("exploring", index, key))
            return conn.recv()

        return ask

    try:
        while True:
            try:
                task = conn.recv()
            except EOFError:
                task = None
            if task is None:
                return
            index, spec, traces = task
            grader.runs.on_explore = explore(index)
            grader.runs.learn(traces)
            try:
                result, new = grader.grade(spec)
            except Deferred:
                conn.send(("deferred", index))
                continue
            except Exception as exc:
                result, new = _grader_failed(spec.name, tests.template, f"{type(exc).__name__}: {exc}"), None
            conn.send((index, result, new))
    finally:
        grader.close()


def _unscored(name: str, status: str, message: str, template: list[dict]) -> dict:
    """A result without a run: no memo, no diagnosis, no source."""
    report = runner.Report.not_run(name, status, message, template)
    return {**report.as_json(), "duration": 0.0, "from_memo": 0, "diagnosis": None, "source": None}


def _grader_failed(name: str, template: list[dict], why: str) -> dict:
    message = f"the grader failed on this submission ({why}); grade it again or alone with meteor-kit check"
    return _unscored(name, "error", message, template)


def _recorded(result: dict, spec: Spec) -> dict:
    """The result as every output gets it: with the file's path in the class, and text that encodes."""
    recorded: dict = {}
    for key, value in result.items():
        if key == "note":
            continue
        recorded[key] = value
        if key == "submission":
            recorded.update(who(spec, result.get("note", "")))
    return clean(recorded)


NOT_GRADED = "not graded: the run was interrupted before this submission was graded; run the command again to grade it"


class Interrupted(Exception):
    """Ctrl+C during a run: `results` holds what was graded, the rest marked not graded."""

    def __init__(self, results: list[dict]):
        super().__init__("interrupted")
        self.results = results


@dataclass
class _Slot:
    id: int
    process: multiprocessing.Process
    conn: Connection
    seen: int = 0  # how many of the parent's batches of traces this worker has
    task: tuple | None = None
    since: float = 0.0


def grade_all(specs: list[Spec], settings: Settings, jobs: int, progress: Progress | None = None) -> list[dict]:
    prepare_before_fork(settings.exercise)
    tests = catalogue(settings.exercise)
    template = tests.template
    context = multiprocessing.get_context("fork")
    traces: list[tuple[int, bytes]] = []  # (the worker that made them, a submission's new traces packed)
    results: list[dict | None] = [None] * len(specs)
    pending = list(range(len(specs)))[::-1]
    slots: list[_Slot] = []
    explorers = Explorers()
    ids = itertools.count()
    cores = sorted(os.sched_getaffinity(0))[:jobs]  # those of this process, as many as --jobs asks
    workers = pool_size(jobs)
    idle = IdleCores(jobs, workers, cores)

    def start(place: int) -> _Slot:
        parent, child = context.Pipe()
        # --jobs's workers go round the cores; the extra ones (runs.pool_size) may use any of them.
        pinned = {cores[place % len(cores)]} if place < jobs else set(cores)
        process = context.Process(target=_worker, args=(child, settings, tests, pinned), daemon=True)
        process.start()
        child.close()
        return _Slot(next(ids), process, parent)

    def hand_out(free: list[_Slot]) -> None:
        """Each free worker gets the next file, while the cores have room (IdleCores)."""
        for slot in free:
            if not pending or sum(s.task is not None for s in slots) >= idle.allowed():
                break
            if slot.task is not None:
                continue
            index = pending.pop()
            slot.task = (index, specs[index], [t for origin, t in traces[slot.seen :] if origin != slot.id])
            slot.seen = len(traces)
            slot.since = time.monotonic()
            slot.conn.send(slot.task)

    interrupted = False
    gc.freeze()  # what is here lives for the run: no full collection walks it (here, nor in a worker, page by page)
    try:
        for place in range(min(workers, len(specs))):
            slots.append(start(place))
        while any(r is None for r in results):
            hand_out(slots)
            ready = wait([s.conn for s in slots if s.task is not None], timeout=POOL_POLL)
            for slot in list(slots):
                if slot.task is None:
                    continue
                index = slot.task[0]
                overdue = time.monotonic() - slot.since > POOL_LONGEST * settings.budget + GRACE  # tuning.py says why
                if slot.conn in ready:
                    try:
                        message = slot.conn.recv()
                    except (EOFError, OSError):
                        message = (index, None, [])
                    if message[0] == "exploring":
                        # Explored by another worker since this one took the file (it started late,
                        # or that one was quick): graded again, with the traces that taught.
                        again = message[2] in explorers.explored and any(o != slot.id for o, _ in traces[slot.seen :])
                        if again:
                            pending.append(index)
                        with suppress(OSError):  # it died: the next round's recv says so
                            slot.conn.send(False if again else explorers.claim(message[2], slot.id, index))
                        continue
                    if message[0] == "deferred":
                        slot.task = None
                        continue
                    _, result, new = message
                    if result is not None:
                        traces += [(slot.id, new)] if new else []
                        slot.task = None
                        pending += explorers.release(slot.id, index)
                        hand_out([slot])  # its next file first: the worker waits meanwhile
                        results[index] = result = _recorded(result, specs[index])
                        if progress:
                            progress.update(result)
                        continue
                elif not overdue:
                    continue
                # The worker died or hung: that submission is reported, a new worker takes over.
                why = "it ran past its budget" if overdue else "the grading process ended"
                results[index] = _recorded(_grader_failed(specs[index].name, template, why), specs[index])
                pending += explorers.release(slot.id, index)
                if progress:
                    progress.update(results[index])
                slot.process.kill()
                slot.process.join()
                slots[slots.index(slot)] = start(slots.index(slot))
    except KeyboardInterrupt:
        # A second Ctrl+C while the workers stop must not cut the results short either.
        handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
        interrupted = True
    finally:
        for slot in slots:
            if interrupted and slot.task is not None:
                slot.process.terminate()  # it is busy: it would finish its submission first
                continue
            with suppress(OSError):
                slot.conn.send(None)
        for slot in slots:
            slot.process.join(timeout=5)
            if slot.process.is_alive():
                slot.process.kill()
                slot.process.join()
        gc.unfreeze()  # a caller that grades again (an audit) collects what it left meanwhile
    if interrupted:
        signal.signal(signal.SIGINT, handler)
        raise Interrupted(
            [
                r if r is not None else _recorded(_unscored(s.name, "not_graded", NOT_GRADED, template), s)
                for r, s in zip(results, specs)
            ]
        )
    return results  # type: ignore[return-value]
