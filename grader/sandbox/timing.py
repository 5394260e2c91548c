"""How long a call may take: CPU time, which a neighbour's load cannot change, and a cap on the time it waits.

A call's time limit counts the CPU time of every process of the submission (its cell's cgroup,
or its init's count where there is no cgroup). On a busy machine a correct call gets the CPU
later, not less of it, so its verdict is the one it gets alone. A call that sleeps or blocks
uses no CPU: it is capped on its own time, the wall-clock time less the time its processes
waited for a CPU that others held (the kernel counts that stall: the cgroup's cpu.pressure, or
each process's run delay in /proc/PID/schedstat). So a neighbour's load moves neither cap. Only
where the machine is too busy to give a call its time at all (ABSOLUTE) does the grader give up
on it, and then the test is `not_run`, to be graded again, never a verdict.
"""

from __future__ import annotations

from typing import Protocol

from grader.core.exercise import AFTER_TIMEOUT

WALL_FACTOR = 3.0  # a call's own time (running or waiting, not stalled): this many times its CPU limit ...
WALL_FLOOR = 1.0  # ... and at least this many seconds more than it
ABSOLUTE = 10.0  # the grader gives up on a call after this many times its own-time cap of wall-clock time
HUNG_FLOOR = AFTER_TIMEOUT  # CPU seconds a call of a submission that timed out before has at least, unless its exercise says
SLOWEST_FACTOR = 10  # ... or this many times its slowest answered call, if that is more
LAZY_GRACE = 0.05  # seconds a call runs before its clock is first read (see CallTimer)


class Clock(Protocol):
    """What every process of a submission has used so far (the dead ones too), read by the trusted side."""

    def read(self) -> tuple[float, float]:
        """(CPU seconds, seconds some process of it waited for a CPU another held)."""
        ...


def wall_cap(limit: float) -> float:
    """The most own time (wall-clock time less the time stalled for a CPU) a call with this CPU limit may take."""
    return max(WALL_FACTOR * limit, limit + WALL_FLOOR)


class Pace:
    """What a submission's calls may take, from what its calls took before (all in CPU time)."""

    def __init__(self, floor: float = HUNG_FLOOR) -> None:
        self.floor = floor  # the exercise's `after_timeout` (exercise.toml's [limits])
        self.hung = False  # a call of this submission timed out
        self.slowest = 0.0  # CPU seconds its slowest answered call took, as its child said

    def took(self, seconds: float) -> None:
        """An answer said how much CPU its call took (the child says so of calls of TOOK_FROM or more)."""
        self.slowest = max(self.slowest, seconds)

    def limit(self, timeout: float) -> float:
        """CPU seconds the next call may use.

        A submission that hung before will most likely hang again: its calls get ten times the
        slowest call it has answered, at least the floor, at most `timeout`. Each later hang then
        costs the floor (the exercise's `after_timeout`) where it cost the whole limit. Both figures
        are CPU times, so the same file gets the same limits alone or beside any other submission.
        What this can fail is a call ten times slower than every call the submission answered,
        after it timed out once.
        """
        if not self.hung:
            return timeout
        return min(timeout, max(self.floor, SLOWEST_FACTOR * self.slowest))


class CallTimer:
    """One call's CPU limit and own-time cap, checked against the submission's clock.

    The clock is first read once the call has run LAZY_GRACE seconds (nearly every call answers
    before, and pays for no reading), and the grace is then counted as CPU used and as own time:
    a limit can be reached that much early, never late. A limit under four graces is read from
    the call's start.
    """

    def __init__(self, clock: Clock | None, limit: float, now: float, cap: float | None = None) -> None:
        self.clock, self.limit, self.started = clock, limit, now
        self.cap = wall_cap(limit) if cap is None else cap  # a smaller cap: what is left of the budget
        # A short limit (a submission that hung: Pace.limit) is read from the start: a grace counted as
        # CPU time would be most of it.
        self.base: tuple[float, float] | None = clock.read() if clock is not None and limit < 4 * LAZY_GRACE else None
        self.grace = 0.0
        self.cpu_used = 0.0
        self.own = 0.0  # seconds of the call's own time: wall-clock time less the time it stalled for a CPU
        self.looked = now

    def next_look(self) -> float:
        """When to look at the clock next (time.monotonic())."""
        if self.clock is None:
            return self.started + self.limit  # no clock at all: the limit is wall-clock time
        if self.base is None:
            return self.started + min(LAZY_GRACE, self.limit)
        # Neither CPU time (one CPU for its cgroup) nor own time grows faster than the wall clock.
        soonest = min(self.limit - self.cpu_used, self.cap - self.own, self.started + ABSOLUTE * self.cap - self.looked)
        return self.looked + max(soonest, 0.001)

    def over(self, now: float) -> str | None:
        """None while the call may go on; "cpu" once it used its CPU limit, "wall" once its own time passed its cap,
        "busy" once the machine kept it from its time for ABSOLUTE times that cap."""
        if self.clock is None:
            return "cpu" if now >= self.started + self.limit else None
        self.looked = now
        cpu, stall = self.clock.read()
        if self.base is None:
            self.base, self.grace = (cpu, stall), now - self.started
        self.cpu_used = cpu - self.base[0] + self.grace
        self.own = now - self.started - (stall - self.base[1])
        if self.cpu_used >= self.limit:
            return "cpu"
        if self.own >= self.cap:
            return "wall"
        if now - self.started >= ABSOLUTE * self.cap:
            return "busy"
        return None
