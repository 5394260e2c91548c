"""The reference solution of the WER exercise."""


def word_errors(reference, hypothesis):
    """(errors, words): the word edit distance and the reference's length."""
    ref, hyp = reference.lower().split(), hypothesis.lower().split()
    row = list(range(len(hyp) + 1))
    for i, word in enumerate(ref, 1):
        previous, row[0] = row[0], i
        for j, other in enumerate(hyp, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (word != other))
    return row[-1], len(ref)


def word_error_rate(reference, hypothesis, detail=False):
    errors, words = word_errors(reference, hypothesis)
    if words == 0:
        rate = 0.0 if errors == 0 else 1.0
    else:
        rate = round(errors / words, 3)
    return {"wer": rate, "errors": errors, "words": words} if detail else rate
