"""`meteor-kit audit`'s own logic (grader/authoring): on small exercises in temporary folders, each with one planted flaw.

The shipped exercises' audits are in tests/test_audit_shipped.py.
"""

from __future__ import annotations

import ast
import io
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

from grader.authoring import audit, catalogue, cheating
from grader.authoring.mutants import ALL, CLASSIC, mutants
from grader.core import exercise
from grader.reports.audit import render_html, render_terminal
from tests.conftest import KIT_ROOT

WER = KIT_ROOT / "tests" / "exercises" / "wer"
KIT = [sys.executable, "-m", "grader.cli"]

# A small exercise whose tests never call clip above `high`: a mutant that forgets the upper
# bound keeps every point. The diagnosis's probe clip(20) is where it answers otherwise.
CLIP = {
    "problem/exercise.toml": """
        id = "clip"
        title = "Clip"
        difficulty = "easy"
        function = "clip"
        signature = "clip(x, low=0, high=10)"

        [seam]
        values = "problem/values.py"
        trusted = "solutions/misconceptions.py"

        [limits]
        call_timeout = 2.0
        budget = 20.0
        browser_test_timeout = 5.0
        memory_mb = 256

        [hypothesis]
        examples = 10
        private_examples = 10

        [tiers.examples]
        points = 1
        browser = true
        shows_inputs = true

        [tiers.private]
        points = 1
        """,
    "problem/values.py": """
        from grader.core.checks import WrongAnswer


        def expect(got, want):
            if type(got) is not int or got != want:
                raise WrongAnswer(f"expected {want!r}, got {got!r}")
        """,
    "solutions/reference.py": """
        def clip(x, low=0, high=10):
            # Below the range: its lower end.
            if x < low:
                return low
            if x > high:
                return high
            return x
        """,
    "solutions/misconceptions.py": """
        MODELS = []


        def probes():
            return [{"args": [20], "kwargs": {}, "origin": "probe"}, {"args": [-7], "kwargs": {}, "origin": "probe"}]
        """,
    "hidden_tests/conftest.py": """
        from grader.core.tests_plugin import *  # noqa: F403
        """,
    "hidden_tests/test_examples.py": """
        import pytest

        from grader.core import exercise

        VALUES = exercise.holding(__file__).module("values")

        pytestmark = pytest.mark.tier("examples")


        def test_inside(submission):
            VALUES.expect(submission.clip(5), 5)


        def test_below(submission):
            VALUES.expect(submission.clip(-3), 0)
        """,
    "hidden_tests/test_private.py": """
        import pytest
        from hypothesis import given
        from hypothesis import strategies as st

        from grader.core.checks import WrongAnswer

        pytestmark = pytest.mark.tier("private")


        @given(st.integers(-5, 5))
        def test_never_below_low(submission, x):
            if submission.clip(x) < 0:
                raise WrongAnswer("below low")
        """,
}


def write_exercise(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return folder


@pytest.fixture
def wer_copy(tmp_path):
    shutil.copytree(WER, tmp_path / "wer")
    return tmp_path / "wer"


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new), encoding="utf-8")


# ---------------------------------------------------------------- test strength


def test_a_planted_weak_test_is_flagged_as_a_survivor_with_a_witness(tmp_path):
    ex = exercise.load(write_exercise(tmp_path / "clip", CLIP))
    found = audit.run(ex, audit.Options(jobs=2, timeout=2.0, budget=10.0, draws=20), io.StringIO())
    checks = {check.id: check for check in found.checks}
    assert checks["reference"].status == "pass", checks["reference"].reason
    strength = checks["strength"]
    assert strength.status == "fail" and "your tests miss them" in strength.reason
    missed = {s["what"]: s for s in strength.survivors if s["verdict"] == "your tests miss this"}
    # Forgetting the upper bound: clip(20) gives 20, not 10, and the probe says so.
    forgot = next(s for s in missed.values() if "statement deleted" in s["what"] and "return high" in s["diff"])
    assert forgot["witness"] == "clip(20): the reference gives 10.0, the mutant 20.0 (from the diagnosis's probes)"
    assert "-    if x > high:" in forgot["diff"] and "-        return high" in forgot["diff"]
    # `x > high` and `x >= high` agree on every input: likely equivalent, listed, and no failure of its own.
    equivalent = [s for s in strength.survivors if s["verdict"] == "likely equivalent"]
    assert any("Gt -> GtE" in s["what"] for s in equivalent)
    assert all(s["witness"].startswith("the same answers as the reference on all") for s in equivalent)
    assert not found.passed


def test_the_limits_check_wants_ten_times_the_reference_s_slowest_call(wer_copy):
    from grader.authoring import inputs

    ex = exercise.load(wer_copy)
    tests = inputs.recorded(ex)
    fine = audit.limits_check(ex, tests)
    assert fine.status == "pass" and "after_timeout (0.05 s)" in fine.reason
    # The reference made slow (5 ms of CPU a call): 50 ms is more than the default after_timeout gives.
    slowed = shutil.copytree(wer_copy, wer_copy.parent / "slowed")  # another folder: the reference is loaded once a folder
    edit(
        slowed / "solutions" / "reference.py",
        "def word_error_rate(reference, hypothesis, detail=False):\n",
        "def word_error_rate(reference, hypothesis, detail=False):\n"
        "    import time\n    t = time.process_time()\n    while time.process_time() - t < 0.005:\n        pass\n",
    )
    slow = audit.limits_check(exercise.load(slowed), tests)
    assert slow.status == "fail" and slow.details == [
        line for line in slow.details if line.startswith("[limits] after_timeout = 0.05 s would cut a correct call short")
    ]
    assert len(slow.details) == 1  # call_timeout's 2 s is enough
    assert audit.limits_check(ex, None).status == "skipped"


def test_a_mutant_is_the_original_text_with_one_change_spliced_in():
    source = textwrap.dedent('''
        """A docstring is never mutated."""
        LIMIT = 3  # a comment survives


        def f(a, b):
            if a < b and b != 0:
                return round(a / b, LIMIT)
            raise ValueError("message text is never mutated")


        def g(words):
            return "-".join(words)
        ''').lstrip()
    found = mutants({"f.py": source})
    assert len({m.source for m in found}) == len(found) > 10
    for mutant in found:
        assert "# a comment survives" in mutant.source or "statement deleted" in mutant.what
        assert ast.dump(ast.parse(mutant.source)) != ast.dump(ast.parse(source))
        changed = [line for line in mutant.diff.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]
        assert 1 <= len(changed) <= 2, mutant.diff
    whats = {m.what for m in found}
    assert {"line 2: 3 -> 2", "line 6: Lt -> LtE", "line 6: and <-> or", "line 7: round dropped", "line 12: '-' -> ''"} <= whats
    smaller = next(m for m in found if m.what == "line 2: 3 -> 2")
    assert "LIMIT = 2  # a comment survives" in smaller.source
    assert not [m.what for m in found if "'message" in m.what or "'A docstring" in m.what]
    classic = {m.what for m in mutants({"f.py": source}, CLASSIC)}
    assert whats - classic == {"line 12: '-' -> ''"} and "string" in ALL - CLASSIC


# ---------------------------------------------------------------- cheats


def test_a_missing_twin_a_twin_on_a_visible_input_and_constant_passes_wrong_both_ways_are_flagged(wer_copy):
    private = wer_copy / "hidden_tests" / "test_private.py"
    edit(private, 'call("a red fox ran", "a red fox ran away")', 'call("the cat sat", "the cat sat down")')  # a visible call
    edit(private, '        "hidden-a_deletion": call("big old brown dog", "big brown dog"),\n', "")
    toml = wer_copy / "problem" / "exercise.toml"
    # examples-identical (0.0 passes it and its twin) left out; hidden-a_shifted_sentence (no constant passes both) put in.
    edit(toml, '"examples-identical", "hidden-empty_reference"', '"hidden-a_shifted_sentence", "hidden-empty_reference"')
    found = cheating.check(exercise.load(wer_copy), {})
    problems = found.problems
    assert "hidden-a_deletion has no twin" in problems
    assert any(p.startswith("the twin of examples-one_insertion asks what a visible test asks") for p in problems), problems
    assert "examples-identical and its twin pass with 0.0, 0, but it is not in constant_passes" in problems
    assert any(p.startswith("return 0.0 earns") for p in problems)  # what leaving it out lets a constant earn
    assert any(
        p.startswith("hidden-a_shifted_sentence is in constant_passes, but none of the") and p.endswith("stale") for p in problems
    )


def test_the_answer_a_visible_test_expects_is_tried_as_a_constant(wer_copy):
    # The twin of a_shifted_sentence given the visible test's own answer (0.25): returning 0.25 passes both.
    edit(wer_copy / "hidden_tests" / "test_private.py", 'call("q r s", "p q r s")', 'call("w x y z", "v w x y z")')
    ex = exercise.load(wer_copy)
    answers = {("hidden", "test_rule[a_shifted_sentence]"): [0.25]}
    found = cheating.check(ex, answers)
    assert "hidden-a_shifted_sentence and its twin pass with 0.25, but it is not in constant_passes" in found.problems
    assert found.constants == len(cheating.cheats.CONSTANTS) + 1


# ---------------------------------------------------------------- diagnosis and catalogue


def test_a_model_the_diagnosis_cannot_tell_from_another_is_flagged(wer_copy):
    misconceptions = wer_copy / "solutions" / "misconceptions.py"
    # A second model that answers every probe as no_rounding does: the diagnosis names one of the two.
    edit(misconceptions, "from dataclasses import dataclass", "from dataclasses import dataclass, replace")
    edit(misconceptions, "PAIRS: list = []", 'MODELS.append(replace(MODELS[-1], id="no_rounding_again"))\nPAIRS: list = []')
    check = audit.diagnosis_check(exercise.load(wer_copy), [], {}, [])
    assert check.status == "fail"
    assert any("is not named from its own answers" in line and "no_rounding" in line for line in check.details), check.details


def test_a_catalogue_files_marks_say_what_it_should_score(tmp_path):
    (tmp_path / "wrong").mkdir()
    (tmp_path / "wrong" / "a.py").write_text('MISTAKE = "split_on_space"\n')
    (tmp_path / "wrong" / "b.py").write_text("# MISTAKE: own_name\n# RULE: words\n")
    (tmp_path / "c.py").write_text('CHEAT = "returns_0"\n')
    (tmp_path / "d.py").write_text("def f(): pass\n")
    entries = {e.name: e for e in catalogue.read(tmp_path)}
    assert [(e.kind, e.mistake, e.rule, e.cheat) for e in entries.values()] == [
        ("cheat", "", "", "returns_0"),
        ("correct", "", "", ""),
        ("one mistake", "split_on_space", "", ""),
        ("one mistake", "own_name", "words", ""),
    ]
    results = {
        "c.py": {"status": "graded", "score": 1, "max_score": 10},
        "d.py": {"status": "graded", "score": 9, "max_score": 10},
        "wrong/a.py": {"status": "graded", "score": 10, "max_score": 10},
        "wrong/b.py": {"status": "graded", "score": 5, "max_score": 10},
    }
    figures = catalogue.figures(list(entries.values()), results)
    assert figures.problems == [
        "c.py (CHEAT returns_0) earns 10.0% (at most 5%)",
        "d.py (correct) gets 90.0%, not every point",
        "wrong/a.py (MISTAKE split_on_space) gets every point: the tests miss its mistake",
    ]
    assert figures.one_mistake_median == 0.75
    assert dict(figures.bins) == {**{label: 0 for label, _ in figures.bins}, "1-10 %": 1, "40-50 %": 1, "80-90 %": 1, "100 %": 1}
    trusted = SimpleNamespace(
        MODELS=[SimpleNamespace(id="split_on_space", mistake="split_on_space", breaks="words")],
        SAME_SCORES_AS={"other": "split_on_space"},
    )
    model = {"kind": "model", "mistake": "split_on_space", "rules": ["words"]}
    rules = {"kind": "rules", "mistake": None, "rules": ["rate", "words"]}
    assert catalogue.named(entries["wrong/a.py"], model, trusted) == "model"
    assert catalogue.named(entries["wrong/a.py"], rules, trusted) == "rule, not first"  # its model breaks "words"
    assert catalogue.named(entries["wrong/b.py"], rules, trusted) == "rule, not first"
    assert catalogue.named(entries["wrong/b.py"], model, trusted) == ""
    other = catalogue.Entry("o.py", tmp_path / "o.py", mistake="other")
    assert catalogue.named(other, model, trusted) == "model"  # the model with its scores


# ---------------------------------------------------------------- the report and the command


def test_the_page_and_the_terminal_quote_what_a_check_says_and_run_nothing():
    hostile = "<img src=x onerror=alert(1)> \x1b[2J"
    report = audit.Audit(
        "x",
        "X <b>",
        "/tmp/x",
        [
            audit.Check(
                "strength",
                "Strength",
                "fail",
                "1 missed",
                ["detail " + hostile],
                [{"what": "line 1: Lt -> LtE", "verdict": "your tests miss this", "witness": hostile, "diff": "-a < b\n+a <= b"}],
            ),
            audit.Check("page", "Page", "skipped", "no --browser"),
        ],
    ).as_json()
    page = render_html(report)
    assert "<script" not in page and "default-src 'none'" in page and '<html lang="en">' in page
    assert "<img" not in page and "&lt;img src=x" in page and "X &lt;b&gt;" in page
    assert '<span class="del">-a &lt; b</span>' in page and "FAIL" in page and "SKIP" in page
    text = render_terminal(report)
    assert "\x1b[2J" not in text and "FAIL  Strength: 1 missed" in text and "+a <= b" in text
    assert text.rstrip().endswith("1 check(s) failed (0 s)")


def test_a_folder_the_audit_cannot_run_on_is_a_usage_error(wer_copy, tmp_path):
    (wer_copy / "solutions" / "reference.py").unlink()
    done = subprocess.run([*KIT, "audit", "--exercise", str(wer_copy)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        f"meteor-kit audit: {wer_copy}: no solutions/reference.py: the audit grades the reference and its mutants"
    ]
    done = subprocess.run(
        [*KIT, "audit", "--exercise", str(WER), "--catalogue", str(tmp_path / "none")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "--catalogue" in done.stderr and "not a folder" in done.stderr
    done = subprocess.run([*KIT, "audit", "--exercise", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "no problem/exercise.toml" in done.stderr


def test_a_test_module_that_does_not_import_fails_the_reference_check(wer_copy):
    # `grade` refuses such a module; the audit says which one, and what it raised.
    with open(wer_copy / "hidden_tests" / "test_hidden.py", "a", encoding="utf-8") as f:
        f.write("\nraise ImportError('a helper this module needs')\n")
    found = audit.run(exercise.load(wer_copy), audit.Options(jobs=2, timeout=2.0, budget=10.0), io.StringIO())
    checks = {check.id: check for check in found.checks}
    assert checks["reference"].status == "fail"
    reason = checks["reference"].reason
    assert reason.startswith("the tests of wer did not run: the exercise's hidden tests do not run: ")
    assert "test_hidden.py" in reason and "ImportError: a helper this module needs" in reason
    assert any("test_hidden.py" in line for line in checks["reference"].details)
    assert checks["strength"].status == "skipped" and checks["cheats"].status == "fail" and not found.passed
