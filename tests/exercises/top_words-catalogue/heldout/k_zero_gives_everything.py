import string
from collections import Counter

MISTAKE = "k_zero_gives_everything"  # no model makes it
RULE = "top"


def top_words(text, k=3):
    words = [w.strip(string.punctuation) for w in text.lower().split()]
    ranked = sorted(Counter(w for w in words if w).items(), key=lambda p: (-p[1], p[0]))
    return ranked[:k] if k else ranked
