"""Matching by removing each matched word from a copy of the reference list."""


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    reference_words = reference.lower().split()
    candidate_words = candidate.lower().split()
    if len(reference_words) == 0 or len(candidate_words) == 0:
        return 0.0

    remaining = list(reference_words)
    chunks = 0
    matches = 0
    in_chunk = False
    for word in candidate_words:
        if word in remaining:
            remaining.remove(word)
            matches += 1
            if not in_chunk:
                chunks += 1
            in_chunk = True
        else:
            in_chunk = False

    if matches == 0:
        return 0.0
    p = matches / len(candidate_words)
    r = matches / len(reference_words)
    f = (p * r) / (alpha * p + (1 - alpha) * r)
    pen = gamma * ((chunks / matches) ** beta)
    return round(f * (1 - pen), 3)
