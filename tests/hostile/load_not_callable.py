meteor_score = 0.625
