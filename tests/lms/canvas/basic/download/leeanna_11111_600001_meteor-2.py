"""A straightforward solution: a Counter of unused reference words, then one pass for the chunks."""

from collections import Counter


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = reference.lower().split()
    cand = candidate.lower().split()
    if not ref or not cand:
        return 0.0

    unused = Counter(ref)
    matched = []
    for word in cand:
        if unused[word] > 0:
            unused[word] -= 1
            matched.append(True)
        else:
            matched.append(False)

    m = sum(matched)
    if m == 0:
        return 0.0

    chunks = 0
    for i, hit in enumerate(matched):
        if hit and (i == 0 or not matched[i - 1]):
            chunks += 1

    precision = m / len(cand)
    recall = m / len(ref)
    fmean = precision * recall / (alpha * precision + (1 - alpha) * recall)
    penalty = gamma * (chunks / m) ** beta
    return round(fmean * (1 - penalty), 3)
