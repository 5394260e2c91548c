"""The diagnosis, measured on the catalogue of wrong and correct solutions."""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.core import diagnosis as diagnosis_core
from grader.core import exercise, replay
from grader.core.submission import SubmissionError, load_local
from grader.judging import diagnose
from tests.conftest import KIT_ROOT, load_module

EXERCISE = exercise.load(KIT_ROOT)
# The exercise's misconception models (exercise.toml [seam] trusted).
_TRUSTED = diagnose.trusted(EXERCISE)
BY_ID, MODELS, SAME_SCORES_AS, find = _TRUSTED.BY_ID, _TRUSTED.MODELS, _TRUSTED.SAME_SCORES_AS, _TRUSTED.find

CATALOGUE = KIT_ROOT / "tests" / "catalogue"
WRONG = sorted((CATALOGUE / "wrong").glob("*.py"))
CORRECT = sorted((CATALOGUE / "correct").glob("*.py"))
REQUIRED_ACCURACY = 0.8

# Loading hidden_tests/test_hidden.py for its cases registers no `tier` mark here; that is fine.
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnknownMarkWarning")


def mistake_of(path: Path) -> str:
    return load_module(path, f"catalogue_{path.stem}").MISTAKE


def names(model_id: str | None, mistake: str) -> bool:
    """The diagnosis names `mistake` itself, a form of it, or a model that gives the very same scores."""
    if model_id is None:
        return False
    return mistake in (model_id, find(model_id).mistake) or SAME_SCORES_AS.get(mistake) == model_id


def outputs_of(path: Path) -> list:
    # In-process: the catalogue is our own trusted code (meteor-kit check and grade use the sandbox).
    return diagnosis_core.run_probes(
        load_module(path, f"catalogue_run_{path.stem}"), diagnose.browser_table(EXERCISE), diagnose.value_normalize(EXERCISE)
    )


@pytest.fixture(scope="module")
def catalogue_outputs() -> dict[Path, list]:
    """Each catalogue solution's answers to the probes."""
    return {path: outputs_of(path) for path in WRONG + CORRECT}


def diagnosis_of(outputs: list) -> dict | None:
    return diagnosis_core.diagnose_outputs(outputs, diagnose.browser_table(EXERCISE))


def test_the_catalogue_is_big_enough():
    assert len(WRONG) >= 25
    assert len(CORRECT) >= 1


def test_the_diagnosis_names_the_right_mistake_for_most_wrong_solutions(catalogue_outputs):
    named, missed = [], []
    for path in WRONG:
        found = diagnosis_of(catalogue_outputs[path])
        (named if found and names(found["mistake"], mistake_of(path)) else missed).append(path.stem)
    accuracy = len(named) / len(WRONG)
    print(f"\ndiagnosis accuracy: {len(named)}/{len(WRONG)} = {accuracy:.0%}; missed: {', '.join(missed) or 'none'}")
    assert accuracy >= REQUIRED_ACCURACY, f"only {accuracy:.0%}; missed {missed}"


@pytest.mark.parametrize("path", CORRECT, ids=[p.stem for p in CORRECT])
def test_a_correct_solution_gets_no_diagnosis(catalogue_outputs, path):
    assert diagnosis_of(catalogue_outputs[path]) is None


def test_the_reference_gets_no_diagnosis():
    assert (
        diagnose.diagnose_submission(EXERCISE, load_local(str(KIT_ROOT / "solutions" / "reference.py"), EXERCISE.function))
        is None
    )


def test_a_diagnosis_never_names_a_mistake_the_submission_does_not_make(catalogue_outputs):
    """Checked against the model itself, not the table: every difference it makes is reproduced."""
    probes = diagnose.probes(EXERCISE)
    reference = load_module(KIT_ROOT / "solutions" / "reference.py", "meteor_reference_check")
    for path, outputs in catalogue_outputs.items():
        found = diagnosis_of(outputs)
        if not found or found["mistake"] is None:
            continue
        model = find(found["mistake"])
        differences = 0
        for probe, got in zip(probes, outputs):
            want = diagnosis_core.run_probes(
                reference, {"function": "meteor_score", "probes": [probe]}, diagnose.value_normalize(EXERCISE)
            )[0]
            modelled = diagnosis_core.run_probes(
                model, {"function": "meteor_score", "probes": [probe]}, diagnose.value_normalize(EXERCISE)
            )[0]
            if not diagnosis_core.agree(modelled, want):
                differences += 1
                assert diagnosis_core.agree(got, modelled), (
                    f"{path.stem}: {model.id} on {diagnosis_core.call_text(probe, 'meteor_score')}"
                )
        assert differences > 0


def test_every_model_differs_from_the_reference_and_from_every_other_model():
    table = diagnose.browser_table(EXERCISE)
    for i, model in enumerate(table["models"]):
        assert diagnosis_core._differs(model["outputs"], table["reference"]), model["id"]
        for other in table["models"][i + 1 :]:
            same = all(diagnosis_core.agree(a, b) for a, b in zip(model["outputs"], other["outputs"]))
            assert not same, f"{model['id']} and {other['id']} give the same answers on every probe"


def test_every_model_is_diagnosed_as_itself():
    table = diagnose.browser_table(EXERCISE)
    for model in table["models"]:
        found = diagnosis_core.diagnose_outputs(model["outputs"], table)
        assert found["mistake"] == model["id"]
        assert found["explains_all"]
        assert found["message"].startswith("Your scores match what happens when ")


def test_the_sentence_names_the_rule_from_the_statement():
    found = diagnosis_core.diagnose_outputs(
        diagnose.browser_table(EXERCISE)["models"][0]["outputs"], diagnose.browser_table(EXERCISE)
    )
    model = MODELS[0]
    assert found["message"] == f"Your scores match what happens when {model.when}: {model.rule} ({model.section})."
    clipping = BY_ID["no_clipping"]
    assert clipping.rule == "each reference word can be matched only once"


def test_no_probe_is_a_hidden_test_input():
    hidden = load_module(KIT_ROOT / "hidden_tests" / "test_hidden.py", "meteor_hidden_cases")
    statement = (KIT_ROOT / "problem" / "statement.md").read_text()
    secret = {text for case in hidden.CASES for text in (case.reference, case.candidate)}
    secret.add(hidden.LONG)
    secret = {text for text in secret if text.strip() and text not in statement}
    table_text = json.dumps(diagnose.browser_table(EXERCISE))
    for probe in diagnose.probes(EXERCISE):
        assert not set(probe["args"]) & secret, probe
    for text in secret:
        assert json.dumps(text) not in table_text, text


def test_the_reference_is_never_near_a_rounding_tie_on_a_probe():
    """A correct solution may round a near-tie either way; then it would look wrong."""
    reference = load_module(KIT_ROOT / "solutions" / "reference.py", "meteor_reference_ties")
    for probe in diagnose.probes(EXERCISE):
        exact = reference.explain(*probe["args"], **probe["kwargs"])["score_unrounded"]
        scaled = exact * 1000
        assert abs(scaled - int(scaled) - 0.5) > 1e-6, probe


def test_the_browser_side_needs_only_the_table(tmp_path):
    """diagnosis_core runs on the JSON table alone: no reference, no models in the process."""
    table = tmp_path / "table.json"
    table.write_text(json.dumps(diagnose.browser_table(EXERCISE)))
    script = f"""
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("diagnosis_core", {str(KIT_ROOT / "grader" / "core" / "diagnosis.py")!r})
core = importlib.util.module_from_spec(spec); spec.loader.exec_module(core)
table = json.load(open({str(table)!r}))

class Unclipped:
    def meteor_score(self, reference, candidate, alpha=0.9, beta=3, gamma=0.5):
        ref, cand = reference.lower().split(), candidate.lower().split()
        if not ref or not cand:
            return 0.0
        hits = [w in ref for w in cand]
        m = sum(hits)
        if not m:
            return 0.0
        ch = sum(1 for i, h in enumerate(hits) if h and (i == 0 or not hits[i - 1]))
        p, r = m / len(cand), m / len(ref)
        return round(p * r / (alpha * p + (1 - alpha) * r) * (1 - gamma * (ch / m) ** beta), 3)

found = core.diagnose(Unclipped(), table)
# The browser-safe core only: no reference, no models, nothing of the trusted side.
kit = [name for name in sys.modules if name.startswith(("grader", "solutions", "meteor", "_exercise_"))]
assert kit and all(name == "grader" or name.startswith("grader.core") for name in kit), sorted(kit)
print(found["mistake"])
"""
    done = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "no_clipping"


class Hangs:
    def __init__(self):
        self.calls = 0

    def meteor_score(self, *args, **kwargs):
        self.calls += 1
        raise SubmissionError("timeout", "the call took longer than 2 s")


def test_a_submission_that_hangs_is_not_probed_for_long():
    hangs = Hangs()
    found = diagnose.diagnose_submission(EXERCISE, hangs)
    assert hangs.calls <= diagnose.MAX_TIMEOUTS + 1
    assert found.mistake is None and found.kind == "no_answer"
    assert "on every input we tried" in found.message


class Prints:
    def meteor_score(self, *args, **kwargs):
        print("debugging!")
        return 0.5


def test_what_a_submission_prints_while_probed_stays_out_of_the_output(capsys):
    found = diagnose.diagnose_submission(EXERCISE, Prints())
    assert "debugging!" not in capsys.readouterr().out
    assert found is not None and found.mistake is None


def test_one_answer_to_every_input_is_said_as_such():
    found = diagnose.diagnose_submission(EXERCISE, Prints())
    assert (found.kind, found.mistake, found.rules) == ("constant", None, [])
    assert found.message == "Your function returned 0.5 for every input we tried, whatever the input."
    # The statement's own example first: the student has seen it.
    assert found.example == "meteor_score('', 'anything') returned 0.5, but the rules give 0.0"


class Unknown:
    """Wrong in a way no model knows, and not one answer to everything."""

    def meteor_score(self, reference, candidate, **kwargs):
        return round(len(reference + candidate) % 7 / 10, 3)


def test_without_rules_or_a_model_the_smallest_failing_input_is_shown():
    found = diagnose.diagnose_submission(EXERCISE, Unknown())
    assert (found.kind, found.mistake, found.rules) == ("unknown", None, [])
    assert found.message == f"Your scores don't match any mistake we know of. The smallest failing input: {found.example}."
    assert found.example.startswith("meteor_score(") and ", but the rules give " in found.example


def test_without_a_match_the_rules_whose_tests_fail_are_named_with_a_visible_input():
    tests = [
        {
            "name": "test_statement_example[repeated_word_is_clipped]",
            "tier": "examples",
            "status": "fail",
            "message": "meteor_score('the cat', 'the the the cat'): expected 0.455, got 0.5",
        },
        {
            "name": "test_a_repeated_word_matches_only_as_often_as_in_the_reference",
            "tier": "properties",
            "status": "fail",
            "message": "expected 0.5, got 0.4\nFalsifying example: test_a_repeated(\n    reference=['the'],\n)\nmeteor_score('the', 'the the')\n  returned 0.4",
        },
        {"name": "test_rule[uppercase_reference]", "tier": "hidden", "status": "pass", "message": ""},
        {
            "name": "test_rule[repeated_candidate_words_are_clipped]",
            "tier": "hidden",
            "status": "fail",
            "message": "expected 0.824, got 0.5 [rule: x]",
        },
        {
            "name": "test_twin[hidden-uppercase_reference]",
            "tier": "private",
            "status": "fail",
            "message": "meteor_score('SECRET', 'b'): y",
        },
    ]
    found = diagnosis_core.evidence(tests, EXERCISE)
    # The private tier says nothing; the hidden tier names its rule, never an input.
    assert [(f["rule"], f["broken"], f["call"] is not None) for f in found] == [
        ("clip", True, True),
        ("clip", True, True),
        ("case", False, False),
        ("clip", True, False),
    ]
    assert found[1]["call"]["text"] == "meteor_score('the', 'the the') returned 0.4: expected 0.5, got 0.4"
    diagnosis = diagnose.diagnose_submission(EXERCISE, Unknown(), tests=tests)
    assert diagnosis.kind == "rules" and diagnosis.mistake is None and diagnosis.rules == ["clip"]
    assert diagnosis.message.startswith(
        "No mistake we know of matches your scores, but the failing tests point to rule 2, Matching: "
        "each reference word can be matched only once (3 of its 3 tests fail)."
    )
    # The smallest failing call of the first rule's tests, from a tier that feeds the diagnosis.
    assert diagnosis.example == "meteor_score('the', 'the the') returned 0.4: expected 0.5, got 0.4"
    assert diagnosis.text.endswith(f" For example, {diagnosis.example}.")
    assert "SECRET" not in json.dumps(diagnosis.as_json())


def test_what_a_tier_may_say_comes_from_its_fields_not_its_name():
    tiers = dict(EXERCISE.tiers)
    tiers["examples"] = dataclasses.replace(tiers["examples"], feeds_diagnosis=False)
    tiers["hidden"] = dataclasses.replace(tiers["hidden"], browser=False)
    ex = dataclasses.replace(EXERCISE, tiers=tiers)
    tests = [
        {
            "name": "test_statement_example[worked_example]",
            "tier": "examples",
            "status": "fail",
            "message": "meteor_score('a', 'b'): x",
        },
        {"name": "test_rule[uppercase_reference]", "tier": "hidden", "status": "fail", "message": "expected 1.0, got 0.5"},
    ]
    assert diagnosis_core.evidence(tests, ex) == [{"rule": "whole", "broken": True, "call": None}]
    assert [f["call"] is not None for f in diagnosis_core.evidence(tests, EXERCISE)] == [True, False]


def test_a_quoted_call_is_cut_to_a_sentence_whatever_the_submission_raised():
    message = "meteor_score('a', 'b'): expected 0.5, but meteor_score raised ValueError: " + "x" * 10_000
    quoted = diagnosis_core.quoted_call(message, "meteor_score")
    assert len(quoted["text"]) == diagnosis_core.QUOTE_LIMIT and quoted["text"].startswith("meteor_score('a', 'b'): expected 0.5")


def test_a_rule_is_read_from_the_message_where_scoring_names_none():
    tests = [
        {
            "name": "test_rule[x]",
            "tier": "hidden",
            "status": "error",
            "message": "expected 0.5, but it raised [rule 2: the edit distance]",
        }
    ]
    assert diagnosis_core.evidence(tests, EXERCISE) == [{"rule": "rule 2: the edit distance", "broken": True, "call": None}]


def test_a_timed_out_or_unrun_test_breaks_no_rule():
    tests = [
        {"name": "test_rule[uppercase_reference]", "tier": "hidden", "status": status, "message": "the call took longer than 2 s"}
        for status in ("timeout", "not_run")
    ]
    assert [f["broken"] for f in diagnosis_core.evidence(tests, EXERCISE)] == [False, False]
    assert (
        diagnosis_core.diagnose_outputs(None, diagnose.browser_table(EXERCISE), diagnosis_core.evidence(tests, EXERCISE)) is None
    )


def test_a_diagnosis_serializes_for_results_json():
    class Unrounded:
        def meteor_score(self, reference, candidate, alpha=0.9, beta=3, gamma=0.5):
            return BY_ID["no_rounding"].meteor_score(reference, candidate, alpha=alpha, beta=beta, gamma=gamma)

    found = diagnose.diagnose_submission(EXERCISE, Unrounded())
    data = json.loads(json.dumps(found.as_json()))
    assert data["mistake"] == "no_rounding"
    assert data["message"].startswith("Your scores match what happens when the score is not rounded: ")
    assert data["text"].startswith(data["message"] + " For example, meteor_score(")
    assert set(data) == {"mistake", "kind", "message", "example", "section", "rule", "explains_all", "rules", "text"}
    assert data["kind"] == "model"


def run_check(meteor_kit, path: Path, *extra: str) -> subprocess.CompletedProcess:
    tiers = [] if "--tiers" in extra else ["--tiers", "examples,hidden"]
    return subprocess.run([str(meteor_kit), "check", str(path), *tiers, *extra], capture_output=True, text=True, timeout=120)


def test_check_prints_the_diagnosis_after_the_report(meteor_kit):
    done = run_check(meteor_kit, CATALOGUE / "wrong" / "no_clipping.py")
    assert done.returncode == 1
    report, found, diagnosis = done.stdout.rpartition("\nDiagnosis: ")
    assert found, done.stdout + done.stderr
    assert "passed," in report.strip().splitlines()[-1]
    assert diagnosis.startswith(
        "Your scores match what happens when repeated words are not clipped: "
        "each reference word can be matched only once (rule 2, Matching). For example, meteor_score("
    )


def test_check_json_has_a_diagnosis_field(meteor_kit):
    wrong = json.loads(run_check(meteor_kit, CATALOGUE / "wrong" / "no_lowercase.py", "--json").stdout)
    assert wrong["diagnosis"]["mistake"] == "no_lowercase"
    assert wrong["diagnosis"]["text"].startswith(wrong["diagnosis"]["message"])
    right = json.loads(run_check(meteor_kit, KIT_ROOT / "solutions" / "reference.py", "--json").stdout)
    assert right["diagnosis"] is None and right["passed"] == len(right["tests"])


def test_every_pair_of_mistakes_in_the_table_is_diagnosed_as_itself():
    table = diagnose.browser_table(EXERCISE)
    assert len(table["pairs"]) > 100
    for entry in table["pairs"]:
        found = diagnosis_core.diagnose_outputs(entry["outputs"], table)
        assert (found["mistake"], found["kind"]) == (entry["id"], "models")


class LowercaseOnlyOnceAndNoRounding:
    """Two mistakes of our own: no lowercasing and no rounding."""

    def meteor_score(self, reference, candidate, alpha=0.9, beta=3, gamma=0.5):
        ref, cand = reference.split(), candidate.split()
        if not ref or not cand:
            return 0.0
        left, hits = list(ref), []
        for word in cand:
            hits.append(word in left)
            if hits[-1]:
                left.remove(word)
        m = sum(hits)
        if m == 0:
            return 0.0
        ch = sum(1 for i, h in enumerate(hits) if h and (i == 0 or not hits[i - 1]))
        p, r = m / len(cand), m / len(ref)
        return p * r / (alpha * p + (1 - alpha) * r) * (1 - gamma * (ch / m) ** beta)


def test_two_mistakes_at_once_are_both_named():
    found = diagnose.diagnose_submission(EXERCISE, LowercaseOnlyOnceAndNoRounding())
    assert found.mistake == "no_lowercase+no_rounding" and found.kind == "models"
    assert found.message == (
        "Your scores match what happens when the words are compared without lowercasing them, and the score is not rounded: "
        "lowercase each text with str.lower() before comparing words (rule 1, Tokens); "
        "and round the final score to 3 decimal places with round(score, 3) (rule 5, Score)."
    )


class SlowOnEmptyTexts:
    """Right everywhere, but loops (times out) whenever a text has no words."""

    def __init__(self):
        self.reference = load_module(KIT_ROOT / "solutions" / "reference.py", "meteor_reference_slow")

    def meteor_score(self, reference, candidate, **kwargs):
        if not reference.split() or not candidate.split():
            raise SubmissionError("timeout", "the call took longer than 2 s")
        return self.reference.meteor_score(reference, candidate, **kwargs)


def test_a_diagnosis_cut_short_by_timeouts_names_nothing():
    assert diagnose.diagnose_submission(EXERCISE, SlowOnEmptyTexts()) is None


def test_probes_cut_short_leave_the_failing_tests_to_name_the_rules():
    tests = [
        {"name": "test_rule[empty_candidate]", "tier": "hidden", "status": "error", "message": "expected 0.0, but it raised"},
        {"name": "test_rule[uppercase_reference]", "tier": "hidden", "status": "pass", "message": ""},
    ]
    found = diagnose.diagnose_submission(EXERCISE, SlowOnEmptyTexts(), tests=tests)
    assert (found.kind, found.mistake, found.rules) == ("rules", None, ["empty"])
    assert found.example is None  # no probe answer can be trusted, and the hidden tier quotes no input


def test_a_model_that_explains_few_of_the_wrong_answers_is_not_named():
    table = diagnose.browser_table(EXERCISE)
    model = next(m for m in table["models"] if m["id"] == "right_to_left_matching")
    differs = diagnosis_core._differs(model["outputs"], table["reference"])
    # Its answers where it differs from the reference, and something wrong nearly everywhere else.
    outputs = [model["outputs"][i] if i in differs else 0.123 for i in range(len(table["reference"]))]
    assert diagnosis_core.best_model(outputs, table)[0]["id"] == "right_to_left_matching"
    found = diagnosis_core.diagnose_outputs(outputs, table)
    assert found["mistake"] is None and found["kind"] == "unknown"
    assert len(differs) < diagnosis_core.MIN_EXPLAINED * len(diagnosis_core._differs(outputs, table["reference"]))


FOUR_DECIMALS = """
def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ref, cand = reference.lower().split(), candidate.lower().split()
    left, hits = list(ref), []
    for word in cand:
        hits.append(word in left)
        if hits[-1]:
            left.remove(word)
    m = sum(hits)
    if not ref or not cand or not m:
        return 0.0
    chunks = sum(1 for i, hit in enumerate(hits) if hit and (i == 0 or not hits[i - 1]))
    p, r = m / len(cand), m / len(ref)
    return round(p * r / (alpha * p + (1 - alpha) * r) * (1 - gamma * (chunks / m) ** beta), 4)
"""


def test_check_names_the_rule_of_a_mistake_no_model_knows_with_an_input_students_may_see(meteor_kit, tmp_path):
    path = tmp_path / "four_decimals.py"
    path.write_text(FOUR_DECIMALS)
    report = json.loads(run_check(meteor_kit, path, "--json", "--tiers", "examples,hidden,properties,private").stdout)
    found = report["diagnosis"]
    assert (found["kind"], found["mistake"], found["rules"][0]) == ("rules", None, "round")
    assert "rule 5, Score: round the final score to 3 decimal places" in found["text"]
    # The input shown is a probe's or a public tier's failing call, never the private tier's.
    public = [t["message"] for t in report["tests"] if t["tier"] in EXERCISE.diagnosis_tiers]
    probes = [diagnosis_core.call_text(p, "meteor_score") for p in diagnose.probes(EXERCISE)]
    call = found["example"].split(" returned ")[0].split("): ")[0]
    assert any(call in m for m in public) or any(found["example"].startswith(c) for c in probes), found["example"]
    assert not any(call in t["message"] for t in report["tests"] if not EXERCISE.tiers[t["tier"]].public)


def test_the_table_is_kept_in_the_kits_cache_and_a_damaged_copy_is_rebuilt(tmp_path):
    fresh = diagnose._build_table(EXERCISE)
    for name in ("problem", "solutions", "hidden_tests"):
        shutil.copytree(KIT_ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    copy = exercise.load(tmp_path)
    try:
        assert diagnose._table(copy) == fresh
        (kept,) = copy.cache.glob("diagnosis-table-*.json")
        assert kept.is_relative_to(exercise.CACHE) and json.loads(kept.read_text()) == fresh
        assert not (tmp_path / "build").exists()  # nothing in the exercise's folder
        kept.write_text('{"version": ')  # cut short, as by a full disk
        diagnose._table.cache_clear()
        assert diagnose._table(copy) == fresh and json.loads(kept.read_text()) == fresh
        # Another model (any change to a source) is another table, under another name.
        trusted = tmp_path / "solutions" / "misconceptions.py"
        trusted.write_text(trusted.read_text() + "\n# changed\n")
        diagnose._table.cache_clear()
        diagnose._table(copy)
        assert len(list(copy.cache.glob("diagnosis-table-*.json"))) == 2
    finally:
        diagnose._table.cache_clear()
        shutil.rmtree(copy.cache, ignore_errors=True)


class Scripted:
    """Answers the probes in order from a script: a number, or the kind of error the call ends with."""

    def __init__(self, script: list, clock: list[float]):
        self.script, self.clock, self.calls = list(script), clock, 0

    def meteor_score(self, *args, **kwargs):
        self.calls += 1
        self.clock[0] += 1.0  # each call takes a second
        step = self.script.pop(0) if self.script else 0.5
        if isinstance(step, str):
            raise SubmissionError(step, step)
        return step


@pytest.mark.parametrize(
    "script, allowed, seconds, ran",
    ids=["timeouts past the allowance", "the page stops at the first timeout", "the deadline", "the budget spent"],
    argvalues=[
        (["timeout", 0.5, "timeout", "timeout", "timeout"], 2, None, 4),
        ([0.5, "timeout"], 0, None, 2),
        ([], 2, 3.5, 4),
        ([0.5, "not_run"], 2, None, 2),
    ],
)
def test_one_probe_guard_decides_when_probing_stops_and_the_rest_are_not_run(script, allowed, seconds, ran):
    table = {"function": "meteor_score", "probes": [{"args": [str(i), ""], "kwargs": {}} for i in range(8)]}
    clock = [0.0]
    submission = Scripted(script, clock)
    guard = diagnosis_core.ProbeGuard(allowed, seconds, clock=lambda: clock[0])
    outputs = diagnosis_core.run_probes(submission, table, guard=guard)
    assert submission.calls == ran
    assert outputs[ran:] == [{"error": "not_run"}] * (8 - ran)
    assert all(out == 0.5 or out["error"] != "not_run" for out in outputs[: ran - 1])


def test_without_a_guard_every_probe_runs_whatever_the_submission_does():
    table = {"function": "meteor_score", "probes": [{"args": [str(i), ""], "kwargs": {}} for i in range(5)]}
    submission = Scripted(["timeout"] * 5, [0.0])
    assert diagnosis_core.run_probes(submission, table) == [{"error": "timeout"}] * 5


WER = KIT_ROOT / "tests" / "exercises" / "wer"
# Two texts without words are a perfect mismatch: no model of WER's makes this mistake.
NOTHING_AGAINST_NOTHING_IS_ONE = """
def word_error_rate(reference, hypothesis, detail=False):
    ref, hyp = reference.lower().split(), hypothesis.lower().split()
    row = list(range(len(hyp) + 1))
    for i, word in enumerate(ref, 1):
        previous, row[0] = row[0], i
        for j, other in enumerate(hyp, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (word != other))
    errors, words = row[-1], len(ref)
    rate = 1.0 if words == 0 else round(errors / words, 3)
    return {"wer": rate, "errors": errors, "words": words} if detail else rate
"""


def test_a_wrong_wer_file_no_model_knows_gets_the_rules_its_tests_break(meteor_kit, tmp_path):
    path = tmp_path / "nothing_against_nothing_is_one.py"
    path.write_text(NOTHING_AGAINST_NOTHING_IS_ONE)
    done = subprocess.run(
        [str(meteor_kit), "check", str(path), "--exercise", str(WER), "--json"], capture_output=True, text=True, timeout=300
    )
    found = json.loads(done.stdout)["diagnosis"]
    assert found["kind"] == "rules" and found["mistake"] is None, found
    # Rule 4 (no reference words), in the words of WER's own rules: no word of METEOR's.
    assert "rule 4" in found["message"].lower() and "meteor" not in found["text"].lower()
    assert found["example"] and "word_error_rate(" in found["example"]


@pytest.fixture
def page_session(monkeypatch, tmp_path):
    """web/py/page_session.py as the page's worker imports it, reading the build's table from `tmp_path`."""
    monkeypatch.setenv(replay.ENV_FILE, os.environ.get(replay.ENV_FILE, str(tmp_path / "replay.json")))
    monkeypatch.syspath_prepend(str(KIT_ROOT / "web" / "py"))
    import page_session

    table = tmp_path / "diagnosis-table.json"
    table.write_text(json.dumps(diagnose.browser_table(EXERCISE)))
    monkeypatch.setattr(page_session, "DIAGNOSIS_TABLE", table)
    return page_session


@pytest.mark.parametrize("source", [FOUR_DECIMALS, (CATALOGUE / "wrong" / "no_clipping.py").read_text()], ids=["rules", "model"])
def test_the_page_gives_the_diagnosis_check_gives(page_session, meteor_kit, tmp_path, source):
    path = tmp_path / "submission.py"
    path.write_text(source)
    page = json.loads(page_session.run_tests(source, lambda kind, data: None))
    tiers = ",".join(EXERCISE.browser_tiers)
    cli = json.loads(run_check(meteor_kit, path, "--json", "--tiers", tiers).stdout)
    assert [(t["name"], t["status"]) for t in page["tests"]] == [(t["name"], t["status"]) for t in cli["tests"]]
    assert page["diagnosis"] == cli["diagnosis"] and page["diagnosis"]["kind"] in ("rules", "model")


HELD_OUT = sorted((CATALOGUE / "heldout").glob("*.py"))
REQUIRED_NAMED = 0.95


def marks(path: Path) -> dict[str, str]:
    """A file's MISTAKE and RULE, read without running it."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}


def test_one_mistake_files_written_apart_from_the_diagnosis_are_named(meteor_kit, tmp_path):
    """tests/catalogue/heldout, graded by `grade`: each file's model, or the rule it breaks among those named."""
    klass = tmp_path / "class"
    klass.mkdir()
    for path in HELD_OUT:
        shutil.copy(path, klass / path.name)
    done = subprocess.run(
        [str(meteor_kit), "grade", str(klass), "--out", str(tmp_path / "out"), "--timeout", "2", "--budget", "30"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))["submissions"]
    missed = []
    for result in results:
        said = marks(klass / result["submission"])
        found = result["diagnosis"] or {}
        if not (names(found.get("mistake"), said["MISTAKE"]) or said["RULE"] in found.get("rules", [])):
            missed.append(f"{result['submission']}: {found.get('mistake') or found.get('rules')}")
    assert len(results) == len(HELD_OUT) >= 20
    assert 1 - len(missed) / len(results) >= REQUIRED_NAMED, missed
    # grade's summary groups a rule-level diagnosis under the rule it points to first.
    first_rules = {f"(rule: {r['diagnosis']['rules'][0]})" for r in results if r["diagnosis"]["kind"] == "rules"}
    summary = done.stdout.split("diagnoses, most common first:")[1]
    assert first_rules and any(key in summary for key in first_rules), summary
