"""Class grading: a whole class, each submission jailed, several at a time.

Flow: the command (grader/cli/grade.py) names paths; `discover` turns them into submissions;
worker processes grade them (trusted pytest in the worker, the submission in its sandbox); the
parent gathers the results, which the command writes as results.json, grades.csv and the rest.
"""

from __future__ import annotations

import ast
import gc
import hashlib
import itertools
import multiprocessing
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait

from grader.core import exercise, runner
from grader.core.safe_text import clean, path_text
from grader.core.submission import SUBMISSION_FILENAME, LoadError
from grader.judging.discovery import SOURCE_LIMIT, Prepared, Spec, UsageError, discover, prepare  # noqa: F401 - discover: cli/autograder.py
from grader.judging.memo import Memo, Profile, Recorder, Trace, Walk, confirm, full_run, pack
from grader.judging.partial_run import Catalogue, catalogue, prepare_before_fork, run_tests
from grader.reports.progress import Progress
from grader.sandbox.host import Jail, SandboxedSubmission

# A worker that overruns what its submission may legitimately take by this much is killed (the
# grader's own safety net). What it may take (`_longest`): its run, the memo's check (up to twice
# the time the run used), and a full run if the check fails.
GRACE = 60.0
# Workers beyond --jobs, for submissions that are only waiting on a hanging call: as many as the
# memory allows (a worker and its jail took up to 160 MB here), at most EXTRA_WORKERS. With the
# default budget a hanging file holds its worker 60 s; with 8 and the class's ten hanging files
# graded first, they held every worker, and the other files waited for them.
EXTRA_WORKERS = 32
EXTRA_WORKER_MEMORY = 256 * 2**20  # bytes of memory available for each extra worker, at least


class Deferred(Exception):
    """Another worker is exploring the same new behaviour: grade this submission once it has (from the memo)."""


@dataclass(frozen=True)
class Settings:
    """What a class is graded with: the exercise, and the limits; the workers get it as they fork."""

    exercise: exercise.Exercise
    timeout: float
    budget: float
    memo: bool = True


# ---------------------------------------------------------------- grading one submission


class Grader:
    """Grades submissions one after another in this (trusted) process, remembering behaviours."""

    def __init__(self, settings: Settings, tests: Catalogue):
        self.settings = settings
        self.tests = tests
        self.memo = Memo()
        self.ex = settings.exercise
        self.jail: Jail | None = None  # one jail for all this grader's submissions, one at a time
        self.on_slow: Callable[[], None] | None = None
        # Asked with a new behaviour's key before it is run for real: False means another worker
        # is running the same one now, and this submission waits for what it learns (Deferred).
        self.on_explore: Callable[[str], bool] | None = None
        self._source = ""
        self._template = {t["name"]: t for t in tests.template}

    def close(self) -> None:
        if self.jail is not None:
            self.jail.close()
            self.jail = None

    def grade(self, spec: Spec) -> tuple[dict, list[Trace | Profile]]:
        prepared = prepare(spec)
        self._source = prepared.source or ""
        result, traces = self._grade(spec, prepared)
        # The code as graded, for the class report's side-by-side view (a notebook's code cells).
        result["source"] = prepared.source[:SOURCE_LIMIT] if prepared.source else None
        if prepared.note:
            result["note"] = prepared.note
        return result, traces

    def _grade(self, spec: Spec, prepared: Prepared) -> tuple[dict, list[Trace | Profile]]:
        started = time.monotonic()
        if prepared.problem:
            return self._unloadable(spec.name, prepared.problem, started), []
        if self.jail is None:
            self.jail = Jail()
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
            sandbox.on_slow = self.on_slow
        except LoadError as exc:
            message = str(exc)
            if prepared.notebook is not None:
                message = prepared.notebook.relabel(message)
            return self._unloadable(spec.name, message, started), []
        try:
            report, traces, remembered = self._run(spec.name, sandbox)
            result = report.as_json()
            result["duration"] = round(time.monotonic() - started, 3)
            result["from_memo"] = remembered
            result["diagnosis"] = _diagnosis(self.ex, sandbox, result)
            return result, traces
        finally:
            sandbox.close()

    def _run(self, name: str, sandbox: SandboxedSubmission) -> tuple[runner.Report, list[Trace | Profile], int]:
        """The verdicts, and what the memo learned from them (to share with the other workers).

        Stage by stage (Exercise.stages): the public tiers in the child just loaded, then each tier
        whose inputs are secret in a fresh child, so no child that saw a secret input answers a
        public test. Each stage is walked through the memo and checked as a full run of it would be.
        """
        known: dict[str, runner.TestResult] = {}
        traces: list[Trace] = []
        paths: dict[str, list[str]] = {}  # this submission's profile: the answer keys along each test's path
        remembered, status, message = 0, "graded", ""
        walk: Walk | None = None
        explored = False  # a test ran for real: it answered something new
        for number, names in enumerate(self.tests.stages):
            if number and not self._next_stage(sandbox, names, known):
                continue
            if not self.settings.memo:
                status, message, _, _ = self._run_for_real(sandbox, names, known, None, None)
            else:
                # What the last stage's walk learned of this submission (the kinds it answers like) holds here too.
                walk = self.memo.walk(sandbox, names, walk)
                stage = self._remembered(name, sandbox, number, walk, known, explored)
                if stage is None:
                    # Its answers depend on the calls it had before (a counter, a cache...): verdicts pieced
                    # together from remembered runs are not those of a full run. It gets a full run.
                    status, message, known, learned = self._full_run(sandbox)
                    return self._report(name, status, message, known), learned, 0
                status, message, ran = stage
                remembered += len(walk.known)
                explored = explored or bool(walk.missing)
                traces += ran
                paths.update(walk.paths)
                paths.update({t.test: [c.answer for c in t.calls] for t in ran})
            if status != "graded":
                break
        learned: list[Trace | Profile] = list(traces)
        if walk is not None and status == "graded" and (explored or walk.surprised):
            # A new kind of behaviour (or a new mix of known ones): later ones like it replay in few batches.
            profile = Profile(paths)
            self.memo.add_profile(profile)
            if learned:
                learned.append(profile)
        return self._report(name, status, message, known), learned, remembered

    def _report(self, name: str, status: str, message: str, known: dict[str, runner.TestResult]) -> runner.Report:
        """The verdicts in `known`, as reports list them (Catalogue.template)."""
        ordered = [known.pop(n) for n in self.tests.names if n in known] + list(known.values())
        return runner.Report(name, status, message, runner.scored(self.ex, ordered))

    def _next_stage(self, sandbox: SandboxedSubmission, names: list[str], known: dict[str, runner.TestResult]) -> bool:
        """A fresh child for the stage of `names`, as a full run starts one; False (each test's verdict in
        `known`) when the budget is spent or the submission no longer loads."""
        spent = sandbox.spent()
        error = None if spent else runner.fresh_child(sandbox)
        if spent is None and error is None:
            return True
        status, why = ("not_run", spent) if spent else ("error", f"{runner.LOAD_PREFIX}{error}")
        for test in names:
            known[test] = runner.TestResult(
                **{**self._template[test], "status": status, "message": why, "output": "", "score": 0.0}
            )
        return False

    def _remembered(
        self, name: str, sandbox: SandboxedSubmission, number: int, walk: Walk, known: dict, explored: bool
    ) -> tuple[str, str, list[Trace]] | None:
        """One stage after its walk: (status, message, the traces its real run taught the memo); None
        when its verdicts are not those of a full run.

        `explored`: an earlier stage ran tests for real already, so this submission waits for no other.
        """
        known.update(walk.known)
        missing = walk.missing
        # A submission that hung does not wait for another that hung alike: what that one teaches
        # the memo saves no time, for each timeout is waited for again (the memo never assumes one).
        if missing and not walk.hung and not explored and self.on_explore is not None:
            if not self.on_explore(self._behaviour(walk, number)):
                raise Deferred(name)
        status, message, recorder, ran = "graded", "", None, []
        if missing:
            # In the child the walk asked, or the one just loaded: no fresh one (see _run_for_real).
            status, message, recorder, ran = self._run_for_real(sandbox, missing, known, walk.prefixes, self.memo.ahead)
        if status == "graded" and not self._as_a_full_run(sandbox, recorder, walk, walk.tests):
            return None
        learned: list[Trace] = []
        if status == "graded" and recorder is not None and not self.memo.full:
            learned = recorder.traces(ran)
            for trace in learned:
                self.memo.add(trace)
        return status, message, learned

    def _full_run(self, sandbox: SandboxedSubmission) -> tuple[str, str, dict[str, runner.TestResult], list[Trace | Profile]]:
        """Every stage run for real from a fresh child, the whole budget again: (status, message, verdicts, traces learned)."""
        sandbox.start_over()  # a full run does not pay for the runs before it
        known: dict[str, runner.TestResult] = {}
        learned: list[Trace | Profile] = []
        status, message = "graded", ""
        for number, names in enumerate(self.tests.stages):
            if number and not self._next_stage(sandbox, names, known):
                continue
            status, message, recorder, ran = self._run_for_real(sandbox, names, known, None, None)
            if status != "graded":
                break
            if not self.memo.full:
                traces = recorder.traces(ran)
                for trace in traces:
                    self.memo.add(trace)
                learned += traces
        return status, message, known, learned

    def _behaviour(self, walk: Walk, stage: int) -> str:
        """A key for the new behaviour the replay just met in `stage`: equal for submissions that answered every call alike.

        Before the memo made any call, the code itself: copies that differ only in comments and layout.
        """
        if not walk.paths and not walk.prefixes:
            try:
                what = ast.dump(ast.parse(self._source))
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                what = self._source
        else:
            prefixes = {t: [(c, a.key()) for c, a in calls] for t, calls in walk.prefixes.items()}
            what = repr((sorted(walk.paths.items()), sorted(prefixes.items()), walk.missing))
        return hashlib.sha256(f"{stage}\0{what}".encode("utf-8", "surrogatepass")).hexdigest()

    def _run_for_real(
        self,
        sandbox: SandboxedSubmission,
        missing: list[str],
        known: dict[str, runner.TestResult],
        prefixes: dict | None,
        ahead: Callable[[str, int, int], list[list]] | None,
    ) -> tuple[str, str, Recorder, list[runner.TestResult]]:
        """Run the `missing` tests (of one stage) through pytest, in the child the sandbox has; their verdicts go into `known`.

        The first run of a stage goes on in the child it has: one just loaded (the first stage, or
        without the memo), one the walk left fresh after a timeout or a crash (as a full run would
        be then), or one the walk asked other calls, and then the memo's check asks a fresh child a
        full run's calls from where the walk left a full run's order (Walk.deviation), so the
        verdicts stand only if a full run gives them. A fresh child there cost 0.02-0.03 s of each
        new behaviour.
        """
        recorder = Recorder(sandbox, prefixes, ahead)
        try:
            outcome, _ = run_tests(self.ex, lambda: recorder, [self.tests.nodeids[n] for n in missing], stop=sandbox.spent)
        finally:
            recorder.finish()
        for test in outcome.tests:
            known[test.name] = test
        spent = sandbox.spent()
        if outcome.status == "graded" and spent:
            # The run stopped once the budget was spent: the tests after it were not run.
            for test in missing:
                if test not in known:
                    known[test] = runner.TestResult(
                        **{**self._template[test], "status": "not_run", "message": spent, "output": "", "score": 0.0}
                    )
        return outcome.status, outcome.message, recorder, outcome.tests

    def _as_a_full_run(self, sandbox: SandboxedSubmission, recorder: Recorder | None, walk: Walk, names: list[str]) -> bool:
        """Whether the memo's verdicts for the stage of `names` are those a full run gives (see memo.confirm)."""
        deviations = [walk.deviation] if walk.deviation is not None else []
        if recorder is not None and recorder.deviation is not None:
            test, made = recorder.deviation
            # The real run's batch sent ahead, in part unasked (a test it cannot place: the whole run).
            deviations.append((names.index(test), made) if test in names else (0, 0))
        if not deviations:
            return True  # every call reached one child in a full run's order
        if walk.missing == names and not walk.prefixes and recorder is not None and recorder.deviation is None:
            return True  # every test ran for real, from a fresh child: that was a full run
        paths = {**(recorder.answers if recorder is not None else {}), **walk.walked}
        steps, deviation = full_run(names, paths, min(deviations))
        # Asking again costs about what asking did the first time: more than twice that, and it is not trusted.
        return confirm(sandbox, steps, deviation, 2 * sandbox.used() + 1.0)

    def _unloadable(self, name: str, reason: str, started: float) -> dict:
        report = runner.Report.could_not_load(name, reason, self.tests.template)
        report.duration = round(time.monotonic() - started, 3)
        result = report.as_json()
        result["from_memo"] = 0
        result["diagnosis"] = None
        return result


def _extra_workers() -> int:
    """How many workers beyond --jobs may wait on hanging calls: see EXTRA_WORKERS."""
    try:
        with open("/proc/meminfo") as f:
            available = next(int(line.split()[1]) * 1024 for line in f if line.startswith("MemAvailable:"))
    except (OSError, StopIteration, ValueError, IndexError):
        return 4  # what it was before the memory was read
    return max(1, min(EXTRA_WORKERS, available // EXTRA_WORKER_MEMORY))


def _longest(budget: float) -> float:
    """Seconds a worker may legitimately take on one submission: see GRACE."""
    return 4 * budget


def _diagnosis(ex: exercise.Exercise, sandbox: SandboxedSubmission, result: dict) -> dict | None:
    """What misconception explains the failures (None when nothing failed)."""
    if result["status"] != "graded" or result["passed"] == len(result["tests"]):
        return None
    import dataclasses

    from grader.judging.diagnose import diagnose_submission

    try:
        # A fresh child, as `check` probes it: what the tests asked before cannot change the diagnosis.
        sandbox.restart()
        found = diagnose_submission(ex, sandbox, result["tests"])
    except LoadError:
        return None
    if found is None:
        return None
    return found.as_json() if hasattr(found, "as_json") else dataclasses.asdict(found)


# ---------------------------------------------------------------- workers


def _worker(conn: Connection, settings: Settings, tests: Catalogue, core: int | None = None) -> None:
    """A grading process: takes (index, spec, new traces) and answers (index, result, traces).

    Traces travel packed (`memo.pack`), as bytes the parent passes on to the other workers without
    reading them: unpickled and pickled again there, they took half the parent's CPU (0.9 s of 2 s
    on the 290 diverse files that do not hang), which it takes from the cores the workers compute on.

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
    grader = Grader(settings, tests)

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
            grader.on_slow = lambda: conn.send(("slow", index))
            grader.on_explore = explore(index)
            _learn(grader.memo, traces)
            try:
                result, new = grader.grade(spec)
            except Deferred:
                conn.send(("deferred", index))
                continue
            except Exception as exc:
                result, new = _grader_failed(spec.name, tests.template, f"{type(exc).__name__}: {exc}"), []
            conn.send((index, result, pack(new) if new else None))
    finally:
        grader.close()


def _learn(memo: Memo, traces: list[bytes]) -> None:
    """Learn the other workers' new traces, then keep the garbage collector off everything this worker holds.

    The memo only grows (a worker of the diverse class of 500 ends with about 80,000 nodes,
    each a few dicts and a set), and each full collection looked at all of it: 2.1-2.2 s of
    the 6.4-7 s of CPU each of the two workers used, most of it while learning. So before
    each submission what the last one left in cycles is collected (a collection now looks only
    at what came since the last freeze), and everything left is frozen: never looked at
    again, still freed when nothing refers to it.
    """
    gc.collect()
    for batch in traces:
        memo.learn_packed(batch)
    gc.freeze()


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
    stalled: bool = False  # waiting on a call that seems to hang: it does not count as busy


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

    extra = _extra_workers()
    interrupted = False
    try:
        for _ in range(min(jobs, len(specs))):
            slots.append(start())
        while any(r is None for r in results):
            # `jobs` workers compute at once. One that waits on a call that seems to hang is
            # not computing (its jail spins until the time limit at most): another takes over.
            while pending and sum(s.task is not None and not s.stalled for s in slots) < jobs:
                idle = [s for s in slots if s.task is None]
                if not idle and len(slots) >= jobs + extra:
                    break
                slot = idle[0] if idle else start()
                if not idle:
                    slots.append(slot)
                index = pending.pop()
                slot.task = (index, specs[index], [t for origin, t in traces[slot.seen :] if origin != slot.id])
                slot.seen = len(traces)
                slot.since = time.monotonic()
                slot.conn.send(slot.task)
            ready = wait([s.conn for s in slots if s.task is not None], timeout=1.0)
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
                    if message[0] == "slow":
                        slot.stalled = True
                        continue
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
                        slot.task, slot.stalled = None, False
                        continue
                    _, result, new = message
                    if result is not None:
                        results[index] = result = _recorded(result, specs[index])
                        if new:
                            traces.append((slot.id, new))
                        slot.task, slot.stalled = None, False
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
