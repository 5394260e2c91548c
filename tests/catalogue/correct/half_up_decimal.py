"""Rounds half-up with decimal.Decimal and ROUND_HALF_UP instead of Python's round()."""

import re
from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = re.findall(r"\S+", reference.lower())
    cand = re.findall(r"\S+", candidate.lower())
    if not ref or not cand:
        return 0.0
    available = defaultdict(int)
    for word in ref:
        available[word] += 1
    matched = []
    for word in cand:
        ok = available[word] > 0
        if ok:
            available[word] -= 1
        matched.append(ok)
    m = sum(matched)
    if m == 0:
        return 0.0
    chunks = sum(1 for i, ok in enumerate(matched) if ok and (i == 0 or not matched[i - 1]))
    p = m / len(cand)
    r = m / len(ref)
    fmean = p * r / (alpha * p + (1 - alpha) * r)
    score = fmean * (1 - gamma * (chunks / m) ** beta)
    return float(Decimal(score).quantize(Decimal("0.001"), rounding=ROUND_HALF_UP))
