"""Treats every matched word as a chunk of its own, so the penalty is always gamma."""

MISTAKE = "every_match_own_chunk"

from collections import Counter


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = reference.lower().split()
    cand = candidate.lower().split()
    if not ref or not cand:
        return 0.0
    counts = Counter(ref)
    m = 0
    for w in cand:
        if counts[w] > 0:
            counts[w] -= 1
            m += 1
    if m == 0:
        return 0.0
    chunks = m
    P = m / len(cand)
    R = m / len(ref)
    fmean = P * R / (alpha * P + (1 - alpha) * R)
    penalty = gamma * (chunks / m) ** beta
    return round(fmean * (1 - penalty), 3)
