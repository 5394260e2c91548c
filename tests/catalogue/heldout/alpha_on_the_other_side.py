"""Puts alpha on recall and 1 - alpha on precision in the F-mean's denominator."""

MISTAKE = "alpha_swapped"
RULE = "fmean"


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    r_tokens = reference.lower().split()
    c_tokens = candidate.lower().split()
    if not r_tokens or not c_tokens:
        return 0.0
    free = list(r_tokens)
    flags = []
    for t in c_tokens:
        if t in free:
            free.remove(t)
            flags.append(True)
        else:
            flags.append(False)
    m = sum(flags)
    if m == 0:
        return 0.0
    chunks = 0
    inside = False
    for f in flags:
        if f and not inside:
            chunks += 1
        inside = f
    P = m / len(c_tokens)
    R = m / len(r_tokens)
    fmean = P * R / ((1 - alpha) * P + alpha * R)
    return round(fmean * (1 - gamma * (chunks / m) ** beta), 3)
