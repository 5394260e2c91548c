"""Subtracts the penalty from the F-mean instead of multiplying by 1 - Pen."""

MISTAKE = "penalty_subtracted_from_fmean"
RULE = "penalty"


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = reference.lower().split()
    cand = candidate.lower().split()
    if not ref or not cand:
        return 0.0
    avail = list(ref)
    flags = []
    for w in cand:
        if w in avail:
            avail.remove(w)
            flags.append(True)
        else:
            flags.append(False)
    m = sum(flags)
    if m == 0:
        return 0.0
    ch = sum(1 for i, f in enumerate(flags) if f and (i == 0 or not flags[i - 1]))
    p, r = m / len(cand), m / len(ref)
    fmean = p * r / (alpha * p + (1 - alpha) * r)
    pen = gamma * (ch / m) ** beta
    return round(fmean - pen, 3)
