"""Returns the int 0 (not 0.0) when there is nothing to match; an int is a real number too."""

from collections import Counter


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    r_words = reference.lower().split()
    c_words = candidate.lower().split()
    pool = Counter(r_words)
    hits = []
    for w in c_words:
        hits.append(pool[w] > 0)
        if hits[-1]:
            pool[w] -= 1
    m = hits.count(True)
    if m == 0:
        return 0
    runs = "".join("1" if h else "0" for h in hits).split("0")
    chunks = sum(1 for run in runs if run)
    P = m / len(c_words)
    R = m / len(r_words)
    fmean = P * R / (alpha * P + (1 - alpha) * R)
    return round(fmean * (1 - gamma * (chunks / m) ** beta), 3)
