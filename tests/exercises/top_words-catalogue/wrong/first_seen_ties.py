import string
from collections import Counter

MISTAKE = "first_seen_ties"


def top_words(text, k=3):
    words = [w.strip(string.punctuation) for w in text.lower().split()]
    return Counter(w for w in words if w).most_common(k)
