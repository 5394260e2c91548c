"""Strips punctuation from the end of each word (rstrip), so `sky.` and `sky` match."""

MISTAKE = "punctuation_stripped"
RULE = "punct"


def words(text):
    return [w.rstrip(".,;:!?") for w in text.lower().split()]


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref, cand = words(reference), words(candidate)
    if not ref or not cand:
        return 0.0
    pool = list(ref)
    matched = []
    for w in cand:
        if w in pool:
            pool.remove(w)
            matched.append(1)
        else:
            matched.append(0)
    m = sum(matched)
    if not m:
        return 0.0
    ch = 0
    prev = 0
    for x in matched:
        if x and not prev:
            ch += 1
        prev = x
    P, R = m / len(cand), m / len(ref)
    F = P * R / (alpha * P + (1 - alpha) * R)
    return round(F * (1 - gamma * (ch / m) ** beta), 3)
