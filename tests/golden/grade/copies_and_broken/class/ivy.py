"""Never checks for texts without words, so an empty text divides by zero."""

MISTAKE = "crash_on_empty"

from collections import Counter


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = reference.lower().split()
    cand = candidate.lower().split()
    counts = Counter(ref)
    matched = []
    for w in cand:
        if counts[w] > 0:
            counts[w] -= 1
            matched.append(True)
        else:
            matched.append(False)
    m = sum(matched)
    precision = m / len(cand)
    recall = m / len(ref)
    if m == 0:
        return 0.0
    chunks = sum(1 for i, x in enumerate(matched) if x and (i == 0 or not matched[i - 1]))
    fmean = precision * recall / (alpha * precision + (1 - alpha) * recall)
    return round(fmean * (1 - gamma * (chunks / m) ** beta), 3)
