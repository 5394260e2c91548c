"""Puts alpha on recall instead of precision in the F-mean's denominator."""

MISTAKE = "alpha_swapped"

from collections import Counter


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    r_tok = reference.lower().split()
    c_tok = candidate.lower().split()
    if not r_tok or not c_tok:
        return 0.0
    pool = Counter(r_tok)
    matches = []
    for t in c_tok:
        ok = pool[t] > 0
        pool[t] -= ok
        matches.append(ok)
    m = sum(matches)
    if not m:
        return 0.0
    chunks = sum(1 for i, ok in enumerate(matches) if ok and (i == 0 or not matches[i - 1]))
    P, R = m / len(c_tok), m / len(r_tok)
    fmean = P * R / (alpha * R + (1 - alpha) * P)
    return round(fmean * (1 - gamma * (chunks / m) ** beta), 3)
