"""Counts a chunk where a matched word is followed by an unmatched one, so a chunk at the very end is missed."""

MISTAKE = "chunk_at_end_missed"
RULE = "chunks"


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = reference.lower().split()
    cand = candidate.lower().split()
    if not ref or not cand:
        return 0.0
    unused = list(ref)
    matched = []
    for word in cand:
        if word in unused:
            unused.remove(word)
            matched.append(True)
        else:
            matched.append(False)
    m = sum(matched)
    if m == 0:
        return 0.0
    chunks = 0
    for i in range(len(matched) - 1):
        if matched[i] and not matched[i + 1]:
            chunks += 1
    p = m / len(cand)
    r = m / len(ref)
    fmean = p * r / (alpha * p + (1 - alpha) * r)
    return round(fmean * (1 - gamma * (chunks / m) ** beta), 3)
