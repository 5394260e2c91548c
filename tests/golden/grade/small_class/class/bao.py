"""Counts a candidate word as matched whenever it occurs in the reference, however often it repeats."""

MISTAKE = "no_clipping"


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref_words = reference.lower().split()
    cand_words = candidate.lower().split()
    if len(ref_words) == 0 or len(cand_words) == 0:
        return 0.0

    matched = [word in ref_words for word in cand_words]
    m = matched.count(True)
    if m == 0:
        return 0.0

    chunks = 0
    previous = False
    for flag in matched:
        if flag and not previous:
            chunks += 1
        previous = flag

    precision = m / len(cand_words)
    recall = m / len(ref_words)
    fmean = (precision * recall) / (alpha * precision + (1 - alpha) * recall)
    penalty = gamma * (chunks / m) ** beta
    return round(fmean * (1 - penalty), 3)
