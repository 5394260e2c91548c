"""The METEOR exercise's value rule: a score is a float in [0, 1] rounded to 3 decimals. Ships to the page.

The engine's seam (exercise.toml's [seam] values): the tests judge with `expect_score` and
`expect_valid_score`; the diagnosis compares answers after `normalize`.
"""

from __future__ import annotations

import math
from typing import Any

from grader.core.checks import Opaque, WrongAnswer, describe

DECIMALS = 3
HALF_STEP = 0.5 * 10**-DECIMALS
# Two correct implementations may compute the unrounded score in a different order;
# this slack lets either side of a near-tie pass without letting a wrong digit through.
FLOAT_SLACK = 1e-9


# For Gradescope: the messages of secret-input tiers that may be shown whole, because all the
# submission chose in them is a number (a returned string or an exception could carry the input).
NUMBER = r"-?(?:\d+(?:\.\d*)?(?:e[-+]?\d+)?|inf|nan)"
RULE = r"(?: \[rule: [^\[\]\n]*\])?"
SAFE_MESSAGES = (
    rf"expected {NUMBER}(?: or {NUMBER})?, got {NUMBER}(?: \(not rounded to 3 decimals\))?{RULE}",
    rf"the fragmented candidate scored {NUMBER}, not lower than the contiguous one \({NUMBER}\){RULE}",
    rf"an exact match of \d+ words should score at least {NUMBER}, got {NUMBER}{RULE}",
)
EXPECTED = rf"expected ({NUMBER}(?: or {NUMBER})?)[,:]"  # the expected value, kept in a hidden message
WRONG_VALUE = "it returned something that is not a float"  # a failed test whose message is not shown
OTHER_VALUE = "it returned another number"  # a safe message of the private tier, not shown


def to_real(got: object) -> float:
    """The plain float behind a result, or WrongAnswer saying what type came back."""
    kind = type(got)
    if kind is Opaque:
        raise WrongAnswer(f"meteor_score returned {got.type_name}; it must return a float")
    if kind is bool or got is None or kind is str:
        raise WrongAnswer(f"meteor_score returned {kind.__name__} {describe(got)}; it must return a float")
    # issubclass on the real type: isinstance would trust an object's own __class__.
    if issubclass(kind, float):
        value = float.__float__(got)  # drops any subclass and its overridden operators
    elif kind is int:  # not a subclass: the sandbox passes only a plain int, and the browser must agree
        value = float(got) if abs(got) < 2**1023 else math.inf
    else:
        # Fraction, Decimal and the like too: the sandbox only lets int and float through as numbers,
        # so the browser must not accept more than the grader.
        name = f"{kind.__module__}.{kind.__qualname__}".removeprefix("builtins.")  # as the sandbox names it
        raise WrongAnswer(f"meteor_score returned {name}; it must return a float")
    if math.isnan(value) or math.isinf(value):
        raise WrongAnswer(f"meteor_score returned float {value}; the score is always a number between 0 and 1")
    return value


def is_rounded(value: float) -> bool:
    scaled = value * 10**DECIMALS
    return abs(scaled - round(scaled)) < 1e-6


def correct_roundings(exact: float) -> list[float]:
    """Every 3-decimal value that is a correct rounding of `exact` (two at a tie)."""
    scaled = exact * 10**DECIMALS
    low, high = math.floor(scaled), math.ceil(scaled)
    options = {n / 10**DECIMALS for n in (low, high)}
    return sorted(v for v in options if abs(v - exact) <= HALF_STEP + FLOAT_SLACK)


def expected_text(exact: float) -> str:
    """The accepted answers, as messages show them: "0.812 or 0.813" at a tie."""
    return " or ".join(repr(v) for v in correct_roundings(exact))


def expect_score(got: object, exact: float, *, rule: str | None = None, call: str | None = None) -> float:
    """Pass when `got` is a correct 3-decimal rounding of the true score `exact`."""
    expected = expected_text(exact)
    where = f"{call}: " if call else ""
    because = f" [rule: {rule}]" if rule else ""
    try:
        value = to_real(got)
    except WrongAnswer as exc:
        raise WrongAnswer(f"{where}expected {expected}, but {exc}{because}") from None
    accepted = correct_roundings(exact)
    if is_rounded(value) and any(abs(value - ok) < 1e-9 for ok in accepted):
        return value
    note = "" if is_rounded(value) else " (not rounded to 3 decimals)"
    raise WrongAnswer(f"{where}expected {expected}, got {value!r}{note}{because}")


def expect_valid_score(got: object) -> float:
    """The invariant every result must satisfy: a real number in [0, 1] with 3 decimals."""
    value = to_real(got)
    if not 0.0 <= value <= 1.0:
        raise WrongAnswer(f"the score must lie between 0 and 1, got {value!r}")
    if not is_rounded(value):
        raise WrongAnswer(f"the score must be rounded to 3 decimals, got {value!r}")
    return value


def normalize(value: Any) -> Any:
    """A returned score as the diagnosis compares it: a float, None, or {"type": name} for anything else."""
    if value is None:
        return None
    if isinstance(value, bool):
        return {"type": "bool"}
    if isinstance(value, float):
        number = float.__float__(value)
    elif isinstance(value, int):
        number = float(int.__index__(value))
    else:
        return {"type": getattr(value, "type_name", type(value).__name__)}
    if math.isnan(number) or math.isinf(number):
        return {"type": str(number)}
    return number
