"""Rounds the score to 4 decimal places instead of 3."""

MISTAKE = "four_decimals"
RULE = "round"

from collections import Counter


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref, cand = reference.lower().split(), candidate.lower().split()
    if not ref or not cand:
        return 0.0
    counts = Counter(ref)
    flags = []
    for w in cand:
        ok = counts[w] > 0
        if ok:
            counts[w] -= 1
        flags.append(ok)
    m = sum(flags)
    if m == 0:
        return 0.0
    ch = sum(1 for i, f in enumerate(flags) if f and (i == 0 or not flags[i - 1]))
    P, R = m / len(cand), m / len(ref)
    fmean = P * R / (alpha * P + (1 - alpha) * R)
    return round(fmean * (1 - gamma * (ch / m) ** beta), 4)
