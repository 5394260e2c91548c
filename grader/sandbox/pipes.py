"""The grader's end of a jail's pipes: control events from the fork server, answer lines from the child."""

from __future__ import annotations

import os
import select
import time
from collections.abc import Callable

from grader.sandbox import wire
from grader.sandbox.jail import Jail
from grader.sandbox.renice import TICK, SlowCalls
from grader.sandbox.wire import CONTROL_LIMIT, READ_SIZE


class ChildPipes:
    """What the grader reads from the current child: its answers (bounded) and how it ended, never waiting past a deadline."""

    def __init__(self, jail: Jail, slow: SlowCalls) -> None:
        self.jail = jail
        self.slow = slow
        self.answers = wire.AnswerLines()  # read from the answer pipe, not yet taken
        self.child: int | None = None  # the child's pid, as the fork server sees it
        self.exit: dict | None = None  # how the child ended, once the server said so

    def send(self, fd: int, message: dict, deadline: float | None = None) -> None:
        wire.send(fd, message, time.monotonic() + 2.0 if deadline is None else deadline)

    def reset(self, child: int) -> None:
        """A new child: nothing the last one wrote is read as its own."""
        self.child, self.exit = child, None

    def forget_answers(self) -> None:
        """Drop what a dead child left in the answer pipe: a bounded amount, in case something still writes."""
        for _ in range(1024):
            if not select.select([self.jail.resp_r], [], [], 0)[0] or not os.read(self.jail.resp_r, READ_SIZE):
                break
        self.answers.clear()

    def control(self, wanted: Callable[[dict], bool], timeout: float) -> dict | None:
        """Read control events until one is `wanted`; remembers the child's exit on the way."""
        deadline = time.monotonic() + timeout
        while True:
            event = wire.read_message(self.jail.ctl_r, CONTROL_LIMIT, deadline)
            if event is None:
                return None
            self._note_exit(event)
            if wanted(event):
                return event

    def _note_exit(self, event: dict) -> None:
        if event.get("event") == "exit" and event.get("pid") == self.child:
            self.exit = event.get("status") if isinstance(event.get("status"), dict) else {}

    def exit_text(self) -> str:
        status = self.exit or {}
        if "signal" in status:
            return f"killed by {status.get('name')}: {status.get('text')}"[:200]
        if "exit" in status:
            return f"exit status {status['exit']}"[:200]
        return str(status.get("text", "it ended"))[:200]

    def read_answer(self, seq: int, timeout: float) -> bytes | None:
        """The next answer line of request `seq` (after "SEQ "), or None if it timed out or the child died."""
        deadline = time.monotonic() + timeout
        try:
            return self._wait_answer(seq, deadline, time.monotonic() + self.slow.after(timeout))
        finally:
            self.slow.answered()

    def _wait_answer(self, seq: int, deadline: float, slow_at: float | None) -> bytes | None:
        resp_r, ctl_r = self.jail.resp_r, self.jail.ctl_r
        while True:
            payload = self.answers.next(seq)
            if payload is not None:
                return payload
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            if slow_at is not None:
                left = min(left, max(slow_at - time.monotonic(), 0.0))
            elif self.slow.held is not None:
                left = min(left, TICK)
            ready = select.select([resp_r, ctl_r], [], [], left)[0]
            if not ready and slow_at is not None and time.monotonic() >= slow_at:
                slow_at = None
                self.slow.stalled()
                continue
            if not ready and self.slow.held is not None:
                self.slow.tick()
                continue
            if resp_r in ready:
                # Read only while no whole line is buffered (AnswerLines keeps what it holds bounded).
                part = os.read(resp_r, READ_SIZE)
                if not part:
                    return None
                self.answers.feed(part)
                continue
            if ctl_r in ready:
                event = wire.read_message(ctl_r, CONTROL_LIMIT, deadline)
                if event is None:
                    self.exit = self.exit or {"text": "the sandbox ended"}
                    return None
                self._note_exit(event)
                if self.exit is not None:
                    # The child is gone; an answer it wrote before dying may still be waiting.
                    if select.select([resp_r], [], [], 0)[0] or self.answers.has_line():
                        continue
                    return None
