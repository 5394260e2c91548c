"""The renice policy: a call that stalls yields the CPU to other submissions until it answers."""

from __future__ import annotations

import os
from collections.abc import Callable

SLOW_CALL = 0.25  # seconds after which a call counts as stalled (it probably hangs)
YIELDING_NICE = 19  # the niceness of a stalled call's processes


def renice(pids: list[int], nice: int) -> bool:
    """Set the niceness of `pids`; True if any changed. Lowering it again needs root: else it stays.

    Yielding (a positive `nice`) also moves them to SCHED_IDLE: a nice process still takes the
    idle moments between a worker's calls and its answers, an idle-class one gives them up.
    """
    changed = False
    policy = os.SCHED_IDLE if nice > 0 else os.SCHED_OTHER
    for pid in pids:
        try:
            os.sched_setscheduler(pid, policy, os.sched_param(0))
        except OSError:
            pass
        try:
            os.setpriority(os.PRIO_PROCESS, pid, nice)
            changed = True
        except OSError:
            pass
    return changed


class SlowCalls:
    """A call slower than SLOW_CALL probably hangs: while it spins, its processes get only the CPU nobody else wants.

    They get their priority back once it answers; `on_slow` is called the first time only
    (the grader can start other work meanwhile).
    """

    def __init__(self, processes: Callable[[], list[int]]) -> None:
        self.processes = processes  # the submission's processes, found when needed
        self.on_slow: Callable[[], None] | None = None
        self.yielded = False

    def stalled(self) -> None:
        self.yielded = renice(self.processes(), YIELDING_NICE)
        if self.on_slow is not None:
            hook, self.on_slow = self.on_slow, None
            hook()

    def answered(self) -> None:
        if self.yielded:
            self.yielded = False
            renice(self.processes(), 0)
