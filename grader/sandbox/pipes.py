"""The grader's end of a cell's pipes: control events from its init, answer lines from its child."""

from __future__ import annotations

import os
import select
import time
from collections.abc import Callable

from grader.sandbox import wire
from grader.sandbox.jail import Cell, Jail
from grader.sandbox.timing import CallTimer, Clock, Pace
from grader.sandbox.wire import CONTROL_LIMIT, READ_SIZE


class ChildPipes:
    """What the grader reads from the current child: its answers (bounded) and how it ended, never waiting past a limit."""

    def __init__(self, jail: Jail, pace: Pace) -> None:
        self.jail = jail
        self.cell: Cell | None = None  # the cell whose pipes these are, once it is open
        self.pace = pace
        self.clock: Clock | None = None  # the cell's CPU clock, once it is open
        self.answers = wire.AnswerLines()  # read from the answer pipe, not yet taken
        self.child: int | None = None  # the child's pid, as the cell sees it
        self.exit: dict | None = None  # how the child ended, once the cell said so
        self.ended = ""  # why the last wait ended without an answer: "cpu", "wall", "exit" or "" (an answer came)
        self.cpu_used = 0.0  # CPU seconds the last call that ran past its limit had used ...
        self.own_used = 0.0  # ... and its own time (see timing.CallTimer)

    @property
    def opened(self) -> Cell:
        if self.cell is None:
            raise OSError("no cell is open")
        return self.cell

    def send(self, fd: int, message: dict, deadline: float | None = None) -> None:
        wire.send(fd, message, time.monotonic() + 2.0 if deadline is None else deadline)

    def request(self, message: dict, deadline: float) -> None:
        """Send the child a request (wire.request): its code, or a batch of calls."""
        wire.send_request(self.opened.req_w, message, deadline)

    def reset(self, child: int) -> None:
        """A new child: nothing the last one wrote is read as its own."""
        self.child, self.exit = child, None

    def forget_answers(self) -> None:
        """Drop what a dead child left in the answer pipe: a bounded amount, in case something still writes."""
        for _ in range(1024):
            if not select.select([self.opened.resp_r], [], [], 0)[0] or not os.read(self.opened.resp_r, READ_SIZE):
                break
        self.answers.clear()

    def control(self, wanted: Callable[[dict], bool], timeout: float) -> dict | None:
        """Read control events until one is `wanted`; remembers the child's exit, and a cell left alone, on the way."""
        return self.opened.event(wanted, timeout, self._note_event)

    def _note_event(self, event: dict) -> None:
        if event.get("event") == "alone" and self.cell is not None:
            self.cell.alone = True
        if event.get("event") == "exit" and event.get("pid") == self.child:
            self.exit = event.get("status") if isinstance(event.get("status"), dict) else {}

    def exit_text(self) -> str:
        status = self.exit or {}
        if "signal" in status:
            return f"killed by {status.get('name')}: {status.get('text')}"[:200]
        if "exit" in status:
            return f"exit status {status['exit']}"[:200]
        return str(status.get("text", "it ended"))[:200]

    def read_answer(self, seq: int, limit: float, cap: float | None = None) -> bytes | None:
        """The next answer line of request `seq` (after "SEQ "), or None if the call ran past `limit` seconds of CPU
        time, or past `cap` seconds of its own time (timing.wall_cap's by default), or the child died: `ended` says which."""
        self.ended = ""
        payload = self.answers.next(seq)
        if payload is not None:
            return payload
        now = time.monotonic()
        timer = CallTimer(self.clock, limit, now, cap)
        resp_r, ctl_r = self.opened.resp_r, self.opened.ctl_r
        look = timer.next_look()
        while True:
            payload = self.answers.next(seq)
            if payload is not None:
                return payload
            now = time.monotonic()
            if now >= look:
                self.ended = timer.over(now) or ""
                if self.ended:
                    self.cpu_used, self.own_used = timer.cpu_used, timer.own
                    return None
                look = timer.next_look()
            ready = select.select([resp_r, ctl_r], [], [], max(look - now, 0.0))[0]
            if not ready:
                continue
            if resp_r in ready:
                # Read only while no whole line is buffered (AnswerLines keeps what it holds bounded).
                part = os.read(resp_r, READ_SIZE)
                if not part:
                    self.ended = "exit"
                    return None
                self.answers.feed(part)
                continue
            if ctl_r in ready:
                event = wire.read_message(ctl_r, CONTROL_LIMIT, time.monotonic() + 2.0)
                if event is None:
                    self.exit = self.exit or {"text": "the sandbox ended"}
                    self.ended = "exit"
                    return None
                self._note_event(event)
                if self.exit is not None:
                    # The child is gone; an answer it wrote before dying may still be waiting.
                    if select.select([resp_r], [], [], 0)[0] or self.answers.has_line():
                        continue
                    self.ended = "exit"
                    return None
