"""Checks only the reference for words; an empty candidate divides zero by zero."""

MISTAKE = "crash_on_empty"
RULE = "empty"


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = reference.lower().split()
    cand = candidate.lower().split()
    if not ref:
        return 0.0
    rest = list(ref)
    matched = []
    for w in cand:
        matched.append(w in rest)
        if matched[-1]:
            rest.remove(w)
    m = sum(matched)
    precision = m / len(cand)
    recall = m / len(ref)
    if m == 0:
        return 0.0
    chunks = sum(1 for i, x in enumerate(matched) if x and (i == 0 or not matched[i - 1]))
    fmean = precision * recall / (alpha * precision + (1 - alpha) * recall)
    return round(fmean * (1 - gamma * (chunks / m) ** beta), 3)
