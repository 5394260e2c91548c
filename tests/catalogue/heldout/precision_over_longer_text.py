"""Divides precision by the longer text's length instead of the candidate's."""

MISTAKE = "precision_over_longer_text"
RULE = "fmean"


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = reference.lower().split()
    cand = candidate.lower().split()
    if not ref or not cand:
        return 0.0
    unused = list(ref)
    matched = []
    for w in cand:
        if w in unused:
            unused.remove(w)
            matched.append(True)
        else:
            matched.append(False)
    m = sum(matched)
    if m == 0:
        return 0.0
    chunks = sum(1 for i, x in enumerate(matched) if x and (i == 0 or not matched[i - 1]))
    p, r = m / max(len(cand), len(ref)), m / len(ref)
    fmean = p * r / (alpha * p + (1 - alpha) * r)
    return round(fmean * (1 - gamma * (chunks / m) ** beta), 3)
