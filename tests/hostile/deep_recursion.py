"""Recurses past the C stack."""
import sys

sys.setrecursionlimit(10**7)


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    def down(n):
        return down(n + 1) + 1

    return down(0)
