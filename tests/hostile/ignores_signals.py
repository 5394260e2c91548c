"""Hangs while ignoring every signal it can."""
import signal

for name in ("SIGTERM", "SIGINT", "SIGALRM", "SIGXCPU", "SIGHUP", "SIGQUIT", "SIGUSR1"):
    signal.signal(getattr(signal, name), signal.SIG_IGN)


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    while True:
        pass
