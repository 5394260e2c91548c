"""Squares the fragmentation instead of raising it to beta."""

MISTAKE = "beta_hardcoded"
RULE = "penalty"

from collections import Counter


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref, cand = reference.lower().split(), candidate.lower().split()
    if not ref or not cand:
        return 0.0
    stock = Counter(ref)
    marks = []
    for w in cand:
        if stock[w]:
            stock[w] -= 1
            marks.append(True)
        else:
            marks.append(False)
    m = sum(marks)
    if not m:
        return 0.0
    ch = sum(1 for i, x in enumerate(marks) if x and (i == 0 or not marks[i - 1]))
    p, r = m / len(cand), m / len(ref)
    fmean = p * r / (alpha * p + (1 - alpha) * r)
    frag = ch / m
    return round(fmean * (1 - gamma * frag * frag), 3)
