def word_error_rate(reference, hypothesis, detail=False):
    """Return the word error rate of `hypothesis` against `reference`, rounded to 3 decimals.

    With detail=True, return {"wer": rate, "errors": edit distance in words, "words": reference length}.
    """
    raise NotImplementedError("write word_error_rate here")
