import string
from collections import Counter

MISTAKE = "fewest_first"  # no model makes it
RULE = "order"


def top_words(text, k=3):
    words = [w.strip(string.punctuation) for w in text.lower().split()]
    counts = Counter(w for w in words if w)
    return sorted(counts.items(), key=lambda p: (p[1], p[0]))[:k]
