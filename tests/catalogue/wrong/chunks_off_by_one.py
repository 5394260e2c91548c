"""Counts chunk starts only from the second word on, so a chunk at the very start is missed."""

MISTAKE = "chunks_off_by_one"

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
    chunks = 0
    for i in range(1, len(matched)):
        if matched[i] and not matched[i - 1]:
            chunks += 1
    P, R = m / len(cand), m / len(ref)
    fmean = P * R / (alpha * P + (1 - alpha) * R)
    return round(fmean * (1 - gamma * (chunks / m) ** beta), 3)
