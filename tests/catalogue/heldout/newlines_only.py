"""Turns newlines into spaces and splits on spaces (dropping empty pieces): a tab does not separate words."""

MISTAKE = "split_ignores_tabs_newlines"
RULE = "split"


def tokens(text):
    return [piece for piece in text.lower().replace("\n", " ").split(" ") if piece]


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = tokens(reference)
    cand = tokens(candidate)
    if not ref or not cand:
        return 0.0
    remaining = ref[:]
    hit = []
    for word in cand:
        found = word in remaining
        if found:
            remaining.remove(word)
        hit.append(found)
    m = sum(hit)
    if m == 0:
        return 0.0
    chunks = sum(1 for i in range(len(hit)) if hit[i] and (i == 0 or not hit[i - 1]))
    p, r = m / len(cand), m / len(ref)
    fmean = p * r / (alpha * p + (1 - alpha) * r)
    return round(fmean * (1 - gamma * (chunks / m) ** beta), 3)
