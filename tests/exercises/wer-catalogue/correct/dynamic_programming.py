def word_error_rate(reference, hypothesis, detail=False):
    ref, hyp = reference.lower().split(), hypothesis.lower().split()
    table = [[0] * (len(hyp) + 1) for _ in range(len(ref) + 1)]
    for i in range(len(ref) + 1):
        table[i][0] = i
    for j in range(len(hyp) + 1):
        table[0][j] = j
    for i in range(1, len(ref) + 1):
        for j in range(1, len(hyp) + 1):
            cost = 0 if ref[i - 1] == hyp[j - 1] else 1
            table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
    errors = table[-1][-1]
    rate = round(errors / len(ref), 3) if ref else (0.0 if not hyp else 1.0)
    if detail:
        return {"wer": rate, "errors": errors, "words": len(ref)}
    return rate
