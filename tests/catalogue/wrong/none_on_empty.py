"""Returns None instead of 0.0 when a text has no words."""

MISTAKE = "none_on_empty"

from collections import Counter


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = reference.lower().split()
    cand = candidate.lower().split()
    if not ref or not cand:
        return None
    counts = Counter(ref)
    matched = []
    for w in cand:
        if counts[w] > 0:
            counts[w] -= 1
            matched.append(True)
        else:
            matched.append(False)
    m = sum(matched)
    if m == 0:
        return 0.0
    chunks = sum(1 for i, x in enumerate(matched) if x and (i == 0 or not matched[i - 1]))
    P, R = m / len(cand), m / len(ref)
    fmean = P * R / (alpha * P + (1 - alpha) * R)
    return round(fmean * (1 - gamma * (chunks / m) ** beta), 3)
