"""A batch of calls: one request to the child, its answers taken as they arrive, each within its time limit."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterator

from grader.sandbox import wire
from grader.sandbox.answer import Answer, answer_from
from grader.sandbox.budget import Budget
from grader.sandbox.pipes import ChildPipes
from grader.sandbox.wire import ProtocolError


class Batch:
    """Calls made in order in the current child. One that times out, crashes, runs past the budget or
    answers malformed yields that answer and ends the batch; `respawn` then gives the next call a fresh child.

    With `expect` (the key each call's answer is expected to have, None for any), the child stops
    after the first answer with another key: the calls after it are sent again only if the reader
    asks for their answers (see wire.answer_key).
    """

    def __init__(self, pipes: ChildPipes, budget: Budget, timeout: float, respawn: Callable[[], None]) -> None:
        self.pipes, self.budget, self.timeout, self.respawn = pipes, budget, timeout, respawn
        self.seq = 0  # the request in flight; each has a number nobody can guess, so an answer written ahead is refused
        self.unread = 0  # answers the child owes that nobody has read yet (see discard_unread)

    def answers(self, calls: list[tuple[list, dict]], expect: list[str | None] | None = None) -> Iterator[Answer]:
        self.unread = len(calls)
        for answer in self._answers(calls, expect):
            self.unread = max(self.unread - 1, 0)  # a failure set it to 0: the child it was owed by is gone
            yield answer

    def discard_unread(self, seconds: float) -> str:
        """What became of the answers a reader left unread, so that this child can go on.

        "stopped": there were none, or the child had stopped where the reader did (it made no call
        the reader did not see); "dropped": they were taken and dropped, not charged; "fresh": they
        took longer than `seconds` (or the child failed), and a fresh child was started instead.
        """
        deadline = time.monotonic() + seconds
        dropped = 0
        try:
            while self.unread:
                payload = self.pipes.answers.next(self.seq)
                if payload is None:
                    payload = self.pipes.read_answer(self.seq, max(deadline - time.monotonic(), 0.0))
                if payload is None:
                    break
                if payload == wire.STOPPED:
                    self.unread = 0
                    break
                self.unread -= 1
                dropped += 1
        except ProtocolError:
            pass
        if not self.unread:
            return "dropped" if dropped else "stopped"
        self.unread = 0
        self.respawn()
        return "fresh"

    def _answers(self, calls: list[tuple[list, dict]], expect: list[str | None] | None) -> Iterator[Answer]:
        if self.budget.spent():
            self.unread = 0  # nothing was sent
            yield Answer(False, kind="not_run", error=self.budget.text())
            return
        at = 0  # the first call of the request in flight
        while True:
            request: dict = {"seq": secrets.randbits(62), "calls": calls[at:]}
            self.seq = request["seq"]
            if expect:
                request["expect"] = expect[at:]
            limit, by_budget = self.budget.limit(self.timeout)
            started = time.monotonic()
            try:
                with self.budget.charging():
                    # Writing the request is part of the first call: a child that stops reading hangs it.
                    self.pipes.send(self.pipes.jail.req_w, request, deadline=started + limit)
            except TimeoutError:
                yield self._late(by_budget)
                return
            except OSError:
                yield self._crashed()
                return
            first = started + limit  # the first answer's deadline, which the request's writing used a part of
            for done in range(at, len(calls)):
                try:
                    # Fast path: an answer already read (the child runs ahead of us in a batch).
                    payload = self.pipes.answers.next(self.seq)
                    if payload is None:
                        if done == at:
                            limit = max(first - time.monotonic(), 0.0)
                        else:
                            limit, by_budget = self.budget.limit(self.timeout)
                        with self.budget.charging():
                            payload = self.pipes.read_answer(self.seq, limit)
                        if payload is None:
                            yield self._crashed() if self.pipes.exit is not None else self._late(by_budget)
                            return
                    if payload == wire.STOPPED:
                        if done == at:
                            raise ProtocolError("a request stopped before its first answer")
                        # The child stopped where it did not get the answer it was told to expect, but
                        # the reader wants more: the rest goes again, to the same child, in order.
                        at = done
                        break
                    answer = answer_from(payload)
                except ProtocolError as exc:
                    yield self._failed("crash", f"the submission's process sent a malformed answer ({exc})")
                    return
                yield answer
            else:
                return

    def _late(self, by_budget: bool) -> Answer:
        if by_budget:
            return self._failed("not_run", self.budget.text())
        return self._failed("timeout", f"the call took longer than {self.timeout:g} s")

    def _crashed(self) -> Answer:
        if self.pipes.exit is None:
            self.pipes.control(lambda e: False, 0.2)
        how = self.pipes.exit_text() if self.pipes.exit else "it stopped answering"
        return self._failed("crash", f"the submission's process ended during the call ({how})")

    def _failed(self, kind: str, message: str) -> Answer:
        self.unread = 0
        self.respawn()
        return Answer(False, kind=kind, error=message)
