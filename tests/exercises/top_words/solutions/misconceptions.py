"""The misconception models, the probes and the rules' words (exercise.toml [seam] trusted). Never shipped.

A model is the reference with one rule broken as students break it. The engine runs the reference
and every model on the probes; a failing submission that agrees with a model wherever the model
differs from the reference is told that mistake (docs/feedback.md). Where none fits, the diagnosis
names the rules whose tests fail, in RULES's words.
"""

from __future__ import annotations

import string
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

RULES = {
    "words": ("rule 1, Words", "lowercase, split with str.split(), strip punctuation from both ends, drop empty words"),
    "counts": ("rule 2, Counts", "count how many times each word occurs"),
    "order": ("rule 3, Order", "the most frequent word first, words with the same count in alphabetical order"),
    "top": ("rule 4, Top k", "return the first k pairs, or all of them when there are fewer"),
    "pairs": ("rule 5, Pairs", "return a list of (word, count) pairs"),
}
P = string.punctuation


def tokens(text: str) -> list[str]:
    return [w.strip(P) for w in text.lower().split() if w.strip(P)]


def top(text, k=3, *, words=tokens, rank=None, take=None, shape=list):
    """The reference's steps, each of which a model replaces: words, counts, order, the first k, pairs."""
    counts = Counter(words(text))  # in the order first seen
    ranked = rank(counts) if rank else sorted(counts.items(), key=lambda pair: (-pair[1], pair[0]))
    return shape(take(ranked, k) if take else ranked[:k])


@dataclass(frozen=True)
class Model:
    id: str
    when: str  # completes "Your scores match what happens when ..."
    section: str  # where its rule lives in the statement
    rule: str  # the rule it breaks, as the statement says it
    breaks: str  # that rule's id in [scoring.rules]
    answer: Callable[..., object]  # what the function returns with this mistake

    def top_words(self, *args, **kwargs):
        return self.answer(*args, **kwargs)


def model(id: str, when: str, breaks: str, rule: str, **step: Callable) -> Model:
    return Model(id, when, RULES[breaks][0], rule, breaks, partial(top, **step))


MODELS = [
    model(
        "no_lowercase",
        "the text is not lowercased",
        "words",
        "lowercase the text with str.lower()",
        words=lambda t: [w.strip(P) for w in t.split() if w.strip(P)],
    ),
    model(
        "split_on_space",
        "the text is split on single spaces",
        "words",
        "split with str.split(), on any whitespace",
        words=lambda t: [w.strip(P) for w in t.lower().split(" ") if w.strip(P)],
    ),
    model(
        "punctuation_kept",
        "punctuation is left on the words",
        "words",
        "strip punctuation from both ends of each word",
        words=lambda t: t.lower().split(),
    ),
    model(
        "punctuation_removed_inside",
        "punctuation is removed inside words too",
        "words",
        "strip punctuation from the ends only: don't stays don't",
        words=lambda t: [w for w in ("".join(c for c in w if c not in P) for w in t.lower().split()) if w],
    ),
    model(
        "empty_words_kept",
        "words left empty are counted",
        "words",
        "drop a word left empty (--)",
        words=lambda t: [w.strip(P) for w in t.lower().split()],
    ),
    model(
        "first_seen_ties",
        "ties stay in the order first seen (Counter.most_common)",
        "order",
        "words with the same count in alphabetical order",
        rank=lambda counts: counts.most_common(),
    ),
    model(
        "reverse_ties",
        "ties are in reverse alphabetical order",
        "order",
        "words with the same count in alphabetical order",
        rank=lambda counts: sorted(counts.items(), key=lambda pair: (pair[1], pair[0]), reverse=True),
    ),
    model("k_ignored", "every word is returned, whatever k", "top", "return the first k pairs", take=lambda ranked, k: ranked),
    model(
        "one_more_than_k", "k + 1 pairs are returned", "top", "return the first k pairs", take=lambda ranked, k: ranked[: k + 1]
    ),
    model(
        "count_then_word",
        "each pair is (count, word)",
        "pairs",
        "each pair is (word, count)",
        shape=lambda pairs: [(count, word) for word, count in pairs],
    ),
    model("returns_dict", "a dict is returned", "pairs", "return a list of (word, count) pairs", shape=dict),
]
PAIRS: list = []  # optional: models of two mistakes at once, each with `parts` (two ids)

# The statement's examples (test_examples.py), then our own inputs: each separates some models from the reference.
EXAMPLES = [("The cat and the hat.", {"k": 2}), ("a b b c c c d", {}), ("Hello, hello!", {"k": 5})]
OURS = [
    ("Dog dog DOG cat", {}),
    ("sun\tmoon\nsun", {}),
    ("Hi! hi, hi.", {}),
    ("it's its it's", {}),
    ("a -- b ... a", {}),
    ("zebra apple mango", {}),
    ("x y z w v", {"k": 2}),
    ("b a b", {"k": 1}),
    ("one two", {"k": 0}),
    ("", {}),
]


def probes() -> list[dict]:
    """The diagnosis's inputs: the statement's examples, then ours. Never a hidden test's input: probes are quoted."""
    return [{"args": [t], "kwargs": kw, "origin": "examples"} for t, kw in EXAMPLES] + [
        {"args": [t], "kwargs": kw, "origin": "probe"} for t, kw in OURS
    ]
