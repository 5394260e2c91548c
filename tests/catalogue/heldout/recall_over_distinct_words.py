"""Divides recall by the number of distinct reference words instead of all of them."""

MISTAKE = "recall_over_distinct_words"
RULE = "fmean"


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = reference.lower().split()
    cand = candidate.lower().split()
    if not ref or not cand:
        return 0.0
    pool = list(ref)
    marks = []
    for w in cand:
        if w in pool:
            pool.remove(w)
            marks.append(True)
        else:
            marks.append(False)
    m = sum(marks)
    if m == 0:
        return 0.0
    ch = sum(1 for i, x in enumerate(marks) if x and (i == 0 or not marks[i - 1]))
    precision = m / len(cand)
    recall = m / len(set(ref))
    fmean = precision * recall / (alpha * precision + (1 - alpha) * recall)
    return round(fmean * (1 - gamma * (ch / m) ** beta), 3)
