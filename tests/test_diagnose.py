"""The diagnosis, measured on the catalogue of wrong and correct solutions."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.core import diagnosis as diagnosis_core
from grader.core import exercise
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
assert not any(name.startswith(("grader", "solutions", "meteor")) for name in sys.modules), sorted(sys.modules)
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
    assert found.message.startswith("Your scores don't match any mistake we know of. The smallest failing input: ")


def test_without_a_match_the_smallest_failing_visible_test_input_is_shown():
    tests = [
        {
            "name": "test_statement_example[worked_example]",
            "tier": "examples",
            "status": "fail",
            "message": "meteor_score('Rain falls gently from the sky', 'Gentle rain drops from the sky'): expected 0.625, got 0.5",
        },
        {
            "name": "test_identical_texts_have_one_chunk",
            "tier": "properties",
            "status": "fail",
            "message": "expected 0.5, got 0.5\nmeteor_score('the', 'the', alpha=0.9, beta=3, gamma=0.5)\n  returned 0.5",
        },
        {"name": "test_rule[uppercase_reference]", "tier": "hidden", "status": "fail", "message": "meteor_score('A', 'a'): x"},
        {"name": "test_matches_the_reference", "tier": "private", "status": "fail", "message": "meteor_score('B', 'b'): y"},
    ]
    assert diagnosis_core.failing_calls(tests, "meteor_score") == [
        "meteor_score('Rain falls gently from the sky', 'Gentle rain drops from the sky'): expected 0.625, got 0.5",
        "meteor_score('the', 'the', alpha=0.9, beta=3, gamma=0.5); returned 0.5",
    ]
    found = diagnose.diagnose_submission(EXERCISE, Prints(), tests=tests)
    assert found.example == "meteor_score('the', 'the', alpha=0.9, beta=3, gamma=0.5); returned 0.5"
    assert found.example in found.message


def test_a_diagnosis_serializes_for_results_json():
    class Unrounded:
        def meteor_score(self, reference, candidate, alpha=0.9, beta=3, gamma=0.5):
            return BY_ID["no_rounding"].meteor_score(reference, candidate, alpha=alpha, beta=beta, gamma=gamma)

    found = diagnose.diagnose_submission(EXERCISE, Unrounded())
    data = json.loads(json.dumps(found.as_json()))
    assert data["mistake"] == "no_rounding"
    assert data["message"].startswith("Your scores match what happens when the score is not rounded: ")
    assert data["text"].startswith(data["message"] + " For example, meteor_score(")
    assert set(data) == {"mistake", "kind", "message", "example", "section", "rule", "explains_all", "text"}
    assert data["kind"] == "model"


def run_check(meteor_kit, path: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(meteor_kit), "check", str(path), "--tiers", "examples,hidden", *extra], capture_output=True, text=True, timeout=120
    )


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
