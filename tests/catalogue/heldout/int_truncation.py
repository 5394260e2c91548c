"""Cuts the score to 3 decimals with int(score * 1000) / 1000 instead of rounding."""

MISTAKE = "truncation"
RULE = "round"


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = reference.lower().split()
    cand = candidate.lower().split()
    if not ref or not cand:
        return 0.0
    pool = list(ref)
    flags = [False] * len(cand)
    for i, w in enumerate(cand):
        if w in pool:
            pool.remove(w)
            flags[i] = True
    m = sum(flags)
    if m == 0:
        return 0.0
    ch = sum(1 for i in range(len(flags)) if flags[i] and (i == 0 or not flags[i - 1]))
    p, r = m / len(cand), m / len(ref)
    fmean = p * r / (alpha * p + (1 - alpha) * r)
    score = fmean * (1 - gamma * (ch / m) ** beta)
    return int(score * 1000) / 1000
