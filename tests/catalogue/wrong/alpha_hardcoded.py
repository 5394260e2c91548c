"""Uses the classic 10PR/(R+9P) F-mean, so alpha is always 0.9 whatever is passed."""

MISTAKE = "alpha_hardcoded"


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    reference = reference.lower().split()
    candidate = candidate.lower().split()
    if not reference or not candidate:
        return 0.0
    unused = reference[:]
    matched = []
    for word in candidate:
        if word in unused:
            unused.remove(word)
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
    P = m / len(candidate)
    R = m / len(reference)
    fmean = 10 * P * R / (R + 9 * P)
    penalty = gamma * (chunks / m) ** beta
    return round(fmean * (1 - penalty), 3)
