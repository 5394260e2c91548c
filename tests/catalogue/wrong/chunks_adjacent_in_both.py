"""Counts chunks like full METEOR: matched words must also be adjacent in the reference."""

MISTAKE = "chunks_adjacent_in_both"


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = reference.lower().split()
    cand = candidate.lower().split()
    if not ref or not cand:
        return 0.0
    used = set()
    alignment = []  # (candidate index, reference index)
    for i, w in enumerate(cand):
        for j, r in enumerate(ref):
            if j not in used and r == w:
                used.add(j)
                alignment.append((i, j))
                break
    m = len(alignment)
    if m == 0:
        return 0.0
    chunks = 1
    for (i1, j1), (i2, j2) in zip(alignment, alignment[1:]):
        if not (i2 == i1 + 1 and j2 == j1 + 1):
            chunks += 1
    P, R = m / len(cand), m / len(ref)
    fmean = P * R / (alpha * P + (1 - alpha) * R)
    return round(fmean * (1 - gamma * (chunks / m) ** beta), 3)
