"""The renice policy: a call that stalls yields the CPU to other submissions until it answers."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

SLOW_CALL = 0.25  # seconds after which a call counts as stalled (it probably hangs), at least
SLOW_SHARE = 0.5  # ... and the share of its time limit it must have used
HUNG_FLOOR = 0.05  # seconds a call of a submission that timed out before has at least (see stalls_after)
SLOWEST_FACTOR = 10  # ... or this many times its slowest answered call, if that is more
YIELDING_NICE = 19  # the niceness of a stalled call's processes
AUTOGROUP_TRIES = 8  # writes of an autogroup's niceness the kernel refused for now (see _set_autogroup)


Priority = tuple[int, int, int]  # a process's scheduling policy, its static priority and niceness


def priority_of(pids: list[int]) -> Priority | None:
    """The priority of the first of `pids` still running (they inherited it from the jail server)."""
    for pid in pids:
        try:
            return os.sched_getscheduler(pid), os.sched_getparam(pid).sched_priority, os.getpriority(os.PRIO_PROCESS, pid)
        except OSError:
            continue
    return None


def yield_cpu(pids: list[int]) -> Priority | None:
    """Give `pids` and their sessions' autogroups (`renice_groups`) the lowest priority there is.

    Returns the priority they had, for `restore`, or None if nothing changed. They move to
    SCHED_IDLE too: a nice process still takes the idle moments between a worker's calls and its
    answers, an idle-class one gives them up.
    """
    had = priority_of(pids)
    changed = renice_groups(pids, YIELDING_NICE)
    changed |= _set(pids, (os.SCHED_IDLE, 0, YIELDING_NICE))
    return had if changed else None


def restore(pids: list[int], had: Priority) -> None:
    """Give `pids` back the priority they `had` (never more: the grader may run at a low one itself).

    Lowering a process's niceness again needs root, else it stays; lowering its autogroup's does
    not, and with autogroups on, a process alone in its session then competes as before.
    """
    renice_groups(pids, 0)  # a new autogroup starts at 0, whatever its creator's niceness
    _set(pids, had)


def _set(pids: list[int], priority: Priority) -> bool:
    policy, static, nice = priority
    changed = False
    for pid in pids:
        try:
            os.sched_setscheduler(pid, policy, os.sched_param(static))
        except OSError:
            pass
        try:
            os.setpriority(os.PRIO_PROCESS, pid, nice)
            changed = True
        except OSError:
            pass
    return changed


def renice_groups(pids: list[int], nice: int) -> bool:
    """Set the niceness of the autogroups `pids` belong to, but never of our own; True if any changed.

    With autogroups on (Linux's default on desktops and many servers), each session is one
    scheduling group, and the CPU is first shared fairly between groups, whatever the niceness or
    policy of the processes inside. A submission runs in a session of its own, so without this a
    spinning call still took as much CPU as the whole grader: 2 spinners beside 2 busy workers took
    two thirds of the machine, SCHED_IDLE and nice 19 or not.
    """
    # Ours may be the kernel's default group, whose file reads empty (a process whose session
    # began before any setsid, as in some containers): theirs, made by their setsid, still counts.
    changed, seen, ours = False, {_autogroup("self")}, set(pids)
    for pid in pids:
        group = _autogroup(str(pid))
        if group is None or group in seen or _session(pid) not in ours:
            continue  # a group a process of theirs did not start (by setsid) is not theirs to lose
        seen.add(group)
        changed |= _set_autogroup(pid, nice)
    return changed


def _session(pid: int) -> int | None:
    try:
        return os.getsid(pid)
    except OSError:
        return None


def _autogroup(pid: str) -> str | None:
    try:
        with open(f"/proc/{pid}/autogroup") as f:
            return f.read().split()[0]  # "/autogroup-123 nice 0"
    except (OSError, IndexError):
        return None


def _set_autogroup(pid: int, nice: int) -> bool:
    # Without CAP_SYS_ADMIN the kernel takes one such write per 0.1 s in all (EAGAIN): try again
    # a little, so that a group given back its priority does not stay at 19.
    for _ in range(AUTOGROUP_TRIES):
        try:
            with open(f"/proc/{pid}/autogroup", "w") as f:
                f.write(str(nice))
            return True
        except BlockingIOError:
            time.sleep(0.025)
        except OSError:
            return False
    return False


def stalls_after(limit: float, hung: bool = False, slowest: float = 0.0) -> float:
    """Seconds after which a call with this time limit counts as stalled.

    Until then it has its full share of the CPU, so a correct call that needs at most half its
    time limit is graded alike on a quiet machine and on a busy one. Past that, it most likely
    hangs: it gets only the CPU nobody else wants, and a spinning submission stops slowing the
    others down.

    A submission that `hung` before (a call of it timed out) will most likely hang again: its
    calls count as stalled after ten times the `slowest` call it has answered (as the child timed
    it), at least HUNG_FLOOR, at most as above. Each of its hangs then costs the others 0.05 s of
    a CPU where it cost 0.25 s (a flat SLOW_CALL before): the diverse class of 300, ten of them
    hanging, took 22.3 s instead of 24.2 s. A correct call ten times slower than any it answered
    before is what this can make slower on a busy machine; the time limit stays wall time.
    """
    normal = max(SLOW_CALL, SLOW_SHARE * limit)
    if not hung:
        return normal
    return min(normal, max(HUNG_FLOOR, SLOWEST_FACTOR * slowest))


class SlowCalls:
    """A call slower than `stalls_after` says probably hangs: while it spins, its processes get only the CPU nobody else wants.

    They get their priority back once it answers; `on_slow` is called the first time only
    (the grader can start other work meanwhile).
    """

    def __init__(self, processes: Callable[[], list[int]]) -> None:
        self.processes = processes  # the submission's processes, found when needed
        self.on_slow: Callable[[], None] | None = None
        self.had: Priority | None = None  # what the processes had before they yielded
        self.hung = False  # a call of this submission timed out (see stalls_after)
        self.slowest = 0.0  # seconds its slowest answered call took, as its children said (see stalls_after)

    def took(self, seconds: float) -> None:
        """An answer said how long its call took (the child says so of calls of TOOK_FROM or more)."""
        self.slowest = max(self.slowest, seconds)

    def after(self, limit: float) -> float:
        """Seconds after which the next call, with this time limit, counts as stalled."""
        return stalls_after(limit, self.hung, self.slowest)

    def stalled(self) -> None:
        self.had = yield_cpu(self.processes())
        if self.on_slow is not None:
            hook, self.on_slow = self.on_slow, None
            hook()

    def answered(self) -> None:
        if self.had is not None:
            had, self.had = self.had, None
            restore(self.processes(), had)
