"""Scans the candidate from right to left, so the last copies of a repeated word get matched."""

MISTAKE = "right_to_left_matching"

from collections import Counter


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = reference.lower().split()
    cand = candidate.lower().split()
    if not ref or not cand:
        return 0.0
    counts = Counter(ref)
    matched = [False] * len(cand)
    for i in reversed(range(len(cand))):
        if counts[cand[i]] > 0:
            counts[cand[i]] -= 1
            matched[i] = True
    m = sum(matched)
    if m == 0:
        return 0.0
    chunks = sum(1 for i, x in enumerate(matched) if x and (i == 0 or not matched[i - 1]))
    P, R = m / len(cand), m / len(ref)
    fmean = P * R / (alpha * P + (1 - alpha) * R)
    return round(fmean * (1 - gamma * (chunks / m) ** beta), 3)
