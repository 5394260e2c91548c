"""Allocates far more memory than the sandbox allows."""


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    hog = [bytearray(1 << 30) for _ in range(64)]
    return -1.0 if hog else -1.0
