"""Splits on single spaces and drops the empty pieces, so tabs and newlines do not separate words."""

MISTAKE = "split_ignores_tabs_newlines"


def words(text):
    return [w for w in text.lower().split(" ") if w != ""]


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref, cand = words(reference), words(candidate)
    if not ref or not cand:
        return 0.0
    remaining = ref.copy()
    flags = []
    for w in cand:
        found = w in remaining
        if found:
            remaining.remove(w)
        flags.append(found)
    m = flags.count(True)
    if m == 0:
        return 0.0
    chunks = sum(1 for a, b in zip([False] + flags, flags) if b and not a)
    p, r = m / len(cand), m / len(ref)
    f = p * r / (alpha * p + (1 - alpha) * r)
    return round(f * (1 - gamma * (chunks / m) ** beta), 3)
