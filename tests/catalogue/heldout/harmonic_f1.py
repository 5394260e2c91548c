"""Uses the F1 score, 2PR / (P + R), and ignores alpha."""

MISTAKE = "f1_mean"
RULE = "fmean"

from collections import Counter


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = reference.lower().split()
    cand = candidate.lower().split()
    if not ref or not cand:
        return 0.0
    bag = Counter(ref)
    hit = []
    for w in cand:
        hit.append(bag[w] > 0)
        if hit[-1]:
            bag[w] -= 1
    m = sum(hit)
    if m == 0:
        return 0.0
    chunks = sum(1 for i, h in enumerate(hit) if h and (i == 0 or not hit[i - 1]))
    precision = m / len(cand)
    recall = m / len(ref)
    f1 = 2 * precision * recall / (precision + recall)
    return round(f1 * (1 - gamma * (chunks / m) ** beta), 3)
