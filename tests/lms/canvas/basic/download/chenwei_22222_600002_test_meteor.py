def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    return 1.0  # a test double
