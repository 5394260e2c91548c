"""The reference solution: the twins, the private tier and the diagnosis take their answers from it. Never shipped."""

import string


def top_words(text, k=3):
    counts = {}
    for word in text.lower().split():
        word = word.strip(string.punctuation)
        if word:
            counts[word] = counts.get(word, 0) + 1
    ranked = sorted(counts.items(), key=lambda pair: (-pair[1], pair[0]))
    return ranked[:k]
