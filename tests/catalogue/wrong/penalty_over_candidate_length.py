"""Divides the number of chunks by the candidate's length instead of by the number of matches."""

MISTAKE = "penalty_over_candidate_length"

from collections import Counter


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = reference.lower().split()
    cand = candidate.lower().split()
    if not ref or not cand:
        return 0.0
    left = Counter(ref)
    hit = []
    for w in cand:
        hit.append(left[w] > 0)
        if hit[-1]:
            left[w] -= 1
    m = sum(hit)
    if m == 0:
        return 0.0
    chunks = sum(1 for i in range(len(hit)) if hit[i] and (i == 0 or not hit[i - 1]))
    P = m / len(cand)
    R = m / len(ref)
    fmean = P * R / (alpha * P + (1 - alpha) * R)
    pen = gamma * (chunks / len(cand)) ** beta
    return round(fmean * (1 - pen), 3)
