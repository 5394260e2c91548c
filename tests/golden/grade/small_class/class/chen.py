"""Writes gamma * chunks / m ** beta, so only m is raised to the power beta."""

MISTAKE = "penalty_precedence"

from collections import Counter


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = reference.lower().split()
    cand = candidate.lower().split()
    if not ref or not cand:
        return 0.0
    counts = Counter(ref)
    matched = []
    for w in cand:
        if counts[w] > 0:
            counts[w] -= 1
            matched.append(True)
        else:
            matched.append(False)
    m = sum(matched)
    if m == 0:
        return 0.0
    chunks = sum(1 for i, x in enumerate(matched) if x and (i == 0 or not matched[i - 1]))
    P, R = m / len(cand), m / len(ref)
    fmean = P * R / (alpha * P + (1 - alpha) * R)
    penalty = gamma * chunks / m ** beta
    return round(fmean * (1 - penalty), 3)
