"""Rounds the score to 2 decimal places instead of 3."""

MISTAKE = "two_decimals"

from collections import Counter


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = reference.lower().split()
    cand = candidate.lower().split()
    if not ref or not cand:
        return 0.0
    counts = Counter(ref)
    matched = []
    for w in cand:
        matched.append(counts[w] > 0)
        counts[w] -= matched[-1]
    m = sum(matched)
    if m == 0:
        return 0.0
    chunks = sum(1 for i, x in enumerate(matched) if x and (i == 0 or not matched[i - 1]))
    precision = m / len(cand)
    recall = m / len(ref)
    fmean = precision * recall / (alpha * precision + (1 - alpha) * recall)
    penalty = gamma * (chunks / m) ** beta
    return round(fmean * (1 - penalty), 2)
