import string
from collections import Counter

MISTAKE = "reverse_ties"


def top_words(text, k=3):
    words = [w.strip(string.punctuation) for w in text.lower().split()]
    counts = Counter(w for w in words if w)
    ranked = sorted(counts.items(), key=lambda p: (p[1], p[0]), reverse=True)
    return ranked[:k]
