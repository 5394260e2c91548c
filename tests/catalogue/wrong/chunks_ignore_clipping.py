"""Clips the match count but marks every copy of a matched word when finding chunks."""

MISTAKE = "chunks_ignore_clipping"

from collections import Counter


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = reference.lower().split()
    cand = candidate.lower().split()
    if not ref or not cand:
        return 0.0
    rc, cc = Counter(ref), Counter(cand)
    m = sum(min(n, rc[w]) for w, n in cc.items())
    if m == 0:
        return 0.0
    in_ref = [w in rc for w in cand]
    chunks = sum(1 for i, x in enumerate(in_ref) if x and (i == 0 or not in_ref[i - 1]))
    P, R = m / len(cand), m / len(ref)
    fmean = P * R / (alpha * P + (1 - alpha) * R)
    return round(fmean * (1 - gamma * (chunks / m) ** beta), 3)
