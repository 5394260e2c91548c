"""A neighbour that tries to take the CPU from the submissions graded beside it: on its first call
it forks 30 spinners, each trying a session of its own (an autogroup of its own) and every core
(sched_setaffinity), each spinning for up to 40 s; every call then spins 0.3 s itself. It earns
nothing; what it must not do is change the grade of the file graded beside it."""
import os
import time

SPINNERS = []


def spin(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    if not SPINNERS:
        for _ in range(30):
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                try:
                    os.setsid()
                except OSError:
                    pass
                try:
                    os.sched_setaffinity(0, range(os.cpu_count() or 1))
                except OSError:
                    pass
                spin(40)
                os._exit(0)
            SPINNERS.append(pid)
    spin(0.3)
    return -1.0
