def word_error_rate(reference, hypothesis, detail=False):
    r = reference.lower().split()
    h = hypothesis.lower().split()
    before = list(range(len(h) + 1))
    for i, a in enumerate(r, 1):
        now = [i]
        for j, b in enumerate(h, 1):
            now.append(min(before[j] + 1, now[j - 1] + 1, before[j - 1] + (a != b)))
        before = now
    errors = before[-1]
    wer = float(errors > 0) if not r else round(errors / len(r), 3)
    return {"wer": wer, "errors": errors, "words": len(r)} if detail else wer
