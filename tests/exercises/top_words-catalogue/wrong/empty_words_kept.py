import string

MISTAKE = "empty_words_kept"


def top_words(text, k=3):
    counts = {}
    for word in text.lower().split():
        word = word.strip(string.punctuation)
        counts[word] = counts.get(word, 0) + 1
    return sorted(counts.items(), key=lambda p: (-p[1], p[0]))[:k]
