"""A submission running in a separate, jailed process: arguments go in, plain data comes out.

The jail is bubblewrap where it works (a chroot and a uid of its own as root without it): no
network, no view of the grader's files or environment. Inside it a fork server (child.py) opens
a cell for each submission: its own namespaces, tmpfs, cgroup, uid and seccomp filter, all of it
ended with the submission. A load is a child forked in the cell, so a restart costs a fork.
Where none of that can be had, `isolation()` says so.

This module is the sandbox's face to the grader. Its parts live in modules of their own:
the jail and its cells (jail.py, mounts.py, interpreter.py, separate_uid.py, cgroups.py,
uids.py, seccomp.py), which isolation works here (probe.py), the protocol (wire.py), and a
submission's pieces: loading.py, batch.py, budget.py, timing.py, pipes.py, lifecycle.py, answer.py.
"""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from grader.core import exercise
from grader.core.submission import CallsByName, LoadError
from grader.sandbox.answer import Answer, decode
from grader.sandbox.batch import Batch
from grader.sandbox.budget import Budget
from grader.sandbox.interpreter import Interpreter, describe_interpreter, interpreter
from grader.sandbox.isolation import Probe, enter_mode, isolation, isolation_note, probe, refusal
from grader.sandbox.jail import Jail, Limits, processes_of
from grader.sandbox.lifecycle import Lifecycle
from grader.sandbox.loading import Loading
from grader.sandbox.separate_uid import hide, prepare_separate_uid, state_dir, unhide
from grader.sandbox.timing import wall_cap

# What callers import from here (the grader's commands, judging, the tests).
__all__ = [
    "Answer",
    "Interpreter",
    "Jail",
    "Limits",
    "Probe",
    "SandboxedSubmission",
    "decode",
    "describe_interpreter",
    "enter_mode",
    "hide",
    "interpreter",
    "isolation",
    "isolation_note",
    "prepare_separate_uid",
    "probe",
    "processes_of",
    "refusal",
    "state_dir",
    "unhide",
]


RESUME_LIMIT = 0.5  # seconds of CPU a woken copy of the submission has to say it is ready (it does nothing else)


class SandboxedSubmission(CallsByName):
    """One submission in a jail; the judge only ever sees plain values."""

    def __init__(
        self,
        path: str | os.PathLike,
        function: str | None = None,
        timeout: float = 2.0,
        *,
        source: str | None = None,
        filename: str | None = None,
        budget: float | None = None,
        limits: Limits | None = None,
        mode: str | None = None,
        signature: str | None = None,
        jail: Jail | None = None,
        modules: dict[str, str] | None = None,
    ):
        if source is None:  # the trusted side reads files (judging.discovery.read_source); the sandbox only runs code
            raise TypeError("SandboxedSubmission needs the submission's source")
        self.path = Path(path)
        self.timeout = timeout
        self.limits = limits or Limits()
        self.mode = mode or isolation()
        self.load_output = ""
        self._loading = Loading(
            source,
            filename or self.path.name,
            function or exercise.load(exercise.KIT_ROOT).function,  # the callers give an exercise's; these are the kit's own
            signature or exercise.load(exercise.KIT_ROOT).signature,
            dict(modules or {}),
        )
        self._budget = Budget(budget)
        self._batch: Batch | None = None  # the last batch sent to the current child (see settle)
        self._life = Lifecycle(jail, self.limits, self.mode)
        try:
            self._spawn()
        except BaseException:
            self.close()  # now, not whenever the garbage collector gets to it
            raise

    @classmethod
    def of(
        cls, ex: exercise.Exercise, path: str | os.PathLike, source: str, budget: float | None, **more: Any
    ) -> SandboxedSubmission:
        """A file of exercise `ex`, judged by its own settings: its function, signature, call_timeout and [limits]."""
        return cls(
            path, ex.function, ex.call_timeout, source=source, budget=budget, signature=ex.signature, limits=Limits.of(ex), **more
        )

    # What the submission is, as given.
    source = property(lambda self: self._loading.source)
    filename = property(lambda self: self._loading.filename)
    function = property(lambda self: self._loading.function)
    signature = property(lambda self: self._loading.signature)
    modules = property(lambda self: self._loading.modules)
    budget = property(lambda self: self._budget.seconds)
    # The jail, its cell and its processes (the tests look at them).
    _jail = property(lambda self: self._life.jail)
    _proc = property(lambda self: self._life.jail.proc)
    _uid = property(lambda self: self._life.cell.uid if self._life.cell else None)
    _cell = property(lambda self: self._life.cell)

    # ------------------------------------------------------------ loading

    def _spawn(self, last: bool = False) -> None:
        """A fresh child that has loaded the submission; raises LoadError if it cannot. `last`: as `restart`'s."""
        self._batch = None  # what the last child owed is gone with it
        with self._budget.charging():  # a restart the submission caused counts in its budget
            woken = self._life.fresh_child()
            if self._budget.clock is not self._life.pipes.clock:
                self._budget.attach(self._life.pipes.clock)  # a new cell: its clock counts from its first child
            limit, by_budget = self._budget.limit(self._loading.time_limit(self.timeout))
            load = None
            if woken:  # the copy set aside right after the file loaded: it needs no code
                load = self._loading.resume(self._life.pipes, secrets.randbits(62), min(limit, RESUME_LIMIT), last)
                if not isinstance(load, dict):
                    # It does not answer (the file broke the child's own reading, say): load it anew.
                    self._life.fresh_child(wake=False)
            if not isinstance(load, dict):
                cap = limit if by_budget else None
                load = self._loading.load(self._life.pipes, secrets.randbits(62), limit, cap, self._life.jail.prepare)
        if load is None:
            if by_budget and self._life.pipes.ended in ("cpu", "wall"):
                raise LoadError(f"loading the file used up the time budget of {self.budget:g} s")
            if self._life.pipes.ended == "wall":
                raise LoadError(f"loading the file did not end within {wall_cap(limit):g} s, and it was not computing: it waited")
            if self._life.pipes.ended == "busy":
                raise LoadError("the machine was too busy to load the file; grade it again")
            if self._life.pipes.exit:
                raise LoadError(f"loading the file crashed the process ({self._life.pipes.exit_text()})")
            if by_budget:
                raise LoadError(f"loading the file used up the time budget of {self.budget:g} s")
            raise LoadError(f"loading the file took longer than {limit:g} s")
        self._loading.check(load)
        self.load_output = load["output"]

    def restart(self, last: bool = False) -> None:
        """A fresh child (the state the last one built up is gone); strays are killed.

        `last`: the caller asks no fresh child after this one, so none is kept ready: a fork and
        its exit saved. One asked for all the same loads the file anew, as a file that starts a
        thread always does.
        """
        try:
            self._spawn(last)
        except LoadError:
            if not self.spent():
                raise  # else the next call says the budget is spent

    def start_over(self) -> None:
        """A full run from the start: a fresh child, and the whole budget again (what it used before is forgotten)."""
        self._budget.reset()
        self._budget.attach(self._life.pipes.clock)
        self.restart()

    # ------------------------------------------------------------ calls

    def call(self, *args: Any, **kwargs: Any) -> Any:
        answer = next(self.evaluate([(list(args), kwargs)]))
        if answer.output:
            sys.stdout.write(answer.output)
        return answer.result()

    def evaluate(self, calls: list[tuple[list, dict]], gather_until: float | None = None) -> Iterator[Answer]:
        """Answers to `calls`, made in order in the current child, as they arrive.

        A call that times out, crashes or runs past the budget yields that answer, and the
        rest of the batch is not made; the next call goes to a fresh child. So does an answer
        that is malformed: too long, or to a call that was never made.

        `gather_until`: the child gathers its answers (see Batch), all due by then: for calls no
        timeout is to be blamed on, whose answers are only compared (the memo's check).
        """
        if calls:
            self._batch = Batch(self._life.pipes, self._budget, self.timeout, self._respawn, gather_until)
            yield from self._batch.answers(calls)

    def settle(self, seconds: float) -> str:
        """After a batch whose reader stopped early: "none" if the child owed no answer (it made no call past the
        last one read); "dropped" if it did, and its other answers were taken and dropped (not charged), so this
        child goes on; "fresh" if that took longer than `seconds`, and a fresh child was started instead."""
        batch, self._batch = self._batch, None
        return "none" if batch is None else batch.discard_unread(seconds)

    def _respawn(self) -> None:
        try:
            self._spawn()
        except LoadError:
            pass  # the next call will report it

    # ------------------------------------------------------------ the budget

    @contextmanager
    def uncharged(self) -> Iterator[None]:
        """Calls the grader makes for its own sake (to check the memo): no budget, and not paid from it."""
        with self._budget.suspended():
            yield

    def used(self) -> float:
        """Seconds the submission has used so far: its loads and calls (CPU time, and each timeout's whole limit)."""
        return self._budget.used

    def spent(self) -> str | None:
        """Why no further call can be made: the submission used up its time budget (None while it has some)."""
        return self._budget.spent()

    # ------------------------------------------------------------ end

    def close(self) -> None:
        """End every process of this submission (and the jail, unless it was lent)."""
        life = getattr(self, "_life", None)
        if life is not None:
            life.close()

    def __enter__(self) -> SandboxedSubmission:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass
