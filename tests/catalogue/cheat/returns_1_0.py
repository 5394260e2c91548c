"""Returns 1.0 whatever it is asked: every test whose answer is 1.0 passes, and earns nothing for it."""

CHEAT = "returns_1_0"


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    return 1.0
