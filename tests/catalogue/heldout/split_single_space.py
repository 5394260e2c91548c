"""Splits with split(" "): runs of spaces give empty words, tabs and newlines separate nothing, "" is one empty word."""

MISTAKE = "split_on_space"
RULE = "split"


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = reference.lower().split(" ")
    cand = candidate.lower().split(" ")
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
    ch = sum(1 for i, h in enumerate(hits) if h and (i == 0 or not hits[i - 1]))
    p, r = m / len(cand), m / len(ref)
    fmean = p * r / (alpha * p + (1 - alpha) * r)
    return round(fmean * (1 - gamma * (ch / m) ** beta), 3)
