"""What every exercise's value rule builds on: the verdict and how an opaque value is named. Ships to the browser too."""

from __future__ import annotations

import math
from typing import Any


class WrongAnswer(AssertionError):
    """A test's verdict: the submission returned something other than the right answer."""


class Opaque:
    """A returned value that was not plain data; only its type's name crossed the sandbox."""

    def __init__(self, type_name: str):
        self.type_name = type_name

    def __repr__(self) -> str:
        return f"<{self.type_name} object>"


def describe(value: object) -> str:
    text = repr(value) if type(value) in (str, int, float, bool, type(None)) else object.__repr__(value)
    return text if len(text) <= 80 else text[:77] + "..."


def type_name(value: object) -> str:
    """A value's type as the sandbox names it: "float", "fractions.Fraction", an opaque value's own name."""
    if type(value) is Opaque:
        return value.type_name
    kind = type(value)
    return f"{kind.__module__}.{kind.__qualname__}".removeprefix("builtins.")


def same_plain(got: Any, want: Any, tolerance: float = 1e-9) -> bool:
    """Plain data equal to `want`, of the same shape: numbers within `tolerance`, a bool never a number."""
    if isinstance(want, bool) or want is None or isinstance(want, str):
        return type(got) is type(want) and got == want
    if isinstance(want, (int, float)):
        if type(got) not in (int, float) or type(got) is bool:
            return False
        return math.isfinite(float(got)) and abs(float(got) - float(want)) <= tolerance
    if isinstance(want, (list, tuple)):
        return type(got) in (list, tuple) and len(got) == len(want) and all(map(same_plain, got, want))
    if isinstance(want, dict):
        return type(got) is dict and got.keys() == want.keys() and all(same_plain(got[k], want[k]) for k in want)
    return False
