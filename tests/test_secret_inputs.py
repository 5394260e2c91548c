"""No input of a tier that never ships to the page reaches a student, whatever the submission says.

The submissions of tests/leaks/ answer right until they have seen the private tier's inputs,
then say them in every later answer: an exception's message, a returned string, printed
output. Graded by `grade` (the memo, the workers, Gradescope's files, the feedback files),
`check` and `pytest hidden_tests --submission`, none of them may show students those inputs.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tomllib
import warnings
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from conftest import BIN, KIT_ROOT, load_module

from grader.core import exercise, runner
from grader.core.results import TestResult
from grader.core.submission import LoadError
from grader.judging.runs import Guard

EXERCISE = exercise.load(KIT_ROOT)

LEAKS = Path(__file__).parent / "leaks"
ATTACK = LEAKS / "remembers_drawn_floats.py"
ROSTER = Path(__file__).parent / "lms" / "rosters" / "canvas.csv"
STUDENT_SEES = {"visible", "after_due_date"}  # Gradescope's visibilities a student reads before grades are published
SAID = "SEEN:"  # what the attack writes before the inputs it remembered


@pytest.fixture(scope="module")
def secrets() -> set[str]:
    """The private tier's drawn floats, as the attack quotes them (repr): no public test has any of them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pytest.PytestUnknownMarkWarning)  # its tier mark: the hidden tests' conftest registers it
        private = load_module(KIT_ROOT / "hidden_tests" / "test_private.py", "private_cases")
    found = {
        repr(value)
        for _, _, params in [*private.SENTENCES, *private.RAW_TEXTS]
        for value in params.values()
        if isinstance(value, float) and len(repr(value)) > 8
    }
    assert len(found) > 100  # the attack has something to remember
    return found


def leaked(text: str, secrets: set[str]) -> list[str]:
    return sorted(s for s in secrets if s in text)


def public_tiers() -> set[str]:
    return {name for name, tier in EXERCISE.tiers.items() if tier.browser}


# Students of the Canvas roster: the attack, a copy of it (graded after it, from the memo), a correct file.
ATTACKERS = ("alee.py", "bmartinez.py")


@pytest.fixture(scope="module")
def graded(tmp_path_factory, meteor_kit):
    """The attack graded by `grade` twice, the second time from what the memo learned the first, beside a correct file."""
    root = tmp_path_factory.mktemp("leak")
    (root / "class").mkdir()
    for name in ATTACKERS:
        shutil.copy(ATTACK, root / "class" / name)
    shutil.copy(KIT_ROOT / "solutions" / "reference.py", root / "class" / "cokafor.py")
    out = root / "out"
    run = subprocess.run(
        [str(meteor_kit), "grade", str(root / "class"), "--out", str(out), "--jobs", "1", "--roster", str(ROSTER)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    results = {r["submission"]: r for r in json.loads((out / "results.json").read_text())["submissions"]}
    return out, results


def test_the_attack_remembers_private_inputs(graded, secrets):
    """The instructor's results show what the attack said in the private tier: it did see the secret inputs."""
    _, results = graded
    for name in ATTACKERS:
        private = [t for t in results[name]["tests"] if t["tier"] not in public_tiers()]
        assert any(leaked(t["message"], secrets) for t in private), name


@pytest.mark.memoized
def test_the_attacks_copy_is_walked_through_the_memo_with_the_same_messages(graded):
    """The copy was walked through the memo, the private tier in a child of its own there too."""
    _, results = graded
    copy = results[ATTACKERS[1]]
    assert copy["from_memo"] == len(copy["tests"])
    assert [t["message"] for t in copy["tests"]] == [t["message"] for t in results[ATTACKERS[0]]["tests"]]


@pytest.mark.parametrize("name", ATTACKERS)
def test_gradescope_shows_students_no_private_input(graded, secrets, name):
    out, _ = graded
    shown = json.loads((out / "gradescope" / name / "results.json").read_text())
    visible = [t for t in shown["tests"] if t["visibility"] in STUDENT_SEES]
    assert visible, "no test is visible: nothing was checked"
    # What the attack says where its inputs are public reaches students: the check is not vacuous.
    assert any(SAID in t["output"] for t in visible)
    for test in visible:
        assert not leaked(test["output"], secrets), test["name"]
    assert not leaked(shown["output"], secrets)


def test_feedback_files_show_no_private_input(graded, secrets):
    out, _ = graded
    files = sorted((out / "feedback").glob("*"))
    assert {p.suffix for p in files} >= {".md", ".html"}
    texts = {p.name: p.read_text(encoding="utf-8") for p in files}
    assert sum(SAID in text for text in texts.values()) == 2 * len(ATTACKERS)  # each attacker's .md and .html
    for name, text in texts.items():
        assert not leaked(text, secrets), name


def test_check_answers_public_tests_from_a_child_that_saw_no_secret(tmp_path, secrets):
    path = tmp_path / "attack.py"
    shutil.copy(ATTACK, path)
    done = subprocess.run([str(BIN / "meteor-kit"), "check", str(path), "--json"], capture_output=True, text=True, timeout=300)
    report = json.loads(done.stdout)
    public = [t for t in report["tests"] if t["tier"] in public_tiers()]
    assert any(SAID in t["message"] for t in public)
    for test in public:
        assert not leaked(test["message"] + test["output"], secrets), test["name"]
    private = [t for t in report["tests"] if t["tier"] not in public_tiers()]
    assert any(leaked(t["message"], secrets) for t in private)


def test_pytest_hidden_tests_runs_the_private_tier_last_in_a_child_of_its_own(tmp_path, secrets):
    path = tmp_path / "attack.py"
    shutil.copy(ATTACK, path)
    xml = tmp_path / "junit.xml"
    subprocess.run(
        [str(BIN / "pytest"), "hidden_tests", "--submission", str(path), "-q", "-p", "no:cacheprovider", f"--junitxml={xml}"],
        cwd=KIT_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    cases = ElementTree.parse(xml).getroot().iter("testcase")
    files = [(case.get("classname", "").rsplit(".", 1)[-1], ElementTree.tostring(case, encoding="unicode")) for case in cases]
    order = [name for name, _ in files]
    assert order.index("test_private") > max(i for i, name in enumerate(order) if name != "test_private")
    for name, text in files:
        if name != "test_private":
            assert not leaked(text, secrets), name
    assert any(leaked(text, secrets) for name, text in files if name == "test_private")


def test_a_report_lists_the_tests_as_collected_while_the_private_tier_runs_last(tmp_path):
    """`check` lists the tiers in the files' order (as before the run order changed); they ran public tiers first."""
    path = tmp_path / "attack.py"
    shutil.copy(ATTACK, path)
    done = subprocess.run([str(BIN / "meteor-kit"), "check", str(path), "--json"], capture_output=True, text=True, timeout=300)
    tiers = [t["tier"] for t in json.loads(done.stdout)["tests"]]
    listed = [tier for i, tier in enumerate(tiers) if i == 0 or tiers[i - 1] != tier]
    assert listed == ["examples", "hidden", "private", "properties"]
    assert EXERCISE.run_order == ("examples", "hidden", "properties", "private")


def test_the_second_exercise_runs_its_secret_tier_last_too():
    wer = KIT_ROOT / "tests" / "exercises" / "wer"
    done = subprocess.run(
        [str(BIN / "pytest"), str(wer / "hidden_tests"), "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=KIT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    files = [line.split("::")[0].rsplit("/", 1)[-1] for line in done.stdout.splitlines() if "::" in line]
    assert files and files[-1] == "test_private.py"
    assert set(files[files.index("test_private.py") :]) == {"test_private.py"}  # its tests (the twins too) come last


def _exercise(order: list[str], **changes) -> exercise.Exercise:
    """The kit's exercise with its tiers declared in `order`, and `changes` to them (tier -> fields)."""
    with open(KIT_ROOT / "problem" / "exercise.toml", "rb") as f:
        data = tomllib.load(f)
    data["tiers"] = {name: {**data["tiers"][name], **changes.get(name, {})} for name in order}
    return exercise.parse(data)


def test_the_run_order_comes_from_the_declared_tiers_not_their_names():
    ex = _exercise(["private", "properties", "examples", "hidden"], hidden={"browser": False})
    assert ex.stages == (("properties", "examples", "private", "hidden"),)  # one child: the secret tiers last
    assert ex.run_order == ("properties", "examples", "private", "hidden")


def test_a_tier_with_fresh_child_starts_a_stage_of_its_own():
    fresh = {"fresh_child": True}
    ex = _exercise(["private", "properties", "examples", "hidden"], hidden={"browser": False, **fresh}, private=fresh)
    assert ex.stages == (("properties", "examples"), ("private",), ("hidden",))
    assert ex.run_order == ("properties", "examples", "private", "hidden")
    assert [ex.stage_of(t) for t in ("examples", "properties", "private", "hidden")] == [0, 0, 1, 2]
    ex = _exercise(["examples", "hidden", "properties", "private"], hidden=fresh)
    assert ex.stages == (("examples",), ("hidden", "properties", "private"))
    with pytest.raises(ValueError, match="fresh_child must be true or false"):
        _exercise(["examples", "private"], private={"fresh_child": "yes"})


def test_a_tier_that_never_ships_to_the_page_cannot_show_its_inputs():
    with pytest.raises(ValueError, match="cannot show its inputs"):
        _exercise(["examples", "private"], private={"shows_inputs": True})


SUBMISSION_SAYS = "meteor_score raised ValueError: the input was 'p q r' and 0.123456789"


@pytest.mark.parametrize("tier", EXERCISE.tiers)
@pytest.mark.parametrize("status", ["fail", "error"])
def test_what_a_submission_says_reaches_students_only_from_a_tier_that_shows_its_public_inputs(tier, status):
    from grader.reports.gradescope import student_message

    data = EXERCISE.tiers[tier]
    shown = student_message(TestResult("t", tier, status, SUBMISSION_SAYS, "", 0.0, 1.0), EXERCISE)
    assert (SUBMISSION_SAYS in shown) == (data.public and data.shows_inputs)
    assert ("0.123456789" in shown) == (data.public and data.shows_inputs)


@pytest.mark.parametrize("tier", EXERCISE.tiers)
def test_a_returned_number_reaches_students_only_from_a_public_tier(tier):
    from grader.reports.gradescope import student_message

    message = "expected 0.5, got 0.25 [rule: Tokens: lowercase each text with str.lower()]"
    shown = student_message(TestResult("t", tier, "fail", message, "", 0.0, 1.0), EXERCISE)
    assert ("0.25" in shown) == EXERCISE.tiers[tier].public


class Child:
    """Stands in for a jailed submission: counts its fresh children; `fails` makes the next load fail."""

    function = "meteor_score"

    def __init__(self, fails: bool = False):
        self.restarts = 0
        self.fails = fails

    def restart(self) -> None:
        self.restarts += 1
        if self.fails:
            raise LoadError("loading the file took longer than 10 s")

    def spent(self) -> str | None:
        return None

    def call(self, *args, **kwargs):
        return 0.0


@pytest.mark.parametrize("guarded", [False, True], ids=["sandbox", "guard"])
def test_each_stage_after_the_first_gets_a_fresh_child_once(guarded):
    child = Child()
    provider = runner.SubmissionProvider(lambda: Guard(child) if guarded else child)
    for stage in (0, 0, 1, 1, 2):
        provider.get(stage)
    assert child.restarts == 2


def test_a_stage_whose_child_does_not_load_errs_alone():
    provider = runner.SubmissionProvider(lambda: Child(fails=True))
    provider.get(0)
    with pytest.raises(LoadError, match="took longer"):
        provider.get(1)
    with pytest.raises(LoadError, match="took longer"):
        provider.get(1)
    assert provider.load_error is None  # the run itself stands: only that stage's tests say why
