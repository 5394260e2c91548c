"""Gradescope's results.json format: one submission's result as Gradescope shows it to the student."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from grader.core import exercise
from grader.core.results import Status, SubmissionResult, TestResult

# When students see a test (its name and message) and whether what it printed is shown are each
# tier's, in exercise.toml: `gradescope_visibility` and `shows_printed` (docs/tests-and-tiers.md).
# A test of a tier the exercise does not declare is shown to nobody.
UNKNOWN_TIER_VISIBILITY = "hidden"

# Messages of the tiers whose inputs are secret are shown only when everything in them that
# the submission chose is a number; a returned string, an exception's text or a traceback
# could carry the input. Which messages are so is the exercise's value rule's to say
# (SAFE_MESSAGES, EXPECTED and WRONG_VALUE in its [seam] values module); without them, none is.
# The grader's own failures (runner.run's, grade._grader_failed's) quote pytest or an exception, which may
# quote a hidden test: the student gets a sentence, the instructor the details on stdout.
INTERNAL_FAILURES = ("the test run itself failed", "the grader failed on this submission")
GRADER_FAILED = "The autograder failed on this submission; your instructor can see why."
SECRET_DETAIL = {
    "fail": "it did not return the right answer",
    "error": "it raised an exception or crashed",
    "timeout": "it did not return in time",
    "not_run": "it was not run: the time for your submission was used up",
}


def to_gradescope(result: SubmissionResult, ex: exercise.Exercise) -> dict[str, Any]:
    """One submission's result on `ex` in Gradescope's results.json format, with the final score (adjusted, where it was)."""
    tests = []
    for number, test in enumerate(result.tests, start=1):
        tier = ex.tiers.get(test.tier)
        message = student_message(test, ex)
        lines = [message] if message else []
        if test.output and tier is not None and tier.shows_printed:
            lines.append("printed:\n" + test.output)
        tests.append(
            {
                "name": clean(f"{test.tier}: {test.name}"),
                "number": str(number),
                "score": test.score,
                "max_score": test.max_score,
                "status": "passed" if test.status == Status.PASS else "failed",
                "output": clean("\n".join(lines)),
                "visibility": tier.gradescope_visibility if tier is not None else UNKNOWN_TIER_VISIBILITY,
            }
        )
    output = _summary(result)
    if result.adjusted_score is not None:
        changes = "\n".join(f"- {a.describe()}" for a in result.adjustments or [])
        output = f"{clean(output)}\n\nThe tests gave {result.score:g}; adjusted:\n{changes}"
    return {
        "score": result.final_score,
        "execution_time": round(result.duration),
        "output": clean(output),
        # What the grader prints is for the instructor.
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def student_message(test: TestResult, ex: exercise.Exercise) -> str:
    """A test's message as a student may read it (the feedback files show the same).

    What the submission chose to say (an exception's text, a returned string) is shown only where
    every input it could have seen is public (docs/scoring.md): a tier that ships to the page runs
    before any secret one, in a child that never saw a secret input (Exercise.stages). Whole where
    its tier shows the input anyway (`shows_inputs`: a statement's example, a property's counterexample).
    """
    if test.message.startswith(INTERNAL_FAILURES):
        return GRADER_FAILED
    tier = ex.tiers.get(test.tier)
    if tier is not None and tier.public and tier.shows_inputs:
        return test.message
    return _secret_safe(test, ex, public=tier is not None and tier.public)


def _summary(result: SubmissionResult) -> str:
    message = result.message
    if message.startswith(INTERNAL_FAILURES):
        return GRADER_FAILED
    summary = message or f"{result.passed}/{len(result.tests)} tests passed"
    # The same sentence the page and `check` show; its example is a probe's or a visible test's input.
    text = result.diagnosis.text if result.diagnosis is not None else ""
    return f"{summary}\n\nDiagnosis: {text}" if text else summary


@cache
def _value_rule(ex: exercise.Exercise) -> tuple[re.Pattern, re.Pattern, str, str]:
    """(safe messages, the expected value's pattern, what a failure returned, what a safe failure returned)."""
    values = ex.module("values")
    never = r"(?!)"
    safe = re.compile("|".join(getattr(values, "SAFE_MESSAGES", ())) or never)
    expected = re.compile(getattr(values, "EXPECTED", never))
    wrong = getattr(values, "WRONG_VALUE", SECRET_DETAIL["fail"])
    return safe, expected, wrong, getattr(values, "OTHER_VALUE", "it returned another value")


def _secret_safe(test: TestResult, ex: exercise.Exercise, public: bool) -> str:
    """The message of a test whose input is not shown, without anything the submission could fill with an input.

    A `public` tier's tests (shipped to the page, their inputs not shown) keep the
    numbers they returned, as the page shows them. A secret tier's do not: a number can carry a
    few characters of the input, and with the input secret, the wrong number tells the student
    nothing they can act on.
    """
    safe_messages, expected_value, wrong_value, other_value = _value_rule(ex)
    message = test.message
    if not message or (public and safe_messages.fullmatch(message)):
        return message
    expected = expected_value.match(message)
    if safe_messages.fullmatch(message):
        detail = other_value
    elif test.status == Status.FAIL:
        detail = wrong_value
    else:
        detail = SECRET_DETAIL.get(test.status, "it did not pass")
    head = f"expected {expected.group(1)}, but {detail}" if expected else detail[0].upper() + detail[1:]
    return head + " (details are not shown for tests whose input is secret)"


# Unicode's control (Cc) and surrogate (Cs) code points, newline and tab apart: one regular
# expression, 10 times faster than asking unicodedata of every character of a long output.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def clean(text: str) -> str:
    """Valid UTF-8 text without control characters (newlines and tabs kept)."""
    return _UNSAFE.sub("\ufffd", text)
