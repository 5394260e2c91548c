"""No str.split and no regex: tokens are found by scanning indices with str.isspace."""


def tokenize(text):
    text = text.lower()
    tokens = []
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i].isspace():
            i += 1
        start = i
        while i < n and not text[i].isspace():
            i += 1
        if i > start:
            tokens.append(text[start:i])
    return tokens


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref = tokenize(reference)
    cand = tokenize(candidate)
    if not ref or not cand:
        return 0.0
    used = [False] * len(ref)
    matched = [False] * len(cand)
    for i in range(len(cand)):
        for j in range(len(ref)):
            if not used[j] and ref[j] == cand[i]:
                used[j] = True
                matched[i] = True
                break
    m = matched.count(True)
    if m == 0:
        return 0.0
    chunks = 0
    i = 0
    while i < len(matched):
        if matched[i]:
            chunks += 1
            while i < len(matched) and matched[i]:
                i += 1
        else:
            i += 1
    precision = m / len(cand)
    recall = m / len(ref)
    fmean = precision * recall / (alpha * precision + (1 - alpha) * recall)
    return round(fmean * (1 - gamma * (chunks / m) ** beta), 3)
