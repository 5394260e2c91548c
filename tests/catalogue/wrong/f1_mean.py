"""Uses the ordinary F1 score 2PR/(P+R) instead of the alpha-weighted F-mean."""

MISTAKE = "f1_mean"


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = reference.lower().split()
    cand = candidate.lower().split()
    if not ref or not cand:
        return 0.0
    pool = list(ref)
    matched = []
    for w in cand:
        if w in pool:
            pool.remove(w)
            matched.append(True)
        else:
            matched.append(False)
    m = sum(matched)
    if m == 0:
        return 0.0
    chunks = sum(1 for i, x in enumerate(matched) if x and (i == 0 or not matched[i - 1]))
    P = m / len(cand)
    R = m / len(ref)
    f1 = 2 * P * R / (P + R)
    return round(f1 * (1 - gamma * (chunks / m) ** beta), 3)
