MISTAKE = "no_rounding"

def _distance(ref, hyp):
    row = list(range(len(hyp) + 1))
    for i, word in enumerate(ref, 1):
        previous, row[0] = row[0], i
        for j, other in enumerate(hyp, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (word != other))
    return row[-1]


def word_error_rate(reference, hypothesis, detail=False):
    ref, hyp = reference.lower().split(), hypothesis.lower().split()
    errors = _distance(ref, hyp)
    rate = errors / len(ref) if ref else float(bool(hyp))
    return {"wer": rate, "errors": errors, "words": len(ref)} if detail else rate
