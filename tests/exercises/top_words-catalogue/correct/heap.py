import heapq
from collections import defaultdict
from string import punctuation


def top_words(text, k=3):
    counts = defaultdict(int)
    for word in text.lower().split():
        word = word.strip(punctuation)
        if word:
            counts[word] += 1
    return heapq.nsmallest(k, counts.items(), key=lambda item: (-item[1], item[0]))
