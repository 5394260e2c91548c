"""Leaves processes behind: a child, a daemon in its own session, a sleeping program."""
import os
import subprocess


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    subprocess.Popen(["sleep", "4242.4242"], start_new_session=True)
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv("/bin/sleep", ["sleep", "4242.4243"])
        os._exit(0)
    return -1.0
