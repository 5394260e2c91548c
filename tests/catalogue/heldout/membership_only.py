"""Marks a candidate word as matched whenever the reference holds it, by index scanning, never using a copy up."""

MISTAKE = "no_clipping"
RULE = "clip"


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = reference.lower().split()
    cand = candidate.lower().split()
    if len(ref) == 0 or len(cand) == 0:
        return 0.0
    matched = []
    for i in range(len(cand)):
        found = False
        for j in range(len(ref)):
            if cand[i] == ref[j]:
                found = True
                break
        matched.append(found)
    m = 0
    for x in matched:
        if x:
            m += 1
    if m == 0:
        return 0.0
    chunks = 0
    for i in range(len(matched)):
        if matched[i] and (i == 0 or not matched[i - 1]):
            chunks += 1
    p = m / len(cand)
    r = m / len(ref)
    f = (p * r) / (alpha * p + (1 - alpha) * r)
    return round(f * (1 - gamma * (chunks / m) ** beta), 3)
