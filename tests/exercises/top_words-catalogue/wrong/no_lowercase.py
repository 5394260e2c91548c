import string
from collections import Counter

MISTAKE = "no_lowercase"


def top_words(text, k=3):
    counts = Counter(w.strip(string.punctuation) for w in text.split())
    counts.pop("", None)
    return sorted(counts.items(), key=lambda p: (-p[1], p[0]))[:k]
