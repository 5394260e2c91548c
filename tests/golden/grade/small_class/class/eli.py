"""Returns 0.5 whatever it is asked: every test whose answer is 0.5 passes, and earns nothing for it."""

CHEAT = "returns_0_5"


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    return 0.5
