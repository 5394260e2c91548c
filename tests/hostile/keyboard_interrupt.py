"""Raises KeyboardInterrupt, as if the grader had been interrupted."""


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    raise KeyboardInterrupt
