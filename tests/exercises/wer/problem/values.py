"""The WER exercise's value rule: a rate is a float rounded to 3 decimals; the detail is a dict. Ships to the page.

No `normalize` here: the diagnosis compares answers as plain data, the engine's default.
"""

from __future__ import annotations

import math

from grader.core.checks import WrongAnswer, describe, type_name

DETAIL_KEYS = ("wer", "errors", "words")


def expected_text(exact: float) -> str:
    return repr(round(exact, 3))


def _rate(got: object, where: str) -> float:
    if type(got) is bool or type(got) not in (int, float):
        raise WrongAnswer(f"{where}word_error_rate returned {type_name(got)} {describe(got)}; it must return a float")
    value = float(got)
    if not math.isfinite(value) or value < 0:
        raise WrongAnswer(f"{where}word_error_rate returned {value!r}; a rate is a finite number, at least 0")
    return value


def expect_rate(got: object, exact: float, *, call: str | None = None) -> float:
    """Pass when `got` is `exact` rounded to 3 decimals."""
    where = f"{call}: " if call else ""
    value = _rate(got, where)
    want = round(exact, 3)
    if abs(value - want) > 1e-9:
        raise WrongAnswer(f"{where}expected {want!r}, got {value!r}")
    return value


def expect_detail(got: object, want: dict, *, call: str | None = None) -> dict:
    """Pass when `got` is the detail dict: exactly the keys wer, errors, words, with the right values."""
    where = f"{call}: " if call else ""
    if type(got) is not dict:
        raise WrongAnswer(
            f"{where}expected {want!r}, but word_error_rate returned {type_name(got)}; with detail=True it must return a dict"
        )
    if sorted(got, key=str) != sorted(DETAIL_KEYS):
        raise WrongAnswer(f"{where}expected the keys {list(DETAIL_KEYS)}, got {sorted(map(repr, got))}")
    for name in ("errors", "words"):
        if type(got[name]) is not int or got[name] != want[name]:
            raise WrongAnswer(f"{where}expected {name} = {want[name]!r}, got {describe(got[name])}")
    expect_rate(got["wer"], want["wer"], call=call)
    return got


def expect(got: object, want: object, *, call: str | None = None) -> object:
    """Pass when `got` is `want`: the detail dict when `want` is one, else the rate."""
    return expect_detail(got, want, call=call) if isinstance(want, dict) else expect_rate(got, want, call=call)
