"""A batch of calls: one request to the child, its answers taken as they arrive, each within its time limit."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterator

from grader.sandbox.answer import Answer, answer_from
from grader.sandbox.budget import Budget
from grader.sandbox.pipes import ChildPipes
from grader.sandbox.timing import HUNG_FLOOR, wall_cap
from grader.sandbox.wire import ProtocolError


class Batch:
    """Calls made in order in the current child. One that times out, crashes, runs past the budget or
    answers malformed yields that answer and ends the batch; `respawn` then gives the next call a fresh child."""

    def __init__(
        self, pipes: ChildPipes, budget: Budget, timeout: float, respawn: Callable[[], None], gather_until: float | None = None
    ) -> None:
        self.pipes, self.budget, self.timeout, self.respawn = pipes, budget, timeout, respawn
        # Gathered (wire.GATHER_BYTES): the child writes its answers a block at a time, so no wait
        # is one call's; every answer is due by this time (time.monotonic()), and a late one is a timeout.
        self.gather_until = gather_until
        # Every request has a number nobody can guess, so an answer written ahead is refused.
        self.seq = secrets.randbits(62)
        self.unread = 0  # answers the child owes that nobody has read yet (see discard_unread)

    def answers(self, calls: list[tuple[list, dict]]) -> Iterator[Answer]:
        self.unread = len(calls)
        for answer in self._answers(calls):
            self.unread = max(self.unread - 1, 0)  # a failure set it to 0: the child it was owed by is gone
            yield answer

    def discard_unread(self, seconds: float) -> str:
        """Take and drop the answers a reader left unread, not charged, so the same child can go on.

        "none": nothing was owed (the child made no call past the last answer read); "dropped":
        they were taken and dropped; "fresh": they took longer than `seconds` (or the child
        failed), and a fresh child was started instead.
        """
        if not self.unread:
            return "none"
        deadline = time.monotonic() + seconds
        try:
            while self.unread:
                payload = self.pipes.answers.next(self.seq)
                if payload is None:
                    payload = self.pipes.read_answer(self.seq, max(deadline - time.monotonic(), 0.0))
                if payload is None:
                    break
                self.unread -= 1
        except ProtocolError:
            pass
        if not self.unread:
            return "dropped"
        self.unread = 0
        self.respawn()
        return "fresh"

    def _answers(self, calls: list[tuple[list, dict]]) -> Iterator[Answer]:
        if self.budget.spent():
            self.unread = 0  # nothing was sent
            yield Answer(False, kind="not_run", error=self.budget.text())
            return
        limit, by_budget = self.budget.limit(self.pipes.pace.limit(self.timeout))
        started = time.monotonic()
        try:
            with self.budget.charging():
                # Writing the request is part of the first call: a child that stops reading hangs it.
                request = {"seq": self.seq, "calls": calls}
                if self.gather_until is not None:
                    request["gather"] = True
                self.pipes.request(request, started + (limit if by_budget else wall_cap(limit)))
        except TimeoutError:
            self.pipes.ended, self.pipes.cpu_used, self.pipes.own_used = "wall", 0.0, wall_cap(limit)
            yield self._late(by_budget, limit)
            return
        except OSError:
            yield self._crashed()
            return
        for done in range(len(calls)):
            try:
                # Fast path: an answer already read (the child runs ahead of us in a batch).
                payload = self.pipes.answers.next(self.seq)
                if payload is None:
                    if self.gather_until is not None:
                        limit = max(self.gather_until - time.monotonic(), 0.0)
                    elif done:
                        limit, by_budget = self.budget.limit(self.pipes.pace.limit(self.timeout))
                    with self.budget.charging():
                        # What is left of the budget caps its own time too: a sleep spends it as well.
                        payload = self.pipes.read_answer(self.seq, limit, limit if by_budget else None)
                    if payload is None:
                        yield self._crashed() if self.pipes.ended == "exit" else self._late(by_budget, limit)
                        return
                answer = answer_from(payload)
                if answer.took:
                    self.pipes.pace.took(answer.took)
            except ProtocolError as exc:
                yield self._failed("crash", f"the submission's process sent a malformed answer ({exc})")
                return
            yield answer

    def _late(self, by_budget: bool, limit: float | None = None) -> Answer:
        """The call ran past its limit: a timeout, or not run if the budget is what set the limit."""
        limit = self.timeout if limit is None else limit
        if by_budget:
            return self._failed("not_run", self.budget.text())
        if self.pipes.ended == "busy":
            return self._failed("not_run", BUSY)
        # Charged the whole time limit, even when it was cut short for having hung before: each timeout
        # costs the budget the same, so a file that hangs runs out of it as soon as it did alone.
        self.budget.timed_out(self.timeout, self.pipes.own_used)
        self.pipes.pace.hung = True  # its next calls get less (see timing.Pace.limit)
        return self._failed("timeout", timeout_text(self.pipes.ended, limit, self.timeout, self.pipes.pace.floor))

    def _crashed(self) -> Answer:
        """The child ended during the call (or stopped answering)."""
        if self.pipes.exit is None:
            self.pipes.control(lambda e: False, 0.2)
        how = self.pipes.exit_text() if self.pipes.exit else "it stopped answering"
        return self._failed("crash", f"the submission's process ended during the call ({how})")

    def _failed(self, kind: str, message: str) -> Answer:
        self.unread = 0
        self.respawn()
        return Answer(False, kind=kind, error=message)


BUSY = "not run: this machine was too busy to give the call its time; grade the submission again"


def timeout_text(ended: str, limit: float, timeout: float, floor: float = HUNG_FLOOR) -> str:
    """What a timeout's message says: which limit the call ran past."""
    if ended == "wall":
        return (
            f"the call did not return within {wall_cap(limit):g} s, not counting the time it waited for a CPU, "
            f"and was not computing all that time: it waited (sleep, a lock, input)"
        )
    if limit < timeout:
        return (
            f"the call took longer than {limit:.2g} s (after a timeout, a call gets ten times this submission's slowest "
            f"answer, at least {floor:g} s, at most {timeout:g} s)"
        )
    return f"the call took longer than {limit:g} s"
