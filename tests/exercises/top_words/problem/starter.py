def top_words(text, k=3):
    """Return the k most frequent words of text as (word, count) pairs, most frequent first, ties alphabetical."""
    raise NotImplementedError("write top_words here")
