"""Removes repeated words from both texts before scoring, so lengths count distinct words."""

MISTAKE = "unique_words"


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = list(dict.fromkeys(reference.lower().split()))
    cand = list(dict.fromkeys(candidate.lower().split()))
    if not ref or not cand:
        return 0.0
    matched = [w in ref for w in cand]
    m = sum(matched)
    if m == 0:
        return 0.0
    chunks = sum(1 for i, x in enumerate(matched) if x and (i == 0 or not matched[i - 1]))
    P, R = m / len(cand), m / len(ref)
    fmean = P * R / (alpha * P + (1 - alpha) * R)
    return round(fmean * (1 - gamma * (chunks / m) ** beta), 3)
