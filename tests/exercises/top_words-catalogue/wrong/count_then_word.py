import string
from collections import Counter

MISTAKE = "count_then_word"


def top_words(text, k=3):
    words = [w.strip(string.punctuation) for w in text.lower().split()]
    counts = Counter(w for w in words if w)
    return sorted(((n, w) for w, n in counts.items()), key=lambda p: (-p[0], p[1]))[:k]
