def meteor_score(text):
    return 1.0
