"""Compares words without lowercasing them, so "The" and "the" never match."""

MISTAKE = "no_lowercase"


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = reference.split()
    cand = candidate.split()
    if not ref or not cand:
        return 0.0
    left = list(ref)
    hits = []
    for w in cand:
        if w in left:
            left.remove(w)
            hits.append(True)
        else:
            hits.append(False)
    m = sum(hits)
    if m == 0:
        return 0.0
    chunks = sum(1 for i, h in enumerate(hits) if h and (i == 0 or not hits[i - 1]))
    p = m / len(cand)
    r = m / len(ref)
    f = p * r / (alpha * p + (1 - alpha) * r)
    pen = gamma * (chunks / m) ** beta
    return round(f * (1 - pen), 3)
