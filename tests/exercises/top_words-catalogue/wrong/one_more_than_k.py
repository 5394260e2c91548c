import string

MISTAKE = "one_more_than_k"


def top_words(text, k=3):
    counts = {}
    for word in text.lower().split():
        word = word.strip(string.punctuation)
        if word:
            counts[word] = counts.get(word, 0) + 1
    ranked = sorted(counts.items(), key=lambda p: (-p[1], p[0]))
    result = []
    for i in range(k + 1):
        if i < len(ranked):
            result.append(ranked[i])
    return result
