"""Removes repeated words from the candidate (not the reference) before scoring."""

MISTAKE = "candidate_deduplicated"
RULE = "clip"


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = reference.lower().split()
    cand = list(dict.fromkeys(candidate.lower().split()))
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
    p, r = m / len(cand), m / len(ref)
    fmean = p * r / (alpha * p + (1 - alpha) * r)
    return round(fmean * (1 - gamma * (chunks / m) ** beta), 3)
