"""Exact arithmetic with fractions.Fraction for P, R and the F-mean, rounded exactly, returned as a float."""

from collections import Counter
from fractions import Fraction


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = reference.lower().split()
    cand = candidate.lower().split()
    if not ref or not cand:
        return 0.0
    rest = Counter(ref)
    matched = []
    for w in cand:
        matched.append(rest[w] > 0)
        rest[w] -= matched[-1]
    m = sum(matched)
    if m == 0:
        return 0.0
    chunks = sum(1 for i, x in enumerate(matched) if x and (i == 0 or not matched[i - 1]))
    P = Fraction(m, len(cand))
    R = Fraction(m, len(ref))
    a = Fraction(alpha)
    fmean = P * R / (a * P + (1 - a) * R)
    penalty = Fraction(gamma) * Fraction(chunks, m) ** int(beta) if float(beta).is_integer() else Fraction(gamma * (chunks / m) ** beta)
    return float(round(fmean * (1 - penalty), 3))
