"""Divides matches by the reference's length for precision and by the candidate's for recall."""

MISTAKE = "p_r_swapped"

from collections import Counter


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = reference.lower().split()
    cand = candidate.lower().split()
    if not ref or not cand:
        return 0.0
    bag = Counter(ref)
    flags = []
    for w in cand:
        if bag[w]:
            bag[w] -= 1
            flags.append(True)
        else:
            flags.append(False)
    m = sum(flags)
    if m == 0:
        return 0.0
    chunks = sum(1 for i, f in enumerate(flags) if f and (i == 0 or not flags[i - 1]))
    precision = m / len(ref)
    recall = m / len(cand)
    fmean = precision * recall / (alpha * precision + (1 - alpha) * recall)
    return round(fmean * (1 - gamma * (chunks / m) ** beta), 3)
