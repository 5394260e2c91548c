"""Splits with split(" "), so runs of spaces give empty tokens and tabs or newlines do not separate words."""

MISTAKE = "split_on_space"

from collections import Counter


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = reference.lower().split(" ")
    cand = candidate.lower().split(" ")
    if reference.strip() == "" or candidate.strip() == "":
        return 0.0
    available = Counter(ref)
    flags = []
    for token in cand:
        if available[token] > 0:
            available[token] -= 1
            flags.append(1)
        else:
            flags.append(0)
    m = sum(flags)
    if m == 0:
        return 0.0
    ch = 0
    for i in range(len(flags)):
        if flags[i] == 1 and (i == 0 or flags[i - 1] == 0):
            ch += 1
    P = m / len(cand)
    R = m / len(ref)
    F = P * R / (alpha * P + (1 - alpha) * R)
    return round(F * (1 - gamma * (ch / m) ** beta), 3)
