"""A submission's cell and its children: the cell opened for it, a fresh child for each load, all of it ended at the close."""

from __future__ import annotations

import math

from grader.core.submission import LoadError
from grader.sandbox.cgroups import CellCgroup
from grader.sandbox.jail import Cell, Jail, JailError, Limits
from grader.sandbox.pipes import ChildPipes
from grader.sandbox.timing import Pace
from grader.sandbox.wire import ProtocolError

LOAD_TIMEOUT = 10.0  # seconds the cell's init may take to kill the last child and fork the next
LOADED_RESPAWN = 0.5  # the same for an init that is the submission as loaded (it may not listen): then a new cell


class CgroupClock:
    """The cell's CPU time and stall from its cgroup: file reads."""

    def __init__(self, cgroup: CellCgroup) -> None:
        self.cgroup = cgroup

    def read(self) -> tuple[float, float]:
        return self.cgroup.cpu_seconds() or 0.0, self.cgroup.stall_seconds()


class CellClock:
    """The cell's CPU time and stall as its init counts them (no cgroup here): a round trip."""

    def __init__(self, pipes: ChildPipes) -> None:
        self.pipes = pipes

    def read(self) -> tuple[float, float]:
        try:
            self.pipes.send(self.pipes.opened.ctl_w, {"op": "usage"})
            event = self.pipes.control(lambda e: e.get("event") == "usage", 2.0)
        except (OSError, ProtocolError):
            event = None
        cpu, stall = (event.get("cpu"), event.get("stall")) if event is not None else (None, None)
        if _seconds(cpu) and _seconds(stall):
            return float(cpu), float(stall)  # type: ignore[arg-type]
        # A cell that cannot say has used everything: its call ends as a timeout, never hangs the grader.
        return math.inf, 0.0


def _seconds(value: object) -> bool:
    return type(value) in (int, float) and math.isfinite(value) and value >= 0  # type: ignore[arg-type]


class Lifecycle:
    """Open one submission's cell, start and restart its child, and end all of it, in a jail of its own or one lent."""

    def __init__(self, jail: Jail | None, limits: Limits, mode: str) -> None:
        self.own_jail = jail is None
        self.jail = jail or Jail(limits, mode)
        self.pace = Pace(self.jail.limits.after_timeout)
        self.pipes = ChildPipes(self.jail, self.pace)
        self.cell: Cell | None = None
        self.closed = False

    def fresh_child(self, wake: bool = True) -> bool:
        """Kill whatever the submission runs, and have a new child wait; LoadError if it cannot.

        True: the new child is the copy of the submission as loaded that the last one set aside,
        woken: it waits for "resume", not for the code.
        """
        for _ in range(3):  # a cell left alone is closed on one turn and opened on the next; a failure is tried once more
            try:
                if self.cell is not None and self.jail.cell is self.cell and self.cell.alone:
                    self.jail.close_cell(next_one=True)  # its init answers no respawn: a new cell loads the file
                if self.cell is None or self.jail.cell is not self.cell or not self.jail.alive():
                    self.cell = self.pipes.cell = self.jail.open_cell()
                    cgroup = self.cell.cgroup
                    self.pipes.clock = (
                        CgroupClock(cgroup) if cgroup is not None and "usage" in cgroup.roles else CellClock(self.pipes)
                    )
                    child, woken = self.cell.first_child, False
                else:
                    self.pipes.send(self.cell.ctl_w, {"op": "respawn", "wake": wake})
                    event = self.pipes.control(
                        lambda e: e.get("event") == "alone" or e.get("event") == "spawned" and type(e.get("pid")) is int,
                        LOADED_RESPAWN if self.cell.loads else LOAD_TIMEOUT,
                    )
                    if event is None and not self.cell.loads:
                        raise JailError("the cell did not fork a child")
                    if event is None or event.get("event") == "alone":
                        self.cell.alone = True  # its init is the submission and has no fresh child (or did not answer)
                        continue  # closed and opened anew on the next turn
                    child, woken = event["pid"], event.get("woken") is True
                # What a dead child left half-written is dropped: the new one writes nothing before it is asked.
                self.pipes.forget_answers()
                self.pipes.reset(child)
                return woken
            except (OSError, ProtocolError):
                # The cell or its jail is gone (the submission may have brought it down): a new one, once.
                self.cell = None
                self.jail.close()
        raise LoadError("the sandbox did not start")

    def close(self) -> None:
        """End every process of this submission (and the jail, unless it was lent)."""
        if self.closed:
            return  # a lent jail may serve another submission by now: leave it alone
        self.closed = True
        if self.own_jail:
            self.jail.close()
        elif self.cell is not None and self.jail.cell is self.cell:
            self.jail.close_cell(next_one=True)  # a lent jail serves another submission next
        self.cell = None
