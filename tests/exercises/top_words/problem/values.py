"""How a returned value is judged (exercise.toml [seam] values). Ships to the page: it imports grader.core only.

The tests call `expect`. Write your own checks beside it where plain equality is not the rule (a
tolerance, a rounding, an order that does not matter), each raising WrongAnswer with the message
students see. A `normalize(value)` here would say how the diagnosis compares answers; without
one, they are compared as plain data.
"""

from __future__ import annotations

from grader.core.checks import WrongAnswer, same_plain, type_name


def shown(value: object) -> str:
    """A value as a message shows it: its repr, cut short (what crossed the sandbox is plain data, or Opaque)."""
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def same(got: object, want: object) -> bool:
    """Plain data equal to `want`: the same shape (a list and a tuple alike), numbers within 1e-9, a bool never a number."""
    return same_plain(got, want)


def shape(got: object) -> str:
    """What is wrong with the answer's shape, or "": a list of (word, count) pairs, a string and an int."""
    if type(got) not in (list, tuple):
        return f"; top_words must return a list, not {type_name(got)}"
    for i, pair in enumerate(got):
        if type(pair) not in (list, tuple) or len(pair) != 2 or type(pair[0]) is not str or type(pair[1]) is not int:
            return f"; item {i} is {shown(pair)}, not a pair (word, count) of a string and an int"
    return ""


def expect(got: object, want: object, *, call: str | None = None) -> object:
    """Pass when `got` is `want`; else WrongAnswer, naming the call where the test shows its inputs."""
    if not same(got, want):
        where = f"{call}: " if call else ""
        raise WrongAnswer(f"{where}expected {shown(want)}, got {shown(got)}{shape(got)}")
    return got
