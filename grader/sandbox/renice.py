"""The renice policy: a call that stalls yields the CPU to other submissions until it answers."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable

SLOW_CALL = 0.25  # seconds after which a call counts as stalled (it probably hangs), at least
SLOW_SHARE = 0.5  # ... and the share of its time limit it must have used
HUNG_FLOOR = 0.05  # seconds a call of a submission that timed out before has at least (see stalls_after)
SLOWEST_FACTOR = 10  # ... or this many times its slowest answered call, if that is more
YIELDING_NICE = 19  # the niceness of a stalled call's processes
AUTOGROUP_TRIES = 8  # writes of an autogroup's niceness the kernel refused for now (see _set_autogroup)
TICK = 0.02  # seconds between two looks at the machine while a stalled call is held (see Held)
CROWDED = 0.1  # ... held (stopped) once something waited for a CPU this share of that time
BUSY = 0.05  # ... those of its processes that ran this share of that time (a spinner, not one just woken)
IDLE = 0.5  # ... let go on once the CPUs idled this share of one CPU's time


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


class Held:
    """A stalled call's processes, stopped while the machine has other work, going on while a CPU idles.

    SCHED_IDLE alone gives them only the CPU nobody else wants, but that is every moment a grading
    worker waits for its jail's answer, thousands a second, each a switch to the spinner and back:
    two spinners at idle priority slowed the other files of the diverse class by a fifth. Each TICK
    the waiting worker looks: while they run, if anything waited for a CPU (Linux's pressure stall
    information, /proc/pressure/cpu) those that are running stop (one that sleeps needs no CPU to
    answer, and one that runs without getting the CPU costs nobody anything: only those that ran
    BUSY of the time since the last look); while stopped, once the CPUs idled half a CPU's time,
    they go on. A call that slept past its stall and woke to answer on a crowded machine was stopped
    there before it could, and timed out (CI, stop 28). On a quiet machine
    they run as before, and where the kernel has no pressure information they only yield. They are
    held by pidfd: a pid used again meanwhile is another process, never signalled. The diverse class
    of 300, its 10 hanging files held: 14.25-14.72 s against 15.02-15.20 s, the same verdicts.
    """

    def __init__(self, pids: list[int]) -> None:
        self.held: list[tuple[int, int]] = []  # (pid, pidfd)
        for pid in pids:
            try:
                self.held.append((pid, os.pidfd_open(pid)))
            except (OSError, AttributeError):
                continue  # gone already, or no pidfds here
        self.stopped: list[int] = []  # the pidfds stopped now
        self.ran = {pid: _cpu_seconds(pid) for pid, _ in self.held}  # at the last look
        self.at, self.waited, self.idled = time.monotonic(), _waited_for_cpu(), _idle_seconds()
        if self.waited is None or self.idled is None:
            self.release()  # nothing to look at: nothing held, no tick

    @property
    def holding(self) -> bool:
        return bool(self.held)

    def tick(self) -> None:
        now, waited, idled = time.monotonic(), _waited_for_cpu(), _idle_seconds()
        span = now - self.at
        if waited is None or idled is None or span <= 0:
            return
        ran, self.ran = self.ran, {pid: _cpu_seconds(pid) for pid, _ in self.held}
        if not self.stopped and waited - self.waited > CROWDED * span:
            # Only those running, and on a CPU a while since the last look: one that sleeps
            # (time.sleep) needs no CPU to answer when it wakes, one just woken may need a moment.
            busy = BUSY * span
            self.stopped = [fd for pid, fd in self.held if _running(pid) and self.ran[pid] - ran[pid] >= busy]
            self._send(self.stopped, signal.SIGSTOP)
        elif self.stopped and idled - self.idled >= IDLE * span:
            self._send(self.stopped, signal.SIGCONT)
            self.stopped = []
        self.at, self.waited, self.idled = now, waited, idled

    def release(self) -> None:
        self._send(self.stopped, signal.SIGCONT)
        self.stopped = []
        for _, fd in self.held:
            os.close(fd)
        self.held = []

    @staticmethod
    def _send(fds: list[int], number: int) -> None:
        for fd in fds:
            try:
                signal.pidfd_send_signal(fd, number)
            except OSError:
                pass  # it ended (a pid used again since is another process: its pidfd is not ours)


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] == b"R"
    except (OSError, IndexError):
        return False


def _cpu_seconds(pid: int) -> float:
    """Seconds the process has been on a CPU (/proc/PID/schedstat, to the nanosecond; else its stat's ticks)."""
    try:
        with open(f"/proc/{pid}/schedstat", "rb") as f:
            return int(f.read().split()[0]) / 1e9
    except (OSError, IndexError, ValueError):
        pass
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICKS  # utime, stime: the stat's 14th and 15th
    except (OSError, IndexError, ValueError):
        return 0.0


def _waited_for_cpu() -> float | None:
    """Seconds that some task has waited for a CPU since boot (PSI's "some" total), or None without PSI."""
    try:
        with open("/proc/pressure/cpu", "rb") as f:
            line = f.readline()
        return int(line.rsplit(b"total=", 1)[1]) / 1e6
    except (OSError, IndexError, ValueError):
        return None


_TICKS = os.sysconf("SC_CLK_TCK")


def _idle_seconds() -> float | None:
    """Seconds the CPUs have idled since boot, all added up (/proc/stat)."""
    try:
        with open("/proc/stat", "rb") as f:
            fields = f.readline().split()
        return (int(fields[4]) + int(fields[5])) / _TICKS
    except (OSError, IndexError, ValueError):
        return None


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
        self.held: Held | None = None  # while stalled: its processes, stopped while others need the CPU

    def took(self, seconds: float) -> None:
        """An answer said how long its call took (the child says so of calls of TOOK_FROM or more)."""
        self.slowest = max(self.slowest, seconds)

    def after(self, limit: float) -> float:
        """Seconds after which the next call, with this time limit, counts as stalled."""
        return stalls_after(limit, self.hung, self.slowest)

    def stalled(self) -> None:
        processes = self.processes()
        self.had = yield_cpu(processes)
        held = Held(processes)
        self.held = held if held.holding else None  # none left, or no pressure information: it only yields
        if self.on_slow is not None:
            hook, self.on_slow = self.on_slow, None
            hook()

    def tick(self) -> None:
        """A look at the machine while the stalled call is waited for (every TICK)."""
        if self.held is not None:
            self.held.tick()

    def answered(self) -> None:
        if self.held is not None:
            held, self.held = self.held, None
            held.release()
        if self.had is not None:
            had, self.had = self.had, None
            restore(self.processes(), had)
