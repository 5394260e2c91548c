"""Strips punctuation from every word before matching, so "sky." matches "sky"."""

MISTAKE = "punctuation_stripped"

import string
from collections import Counter


def tokens(text):
    cleaned = text.lower().translate(str.maketrans("", "", string.punctuation))
    return cleaned.split()


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref, cand = tokens(reference), tokens(candidate)
    if not ref or not cand:
        return 0.0
    left = Counter(ref)
    matched = []
    for w in cand:
        if left[w] > 0:
            left[w] -= 1
            matched.append(True)
        else:
            matched.append(False)
    m = sum(matched)
    if m == 0:
        return 0.0
    chunks = sum(1 for i, x in enumerate(matched) if x and (i == 0 or not matched[i - 1]))
    P, R = m / len(cand), m / len(ref)
    fmean = P * R / (alpha * P + (1 - alpha) * R)
    return round(fmean * (1 - gamma * (chunks / m) ** beta), 3)
