"""Counts m as the reference words found anywhere in the candidate, clipping nothing."""

MISTAKE = "matches_counted_from_reference"


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = reference.lower().split()
    cand = candidate.lower().split()
    if not ref or not cand:
        return 0.0
    cand_set = set(cand)
    m = sum(1 for w in ref if w in cand_set)
    if m == 0:
        return 0.0
    ref_set = set(ref)
    flags = [w in ref_set for w in cand]
    chunks = sum(1 for i, x in enumerate(flags) if x and (i == 0 or not flags[i - 1]))
    P, R = min(1.0, m / len(cand)), m / len(ref)
    fmean = P * R / (alpha * P + (1 - alpha) * R)
    return round(fmean * (1 - gamma * (chunks / m) ** beta), 3)
