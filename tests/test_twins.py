"""Twins built from tables (grader/core/twins.py): what they judge, what they say, and that their examples never change."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import KIT_ROOT
from hypothesis import strategies as st

from grader.core import exercise, replay, twins
from grader.core.checks import WrongAnswer
from grader.core.submission import LocalSubmission, SubmissionError
from grader.core.twins import call

WER = exercise.load(KIT_ROOT / "tests" / "exercises" / "wer")
PROPERTIES = WER.tests_dir / "test_properties.py"
WORDS = st.lists(st.sampled_from(["sun", "moon"]), min_size=1, max_size=4)
EXPECT = WER.module("values").expect
# The test modules' tier mark is registered by their own conftest, which these tests do not load.
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnknownMarkWarning")


def submission(body: str) -> LocalSubmission:
    return LocalSubmission(f"def word_error_rate(reference, hypothesis, detail=False):\n    {body}\n", WER.function)


def test_an_answer_twin_is_judged_by_the_reference_and_names_the_expected_value_not_the_input():
    twin = twins.answers(WER, {"hidden-a_deletion": call("secret words here", "secret here")}, check=EXPECT)["hidden-a_deletion"]
    twin(submission("return 0.333"))
    with pytest.raises(WrongAnswer) as failed:
        twin(submission("return 0.5"))
    assert str(failed.value) == "the same rule as the hidden test a_deletion, on an input you never see: expected 0.333, got 0.5"


def test_a_crash_in_a_twin_says_its_exception_type_only():
    twin = twins.answers(WER, {"hidden-a_deletion": call("secret words", "secret")}, check=EXPECT)["hidden-a_deletion"]
    with pytest.raises(SubmissionError) as crashed:
        twin(submission("raise ValueError(reference)"))
    assert crashed.value.message.endswith("expected 0.5, but word_error_rate raised ValueError")
    assert "secret" not in crashed.value.message and crashed.value.traceback == ""


def test_a_property_twin_runs_the_visible_body_on_its_own_examples():
    found = twins.properties(PROPERTIES, {"ws": WORDS, "a": WORDS, "b": WORDS})
    assert list(found) == [
        "properties-identical_texts_have_no_errors",
        "properties-case_does_not_change_the_rate",
        "properties-detail_agrees_with_the_rate",
    ]
    twin = found["properties-case_does_not_change_the_rate"]
    assert twin.examples and all(set(e["a"] + e["b"]) <= {"sun", "moon"} for e in twin.examples)
    twin(LocalSubmission((WER.root / "solutions" / "reference.py").read_text(), WER.function))
    with pytest.raises(WrongAnswer, match=r"^the same rule as the properties test case_does_not_change_the_rate, .*rate changed"):
        twin(submission("return float(reference.count('S'))"))


def test_a_property_twin_that_would_draw_what_its_visible_test_draws_is_refused():
    with pytest.raises(ValueError, match="test_identical_texts_have_no_errors would draw what it draws"):
        twins.properties(PROPERTIES, {"a": WORDS, "b": WORDS})
    with pytest.raises(ValueError, match="no property test is named"):
        twins.properties(PROPERTIES, {"ws": WORDS, "a": WORDS, "b": WORDS}, {"no_such_test": {"a": WORDS}})


def test_examples_the_reference_fails_are_the_exercises_mistake_said_at_once():
    # METEOR's "no common word" property, on candidates drawn from the reference's own words.
    found = twins.properties(
        KIT_ROOT / "hidden_tests" / "test_properties.py",
        dict.fromkeys(["reference", "candidate", "tokens", "other", "matched"], WORDS),
    )
    with pytest.raises(ValueError, match="the reference fails the twin of properties-no_common_word_scores_0"):
        _ = found["properties-no_common_word_scores_0"].examples


DRAW = """
import json, sys
sys.path.insert(0, sys.argv[1])
from grader.core import exercise, replay, twins
from hypothesis import strategies as st
WORDS = st.lists(st.sampled_from(["sun", "moon"]), min_size=1, max_size=4)
found = twins.properties(exercise.load(sys.argv[2]).tests_dir / "test_properties.py", {"ws": WORDS, "a": WORDS, "b": WORDS})
print(json.dumps({key: [replay.kept_as_json(e) for e in twin._draw()] for key, twin in found.items()}))
"""


def test_a_property_twin_draws_the_same_examples_in_every_process():
    # The memo and the kept examples rely on it: a fresh process, having imported other modules, draws them alike.
    found = twins.properties(PROPERTIES, {"ws": WORDS, "a": WORDS, "b": WORDS})
    here = {key: [replay.kept_as_json(e) for e in twin._draw()] for key, twin in found.items()}
    done = subprocess.run([sys.executable, "-c", DRAW, str(KIT_ROOT), str(WER.root)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == here and all(len(examples) == twins.EXAMPLES for examples in here.values())
