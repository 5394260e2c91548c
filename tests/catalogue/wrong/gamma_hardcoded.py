"""Always uses 0.5 as the penalty's weight and ignores the gamma argument."""

MISTAKE = "gamma_hardcoded"

from collections import Counter


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref_tokens = reference.lower().split()
    cand_tokens = candidate.lower().split()
    if not ref_tokens or not cand_tokens:
        return 0.0
    remaining = Counter(ref_tokens)
    matched = []
    for tok in cand_tokens:
        if remaining[tok] > 0:
            remaining[tok] -= 1
            matched.append(True)
        else:
            matched.append(False)
    m = sum(matched)
    if m == 0:
        return 0.0
    chunks = sum(1 for i, x in enumerate(matched) if x and (i == 0 or not matched[i - 1]))
    p = m / len(cand_tokens)
    r = m / len(ref_tokens)
    fmean = p * r / (alpha * p + (1 - alpha) * r)
    penalty = 0.5 * (chunks / m) ** beta
    return round(fmean * (1 - penalty), 3)
