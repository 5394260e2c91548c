import string
from collections import Counter


def top_words(text, k=3):
    words = (word.strip(string.punctuation) for word in text.lower().split())
    counts = Counter(word for word in words if word)
    return sorted(counts.items(), key=lambda pair: (-pair[1], pair[0]))[:k]
