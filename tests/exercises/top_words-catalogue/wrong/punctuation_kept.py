from collections import Counter

MISTAKE = "punctuation_kept"


def top_words(text, k=3):
    counts = Counter(text.lower().split())
    return sorted(counts.items(), key=lambda p: (-p[1], p[0]))[:k]
