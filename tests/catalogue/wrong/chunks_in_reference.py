"""Counts chunks as runs of used positions in the reference instead of matched positions in the candidate."""

MISTAKE = "chunks_in_reference"


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = reference.lower().split()
    cand = candidate.lower().split()
    if not ref or not cand:
        return 0.0
    used = [False] * len(ref)
    m = 0
    for word in cand:
        for j, r in enumerate(ref):
            if not used[j] and r == word:
                used[j] = True
                m += 1
                break
    if m == 0:
        return 0.0
    chunks = 0
    for j in range(len(ref)):
        if used[j] and (j == 0 or not used[j - 1]):
            chunks += 1
    precision = m / len(cand)
    recall = m / len(ref)
    fmean = precision * recall / (alpha * precision + (1 - alpha) * recall)
    penalty = gamma * (chunks / m) ** beta
    return round(fmean * (1 - penalty), 3)
