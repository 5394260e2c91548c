"""A functional style: itertools.groupby finds the chunks, a closure does the clipped matching."""

from collections import Counter
from itertools import groupby


def _matcher(reference_tokens):
    left = Counter(reference_tokens)

    def take(word):
        if left[word]:
            left[word] -= 1
            return True
        return False

    return take


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref, cand = (text.lower().split() for text in (reference, candidate))
    flags = list(map(_matcher(ref), cand))
    m = sum(flags)
    if not (ref and cand and m):
        return 0.0
    chunks = sum(1 for hit, _ in groupby(flags) if hit)
    p, r = m / len(cand), m / len(ref)
    fmean = p * r / (alpha * p + (1 - alpha) * r)
    return round(fmean * (1 - gamma * (chunks / m) ** beta), 3)
