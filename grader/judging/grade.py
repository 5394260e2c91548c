"""Class grading: a whole class, each submission jailed, several at a time (the worker pool).

Flow: the command (grader/cli/grade.py) names paths; `discover` turns them into submissions;
worker processes grade them (grader.py: trusted pytest in the worker, the submission in its
sandbox); the parent gathers the results, which the command writes as results.json, grades.csv
and the rest. How a worker runs the tests is its `Runs` (runs.py): `Memoized` unless --no-memo
says `Plain`, or the memoized side is not there; this module alone chooses (pyproject.toml's
import-linter contract).
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait

from grader.core import replay, runner
from grader.core.safe_text import clean, path_text
from grader.core.tuning import GRACE, POOL_LONGEST, POOL_POLL
from grader.judging.discovery import Spec, UsageError, discover  # noqa: F401 - cli/autograder.py, the tests
from grader.judging.grader import Grader
from grader.judging.partial_run import Catalogue, catalogue, prepare_before_fork
from grader.judging.runs import Deferred, Plain, Runs, Settings
from grader.reports.progress import Progress

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


def _longest(budget: float) -> float:
    """Seconds a worker may legitimately take on one submission: its run, the memo's check (up to twice the
    time the run used), and a full run if the check fails (tuning.GRACE is added before it is killed)."""
    return POOL_LONGEST * budget


# ---------------------------------------------------------------- workers


def _worker(conn: Connection, settings: Settings, tests: Catalogue, core: int | None = None) -> None:
    """A grading process: takes (index, spec, what other workers learned) and answers (index, result, what it learned).

    What a worker learned travels packed (Ran.learned), as bytes the parent passes on to the other
    workers without reading them: unpickled and pickled again there, the memo's traces took half the
    parent's CPU (0.9 s of 2 s on the 290 diverse files that do not hang), which it takes from the
    cores the workers compute on.

    `core`: the one CPU it and its jail run on. A worker and its jail take turns (a call, an
    answer): on one core each turn is a switch on that core, where on two it is a wakeup sent
    to the other. A new behaviour's run, one call per hypothesis example, took up to twice as
    long unpinned on this machine; a class of 500 took 5 % less time in all, measured paired.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if core is not None:
        try:
            os.sched_setaffinity(0, {core})
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


def _grader_failed(name: str, template: list[dict], why: str) -> dict:
    message = f"the grader failed on this submission ({why}); grade it again or alone with meteor-kit check"
    return _unscored(runner.Report.not_run(name, "error", message, template))


def _unscored(report: runner.Report) -> dict:
    """A result without a run: no memo, no diagnosis, no source."""
    return {**report.as_json(), "duration": 0.0, "from_memo": 0, "diagnosis": None, "source": None}


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


def who(spec: Spec, note: str = "") -> dict:
    """The fields that say whose a result is: the file graded, the student, and any note on the pick."""
    return {
        "path": spec.where or (path_text(str(spec.path)) if spec.path else ""),
        "student": spec.student
        or {
            "name": None,
            "lms_id": None,
            "login": None,
            "email": None,
            "late": None,
            "submitted_at": None,
            "layout": "folder",
            "path": spec.where or None,
        },
        "note": "; ".join(n for n in (spec.note, note) if n),
    }


def helper_note(earlier: dict, spec: Spec) -> str:
    """The part of a kept result's note that came from reading its helpers (the rest comes from the spec)."""
    note = str(earlier.get("note") or "")
    return note.removeprefix(spec.note).lstrip("; ") if spec.note else note


NOT_GRADED = "not graded: the run was interrupted before this submission was graded; run the command again to grade it"


def not_graded(name: str, template: list[dict]) -> dict:
    """The result of a submission the run never reached: no score, and a reason."""
    return _unscored(runner.Report.not_run(name, "not_graded", NOT_GRADED, template))


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


class _Explorers:
    """Which worker is running which new behaviour for real, and the submissions waiting for it.

    Two copies of a new behaviour graded at the same moment would both pay a full run. The
    second is put back instead, to be graded once the first is done, from the memo it filled.
    """

    def __init__(self) -> None:
        self.owner: dict[str, tuple[int, int]] = {}  # behaviour key -> (worker id, submission index)
        self.waiting: dict[str, list[int]] = {}
        self.deferred: set[int] = set()
        self.explored: set[str] = set()  # behaviours explored and done: their traces are out

    def claim(self, key: str, worker: int, index: int) -> bool:
        """Whether this worker runs the behaviour now (False: the submission waits for its owner)."""
        owner = self.owner.get(key)
        # Once is enough: if the owner learned nothing the memo can use, waiting again gains nothing.
        if owner is None or owner == (worker, index) or index in self.deferred:
            self.owner.setdefault(key, (worker, index))
            return True
        self.deferred.add(index)
        self.waiting.setdefault(key, []).append(index)
        return False

    def release(self, worker: int, index: int) -> list[int]:
        """That submission is done: the ones waiting on what it explored, to grade next (pending pops from the end)."""
        freed: list[int] = []
        for key in [k for k, o in self.owner.items() if o == (worker, index)]:
            del self.owner[key]
            self.explored.add(key)
            freed += self.waiting.pop(key, [])
        return freed[::-1]


def grade_all(specs: list[Spec], settings: Settings, jobs: int, progress: Progress | None = None) -> list[dict]:
    prepare_before_fork(settings.exercise)
    tests = catalogue(settings.exercise)
    template = tests.template
    context = multiprocessing.get_context("fork")
    traces: list[tuple[int, bytes]] = []  # (the worker that made them, a submission's new traces packed)
    results: list[dict | None] = [None] * len(specs)
    pending = list(range(len(specs)))[::-1]
    slots: list[_Slot] = []
    explorers = _Explorers()
    ids = itertools.count()
    pins = itertools.count()  # workers go round the cores this process may use
    cores = sorted(os.sched_getaffinity(0))

    def start() -> _Slot:
        parent, child = context.Pipe()
        core = cores[next(pins) % len(cores)] if len(cores) > 1 else None
        process = context.Process(target=_worker, args=(child, settings, tests, core), daemon=True)
        process.start()
        child.close()
        return _Slot(next(ids), process, parent)

    interrupted = False
    try:
        for _ in range(min(jobs, len(specs))):
            slots.append(start())
        while any(r is None for r in results):
            # `jobs` workers, each given the next file as soon as it is free.
            for slot in slots:
                if not pending or slot.task is not None:
                    continue
                index = pending.pop()
                slot.task = (index, specs[index], [t for origin, t in traces[slot.seen :] if origin != slot.id])
                slot.seen = len(traces)
                slot.since = time.monotonic()
                slot.conn.send(slot.task)
            ready = wait([s.conn for s in slots if s.task is not None], timeout=POOL_POLL)
            for slot in list(slots):
                if slot.task is None:
                    continue
                index = slot.task[0]
                overdue = time.monotonic() - slot.since > _longest(settings.budget) + GRACE
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
                        try:
                            slot.conn.send(False if again else explorers.claim(message[2], slot.id, index))
                        except OSError:
                            pass  # it died: the next round's recv says so
                        continue
                    if message[0] == "deferred":
                        slot.task = None
                        continue
                    _, result, new = message
                    if result is not None:
                        results[index] = result = _recorded(result, specs[index])
                        if new:
                            traces.append((slot.id, new))
                        slot.task = None
                        pending += explorers.release(slot.id, index)
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
                slots[slots.index(slot)] = start()
    except KeyboardInterrupt:
        # A second Ctrl+C while the workers stop must not cut the results short either.
        handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
        interrupted = True
    finally:
        for slot in slots:
            if interrupted and slot.task is not None:
                slot.process.terminate()  # it is busy: it would finish its submission first
                continue
            try:
                slot.conn.send(None)
            except OSError:
                pass
        for slot in slots:
            slot.process.join(timeout=5)
            if slot.process.is_alive():
                slot.process.kill()
                slot.process.join()
    if interrupted:
        signal.signal(signal.SIGINT, handler)
        raise Interrupted([r if r is not None else _recorded(not_graded(s.name, template), s) for r, s in zip(results, specs)])
    return results  # type: ignore[return-value]


# ---------------------------------------------------------------- the command
