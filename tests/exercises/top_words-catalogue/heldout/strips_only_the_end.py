import string
from collections import Counter

MISTAKE = "strips_only_the_end"  # no model makes it
RULE = "words"


def top_words(text, k=3):
    words = [w.rstrip(string.punctuation) for w in text.lower().split()]
    counts = Counter(w for w in words if w)
    return sorted(counts.items(), key=lambda p: (-p[1], p[0]))[:k]
