r"""Finds words with re.findall(r"\w+"), which drops punctuation and cuts "it's" in two."""

MISTAKE = "punctuation_stripped"
RULE = "punct"

import re


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = re.findall(r"\w+", reference.lower())
    cand = re.findall(r"\w+", candidate.lower())
    if len(ref) == 0 or len(cand) == 0:
        return 0.0
    available = {}
    for w in ref:
        available[w] = available.get(w, 0) + 1
    flags = []
    for w in cand:
        if available.get(w, 0) > 0:
            available[w] -= 1
            flags.append(True)
        else:
            flags.append(False)
    m = flags.count(True)
    if m == 0:
        return 0.0
    chunks = 0
    for i in range(len(flags)):
        if flags[i] and (i == 0 or not flags[i - 1]):
            chunks += 1
    precision = m / len(cand)
    recall = m / len(ref)
    fmean = precision * recall / (alpha * precision + (1 - alpha) * recall)
    penalty = gamma * (chunks / m) ** beta
    return round(fmean * (1 - penalty), 3)
