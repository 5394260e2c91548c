import string
from collections import Counter

NO_PUNCTUATION = str.maketrans("", "", string.punctuation)

MISTAKE = "punctuation_removed_inside"


def top_words(text, k=3):
    words = text.lower().translate(NO_PUNCTUATION).split()
    return sorted(Counter(words).items(), key=lambda p: (-p[1], p[0]))[:k]
