from functools import lru_cache


def word_error_rate(reference, hypothesis, detail=False):
    ref = tuple(reference.lower().split())
    hyp = tuple(hypothesis.lower().split())

    @lru_cache(maxsize=None)
    def distance(i, j):
        if i == 0 or j == 0:
            return i + j
        return min(distance(i - 1, j) + 1, distance(i, j - 1) + 1, distance(i - 1, j - 1) + (ref[i - 1] != hyp[j - 1]))

    errors = distance(len(ref), len(hyp))
    if not ref:
        rate = 1.0 if hyp else 0.0
    else:
        rate = round(errors / len(ref), 3)
    return dict(wer=rate, errors=errors, words=len(ref)) if detail else rate
