"""Helper module: the tokens of a text."""


def tokenize(text):
    return text.lower().split()
