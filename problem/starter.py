def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    """Return the METEOR score of `candidate` against `reference`, rounded to 3 decimals.

    reference, candidate: the two texts (str).
    alpha: weight of precision in the F-mean (0 <= alpha <= 1).
    beta: exponent of the fragmentation penalty (beta >= 0).
    gamma: largest fragmentation penalty (0 <= gamma <= 1).
    """
    raise NotImplementedError("write meteor_score here")
