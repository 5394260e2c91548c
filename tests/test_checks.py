"""grader/core/checks.py judges a returned value; cheating values never pass, in-process or through the sandbox."""

from __future__ import annotations

import functools
import json
import math
import subprocess
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
from conftest import KIT_ROOT, load_module

from grader.core import exercise
from grader.core.checks import Opaque, WrongAnswer
from grader.core.runner import run
from grader.core.submission import LocalSubmission

# The exercise's value rule (exercise.toml [seam] values): the engine's checks hold no METEOR rule.
EXERCISE = exercise.load(KIT_ROOT)
VALUES = EXERCISE.module("values")
correct_roundings, expect_score, expect_valid_score, to_real = (
    VALUES.correct_roundings,
    VALUES.expect_score,
    VALUES.expect_valid_score,
    VALUES.to_real,
)

# The constants and the hard-coder pass tests on purpose: the grading policy is what makes them
# earn nothing (tests/test_catalogue.py). Every other cheat must not pass a single test.
CHEATS = sorted(
    p for p in (KIT_ROOT / "tests" / "catalogue" / "cheat").glob("*.py") if not p.stem.startswith(("returns_", "hard_codes_"))
)


# ---------------------------------------------------------------- correct roundings


@pytest.mark.parametrize("got", [0.812, 0.813])
def test_either_rounding_of_an_exact_tie_passes(got):
    assert 0.8125 * 1000 == 812.5  # a true tie in binary, not a near one
    assert expect_score(got, 0.8125) == got


@pytest.mark.parametrize("got", [0.811, 0.814, 0.8125])
def test_only_the_two_roundings_of_a_tie_pass(got):
    with pytest.raises(WrongAnswer):
        expect_score(got, 0.8125)


def test_the_rounding_of_a_value_that_is_not_a_tie_is_the_only_answer():
    assert correct_roundings(5 / 11) == [0.455]
    assert expect_score(0.455, 5 / 11) == 0.455
    with pytest.raises(WrongAnswer, match=r"^expected 0\.455, got 0\.454$"):
        expect_score(0.454, 5 / 11)


def test_half_up_and_half_even_agree_with_the_tie_rule():
    # Python's round() gives half-even on the binary value; Decimal's ROUND_HALF_UP the other one.
    assert round(0.8125, 3) == 0.812
    assert float(Decimal(0.8125).quantize(Decimal("0.001"), rounding="ROUND_HALF_UP")) == 0.813
    assert correct_roundings(0.8125) == [0.812, 0.813]


def test_a_near_tie_computed_in_another_order_passes_either_way():
    exact = 0.6375  # stored as 0.63749999999999995...; another formula may land just above
    assert set(correct_roundings(exact)) == {0.637, 0.638}
    assert correct_roundings(0.6376) == [0.638]


@pytest.mark.parametrize("got", [0, 0.0, 1, 1.0])
def test_an_int_or_a_float_is_a_real_number(got):
    assert expect_score(got, float(got)) == float(got)


def test_a_wrong_digit_fails_saying_expected_and_got():
    with pytest.raises(WrongAnswer, match=r"^expected 0\.625, got 0\.626$"):
        expect_score(0.626, 0.625)


def test_an_unrounded_result_fails_saying_so():
    with pytest.raises(WrongAnswer) as caught:
        expect_score(5 / 11, 5 / 11)
    assert str(caught.value) == "expected 0.455, got 0.45454545454545453 (not rounded to 3 decimals)"


def test_a_result_of_the_wrong_type_says_what_was_expected_and_the_rule():
    with pytest.raises(WrongAnswer) as caught:
        expect_score("0.625", 0.625, rule="Score: rounded")
    assert (
        str(caught.value)
        == "expected 0.625, but meteor_score returned str '0.625'; it must return a float [rule: Score: rounded]"
    )


def test_the_rule_and_the_call_go_into_the_message():
    with pytest.raises(WrongAnswer) as caught:
        expect_score(0.5, 0.625, rule="Score: rounded", call="meteor_score('a', 'b')")
    assert str(caught.value) == "meteor_score('a', 'b'): expected 0.625, got 0.5 [rule: Score: rounded]"


def test_a_valid_score_is_rounded_and_between_0_and_1():
    assert expect_valid_score(0.5) == 0.5
    for bad, why in [(1.001, "between 0 and 1"), (-0.001, "between 0 and 1"), (0.5004, "rounded to 3 decimals")]:
        with pytest.raises(WrongAnswer, match=why):
            expect_valid_score(bad)


# ---------------------------------------------------------------- not a real number


@pytest.mark.parametrize(
    "got, named",
    [
        (True, "bool True"),
        (False, "bool False"),
        (None, "NoneType None"),
        ("0.625", "str '0.625'"),
        (math.nan, "float nan"),
        (math.inf, "float inf"),
        (-math.inf, "float -inf"),
        ([0.625], "list"),
        ({"score": 0.625}, "dict"),
        (Fraction(5, 8), "fractions.Fraction"),
        (Decimal("0.625"), "decimal.Decimal"),
        (0.625j, "complex"),
        (Opaque("submission.Thing"), "submission.Thing"),
    ],
    ids=repr,
)
def test_a_result_that_is_not_a_real_number_fails_naming_its_type(got, named):
    with pytest.raises(WrongAnswer) as caught:
        expect_score(got, 0.625)
    assert f"meteor_score returned {named}" in str(caught.value)
    with pytest.raises(WrongAnswer):
        expect_valid_score(got)


def test_a_long_string_is_cut_in_the_message():
    with pytest.raises(WrongAnswer) as caught:
        to_real("x" * 1000)
    assert len(str(caught.value)) < 150


# ---------------------------------------------------------------- operators that lie


class AlwaysEqual:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __lt__ = __le__ = __gt__ = __ge__ = __eq__

    def __float__(self):
        return 0.625

    def __index__(self):
        return 0

    def __round__(self, ndigits=None):
        return self

    def __sub__(self, other):
        return 0.0

    __rsub__ = __sub__

    def __abs__(self):
        return 0.0

    __hash__ = object.__hash__


class LyingFloat(float):
    __eq__ = AlwaysEqual.__eq__
    __ne__ = AlwaysEqual.__ne__
    __lt__ = __le__ = __gt__ = __ge__ = AlwaysEqual.__eq__
    __float__ = AlwaysEqual.__float__
    __round__ = AlwaysEqual.__round__
    __sub__ = __rsub__ = AlwaysEqual.__sub__
    __abs__ = AlwaysEqual.__abs__
    __hash__ = float.__hash__

    def __repr__(self):
        return "0.625"


class LyingInt(int):
    __eq__ = AlwaysEqual.__eq__
    __ne__ = AlwaysEqual.__ne__
    __lt__ = __le__ = __gt__ = __ge__ = AlwaysEqual.__eq__
    __float__ = AlwaysEqual.__float__
    __index__ = AlwaysEqual.__index__
    __hash__ = int.__hash__


class PretendsToBeAFloat(AlwaysEqual):
    @property
    def __class__(self):
        return float


def test_an_object_that_equals_everything_never_passes():
    assert AlwaysEqual() == 0.625  # the trap is real
    with pytest.raises(WrongAnswer, match=r"returned test_checks\.AlwaysEqual; it must return a float"):
        expect_score(AlwaysEqual(), 0.625)


def test_a_float_subclass_is_judged_by_its_real_value():
    liar = LyingFloat(7.0)
    assert liar == 0.625 and abs(liar - 0.625) == 0.0 and float(liar) == 0.625  # the trap is real
    with pytest.raises(WrongAnswer, match=r"^expected 0\.625, got 7\.0$"):
        expect_score(liar, 0.625)
    with pytest.raises(WrongAnswer, match="between 0 and 1"):
        expect_valid_score(liar)


def test_a_float_subclass_with_the_right_value_passes_as_a_plain_float():
    got = expect_score(LyingFloat(0.625), 0.625)
    assert type(got) is float and got == 0.625


def test_an_int_subclass_is_not_an_int():
    # The sandbox lets only a plain int through, so the browser's judge refuses a subclass too.
    liar = LyingInt(7)
    assert liar == 0.625 and float(liar) == 0.625  # the trap is real
    with pytest.raises(WrongAnswer, match=r"but meteor_score returned test_checks\.LyingInt; it must return a float$"):
        expect_score(liar, 0.625)


def test_a_huge_int_is_infinite_not_a_crash():
    with pytest.raises(WrongAnswer, match="returned float inf"):
        to_real(10**400)


def test_an_object_that_fakes_its_class_is_not_a_float():
    fake = PretendsToBeAFloat()
    assert isinstance(fake, float)  # isinstance believes __class__
    with pytest.raises(WrongAnswer, match="PretendsToBeAFloat; it must return a float"):
        expect_score(fake, 0.625)


# ---------------------------------------------------------------- cheating submissions


@functools.cache
def check_json(path: Path) -> dict:
    """`meteor-kit check --json` on one file (once per file: each run takes seconds)."""
    done = subprocess.run(
        [str(KIT_ROOT / ".venv" / "bin" / "meteor-kit"), "check", str(path), "--json"],
        cwd=KIT_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 1, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_there_are_cheats_to_try():
    assert len(CHEATS) >= 6


@pytest.mark.parametrize("path", CHEATS, ids=[p.stem for p in CHEATS])
def test_a_cheating_submission_gets_zero_credit_through_the_sandbox(meteor_kit, path):
    assert meteor_kit.exists()
    report = check_json(path)
    assert report["tests"], report["message"]
    assert report["score"] == 0 and report["passed"] == 0
    assert {t["tier"] for t in report["tests"]} == {"examples", "hidden", "properties", "private"}
    assert all(t["status"] != "pass" and t["score"] == 0 and t["message"] for t in report["tests"])


def test_an_object_returned_from_the_sandbox_crosses_as_its_type_name():
    report = check_json(KIT_ROOT / "tests" / "catalogue" / "cheat" / "always_equal.py")
    for test in report["tests"]:
        assert "meteor_score returned submission.Anything; it must return a float" in test["message"]
        if test["tier"] != "properties" and "[properties-" not in test["name"]:  # nor the properties' twins
            assert "expected " in test["message"] and ", but meteor_score returned" in test["message"], test


def test_a_float_subclass_from_the_sandbox_arrives_as_its_plain_value():
    report = check_json(KIT_ROOT / "tests" / "catalogue" / "cheat" / "float_subclass.py")
    worked = next(t for t in report["tests"] if t["name"] == "test_statement_example[worked_example]")
    assert worked["message"].endswith("expected 0.625, got 7.0")


def test_printed_pass_lines_stay_output_not_a_verdict():
    report = check_json(KIT_ROOT / "tests" / "catalogue" / "cheat" / "prints_passed.py")
    first = report["tests"][0]
    assert first["status"] == "fail" and "PASSED" in first["output"]
    assert report["status"] == "graded" and report["score"] == 0


def test_the_frame_peeker_would_pass_in_process_so_the_sandbox_is_what_stops_it():
    path = KIT_ROOT / "tests" / "catalogue" / "cheat" / "frame_peeker.py"
    report = run(
        EXERCISE, lambda: LocalSubmission(path.read_text(), EXERCISE.function, filename=path.name), path.name, tiers=("hidden",)
    )
    assert report.passed > len(report.tests) // 2


def test_the_test_reader_would_pass_without_the_jail_so_the_jail_is_what_stops_it(monkeypatch):
    monkeypatch.chdir(KIT_ROOT)
    module = load_module(KIT_ROOT / "tests" / "catalogue" / "cheat" / "reads_tests.py", "cheat_reads_tests")
    assert module.meteor_score("THE Cat SAT", "the cat sat") == 0.981


def test_a_test_stopped_by_the_budget_shows_the_budget_s_own_words_whatever_it_added():
    # The hidden tests add to a failure's message ("expected 0.5, but ..."). Which test was running
    # when the budget ran out is timing: a not_run reads the same as one the budget stopped before it began.
    from grader.core import runner
    from grader.core.submission import SubmissionError

    spent = "not run: the submission used up its time budget of 60 s"
    stopped = SubmissionError("not_run", spent)
    stopped.message = f"expected 0.5, but {stopped.message} [rule: the penalty]"
    assert runner._classify(stopped, shows_inputs=True) == ("not_run", spent)
    timed_out = SubmissionError("timeout", "the call took longer than 2 s")
    timed_out.message = f"expected 0.5, but {timed_out.message}"
    assert runner._classify(timed_out, shows_inputs=False) == ("timeout", "expected 0.5, but the call took longer than 2 s")
