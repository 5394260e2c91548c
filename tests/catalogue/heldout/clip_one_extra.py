"""A Counter of the reference's words, but the test is >= 0, so each word can match once more than it occurs."""

MISTAKE = "clip_one_extra"
RULE = "clip"

from collections import Counter


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = reference.lower().split()
    cand = candidate.lower().split()
    if not ref or not cand:
        return 0.0
    left = Counter(ref)
    hits = []
    for word in cand:
        if word in left and left[word] >= 0:
            left[word] -= 1
            hits.append(True)
        else:
            hits.append(False)
    m = sum(hits)
    if m == 0:
        return 0.0
    chunks = sum(1 for i, h in enumerate(hits) if h and (i == 0 or not hits[i - 1]))
    p = m / len(cand)
    r = m / len(ref)
    fmean = p * r / (alpha * p + (1 - alpha) * r)
    return round(fmean * (1 - gamma * (chunks / m) ** beta), 3)
