"""Hangs: every call spins forever."""


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    while True:
        pass
