import string

MISTAKE = "k_ignored"


def top_words(text, k=3):
    counts = {}
    for word in text.lower().split():
        word = word.strip(string.punctuation)
        if word:
            counts[word] = counts.get(word, 0) + 1
    return sorted(counts.items(), key=lambda p: (-p[1], p[0]))
