import string


def top_words(text, k=3):
    counts = {}
    for raw in text.split():
        word = raw.lower().strip(string.punctuation)
        if word != "":
            if word in counts:
                counts[word] += 1
            else:
                counts[word] = 1
    pairs = sorted(counts.items())  # alphabetical first; the stable sort by count keeps it for ties
    pairs.sort(key=lambda pair: pair[1], reverse=True)
    result = []
    for pair in pairs:
        if len(result) == k:
            break
        result.append(pair)
    return result
