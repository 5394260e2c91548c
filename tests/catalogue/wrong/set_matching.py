"""Counts matches as the number of distinct words the two texts share (a set intersection)."""

MISTAKE = "set_matching"


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = reference.lower().split()
    cand = candidate.lower().split()
    if not ref or not cand:
        return 0.0
    common = set(ref) & set(cand)
    m = len(common)
    if m == 0:
        return 0.0
    chunks = 0
    inside = False
    for w in cand:
        if w in common:
            if not inside:
                chunks += 1
            inside = True
        else:
            inside = False
    P = m / len(cand)
    R = m / len(ref)
    fmean = P * R / (alpha * P + (1 - alpha) * R)
    return round(fmean * (1 - gamma * (chunks / m) ** beta), 3)
