"""The reference solution: the twins, the private tier and the diagnosis take their answers from it. Never shipped."""


def top_words(text, k=3):
    # TODO: write the reference here. `meteor-kit check --exercise DIR DIR/solutions/reference.py` then passes
    # every test once the tests check your rules; the template's tests check the placeholder rule
    # (return [text, k]). Until you replace it, this placeholder fails them, and `meteor-kit audit` says so.
    return "TODO: write top_words in solutions/reference.py"
