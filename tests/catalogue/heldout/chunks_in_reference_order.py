"""Counts the chunks as runs of used words in the reference instead of matched words in the candidate."""

MISTAKE = "chunks_in_reference"
RULE = "chunks"


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = reference.lower().split()
    cand = candidate.lower().split()
    if not ref or not cand:
        return 0.0
    used = [False] * len(ref)
    m = 0
    for w in cand:
        for j, r in enumerate(ref):
            if r == w and not used[j]:
                used[j] = True
                m += 1
                break
    if m == 0:
        return 0.0
    chunks = sum(1 for j, u in enumerate(used) if u and (j == 0 or not used[j - 1]))
    p, r = m / len(cand), m / len(ref)
    fmean = p * r / (alpha * p + (1 - alpha) * r)
    return round(fmean * (1 - gamma * (chunks / m) ** beta), 3)
