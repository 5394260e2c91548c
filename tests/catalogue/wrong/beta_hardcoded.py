"""Squares the fragmentation ratio instead of raising it to the power beta."""

MISTAKE = "beta_hardcoded"

from collections import Counter


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = reference.lower().split()
    hyp = candidate.lower().split()
    if not ref or not hyp:
        return 0.0
    counts = Counter(ref)
    is_match = []
    for w in hyp:
        if counts[w]:
            counts[w] -= 1
            is_match.append(True)
        else:
            is_match.append(False)
    m = sum(is_match)
    if m == 0:
        return 0.0
    chunks = len([i for i in range(len(is_match)) if is_match[i] and (i == 0 or not is_match[i - 1])])
    precision = m / len(hyp)
    recall = m / len(ref)
    fmean = precision * recall / (alpha * precision + (1 - alpha) * recall)
    frag = chunks / m
    penalty = gamma * frag * frag
    return round(fmean * (1 - penalty), 3)
