"""Returns None when the texts share no word (but 0.0 for a text without words)."""

MISTAKE = "none_on_no_match"
RULE = "empty"


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = reference.lower().split()
    cand = candidate.lower().split()
    if not ref or not cand:
        return 0.0
    pool = list(ref)
    matched = []
    for w in cand:
        if w in pool:
            pool.remove(w)
            matched.append(True)
        else:
            matched.append(False)
    m = sum(matched)
    if m == 0:
        return None
    ch = sum(1 for i, x in enumerate(matched) if x and (i == 0 or not matched[i - 1]))
    p, r = m / len(cand), m / len(ref)
    fmean = p * r / (alpha * p + (1 - alpha) * r)
    return round(fmean * (1 - gamma * (ch / m) ** beta), 3)
