"""A tier is data: exercise.toml says what each does, and a new one needs only its table and its tests.

The engine names no tier: a copy of the second exercise, outside the kit, gets a tier "edge" (its own
test file, its own Gradescope visibility, its own title) and `check`, `grade`, the Gradescope
autograder and the page all run it, as they run the others.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from grader.cli import autograder
from grader.core import exercise, scoring
from grader.export import web as web_build
from grader.reports import gradescope
from tests.conftest import KIT_ROOT
from tests.lms_results import typed
from tests.test_gradescope import check_format

WER = KIT_ROOT / "tests" / "exercises" / "wer"
CATALOGUE = KIT_ROOT / "tests" / "exercises" / "wer-catalogue"
CORRECT = CATALOGUE / "correct" / "two_rows.py"
WRONG = CATALOGUE / "wrong" / "positional.py"  # compares word i with word i: "a b c" against "b c" is 3 errors
KIT = [sys.executable, "-m", "grader.cli"]

EDGE_TABLE = """
[tiers.edge]
points = 4
browser = true
shows_inputs = true
gradescope_visibility = "after_due_date"
title = "Edge cases"
description = "One word, and a word put in front."
"""

# The edge tier's cases (reference, hypothesis, rate); the last one the positional mistake gets wrong.
EDGE_CASES = {"one_word_swapped": ("a", "b", 1.0), "a_word_put_in_front": ("b c", "a b c", 0.5)}
EDGE_TESTS = '''"""Tier `edge`: added by tests/test_tiers_as_data.py, in exercise.toml and this file alone."""

import pytest

from grader.core import exercise

VALUES = exercise.holding(__file__).module("values")

pytestmark = pytest.mark.tier("edge")

CASES = {cases!r}


@pytest.mark.parametrize("name", CASES)
def test_edge(submission, name):
    reference, hypothesis, want = CASES[name]
    call = f"word_error_rate({{reference!r}}, {{hypothesis!r}})"
    VALUES.expect_rate(submission.word_error_rate(reference, hypothesis), want, call=call)
'''
# Where the exercise's visible tests have twins (docs/scoring.md), the edge tests need theirs: the same
# rule on other words, in the twin tier, in a file of their own that never ships to the page.
EDGE_TWINS = '''"""The edge tier's twins, in the exercise's twin tier."""

import pytest

from grader.core import exercise

VALUES = exercise.holding(__file__).module("values")

pytestmark = pytest.mark.tier({tier!r})

TWINS = {{"edge-one_word_swapped": ("x", "y", 1.0), "edge-a_word_put_in_front": ("q r", "p q r", 0.5)}}


@pytest.mark.parametrize("key", TWINS)
def {test}(submission, key):
    reference, hypothesis, want = TWINS[key]
    VALUES.expect_rate(submission.word_error_rate(reference, hypothesis), want)
'''


def kit(folder: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([*KIT, *args, "--exercise", str(folder)], capture_output=True, text=True, timeout=timeout, cwd=folder)


def has_twins(folder: Path) -> bool:
    """Whether the exercise's tests hold twins of its visible tests (then every visible test needs one)."""
    policy = scoring.parse(exercise.parse(declared(folder), folder))  # not load(): it keeps what it read
    done = subprocess.run(
        [sys.executable, "-m", "pytest", str(folder / "hidden_tests"), "--collect-only", "-q", "-p", "no:cacheprovider"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=folder,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert done.returncode == 0, done.stdout[-2000:]
    return f"::{policy.twin_test}[" in done.stdout


@pytest.fixture(scope="module")
def edged(tmp_path_factory) -> Iterator[Path]:
    """A copy of the second exercise, outside the kit, with the tier "edge" added: a table and a test file."""
    folder = tmp_path_factory.mktemp("tiers") / "wer-with-an-edge"
    shutil.copytree(WER, folder, ignore=shutil.ignore_patterns("__pycache__", "build"))
    assert not folder.resolve().is_relative_to(KIT_ROOT.resolve())
    twins = has_twins(folder)
    toml = folder / "problem" / "exercise.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + EDGE_TABLE, encoding="utf-8")
    (folder / "hidden_tests" / "test_edge.py").write_text(EDGE_TESTS.format(cases=EDGE_CASES), encoding="utf-8")
    if twins:
        policy = scoring.parse(exercise.parse(declared(folder), folder))
        (folder / "hidden_tests" / "test_edge_twins.py").write_text(
            EDGE_TWINS.format(tier=policy.twin_tier, test=policy.twin_test), encoding="utf-8"
        )
    yield folder
    shutil.rmtree(exercise.load(folder).cache, ignore_errors=True)
    mirrored = exercise.CACHE / "pycache" / Path(*folder.resolve().parts[1:])
    shutil.rmtree(mirrored, ignore_errors=True)
    with contextlib.suppress(OSError):
        os.removedirs(mirrored.parent)


def checked(folder: Path, path: Path, *args: str) -> dict:
    done = kit(folder, "check", "--json", str(path), *args)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def test_the_new_tier_is_read_from_its_table(edged):
    ex = exercise.load(edged)
    edge = ex.tiers["edge"]
    assert (edge.points, edge.browser, edge.shows_inputs, edge.gradescope_visibility, edge.title) == (
        4.0,
        True,
        True,
        "after_due_date",
        "Edge cases",
    )
    assert edge.feeds_diagnosis and not edge.shows_printed  # the defaults of a tier that shows its inputs
    # A public tier: it runs with the others students can read, before any secret tier.
    assert "edge" in ex.stages[0] and ex.stage_of("edge") < min(ex.stage_of(t) for t in exercise.secret_tiers(ex.tiers))


def test_check_runs_the_new_tier_and_pays_its_points(edged):
    right = checked(edged, CORRECT)
    edge = [t for t in right["tests"] if t["tier"] == "edge"]
    assert [t["name"] for t in edge] == [f"test_edge[{name}]" for name in EDGE_CASES]
    assert all(t["status"] == "pass" and t["score"] == t["max_score"] == 4.0 for t in edge)
    assert right["passed"] == len(right["tests"]) and right["score"] == right["max_score"]
    without = checked(edged, CORRECT, "--tiers", ",".join(t for t in exercise.load(edged).tiers if t != "edge"))
    assert right["max_score"] == without["max_score"] + 8

    wrong = checked(edged, WRONG)
    failed = {t["name"]: t for t in wrong["tests"] if t["tier"] == "edge" and t["status"] == "fail"}
    assert list(failed) == ["test_edge[a_word_put_in_front]"]
    # The tier shows its inputs: the failure names its call.
    assert failed["test_edge[a_word_put_in_front]"]["message"].startswith("word_error_rate('b c', 'a b c'): expected 0.5")
    assert failed["test_edge[a_word_put_in_front]"]["score"] == 0.0


@pytest.fixture(scope="module")
def graded(edged, tmp_path_factory) -> Path:
    """`grade` of a correct and a wrong file on the copy: its --out folder."""
    inbox = tmp_path_factory.mktemp("class")
    for path in (CORRECT, WRONG):
        shutil.copy(path, inbox / path.name)
    out = tmp_path_factory.mktemp("graded") / "out"
    done = kit(edged, "grade", str(inbox), "--out", str(out), "--jobs", "1")
    assert done.returncode == 0, done.stderr
    return out


def test_grade_gives_the_new_tier_as_check_does_and_gradescope_its_visibility(edged, graded):
    results = {Path(r["submission"]).name: r for r in json.loads((graded / "results.json").read_text())["submissions"]}
    for path in (CORRECT, WRONG):
        by_check = checked(edged, path)
        assert results[path.name]["score"] == by_check["score"] and results[path.name]["max_score"] == by_check["max_score"]
        edge = [(t["name"], t["status"], t["score"]) for t in results[path.name]["tests"] if t["tier"] == "edge"]
        assert edge == [(t["name"], t["status"], t["score"]) for t in by_check["tests"] if t["tier"] == "edge"]
    ex = exercise.load(edged)
    for shown in sorted((graded / "gradescope").glob("*/results.json")):
        document = json.loads(shown.read_text(encoding="utf-8"))
        check_format(document)
        visibility = {t["name"].split(": ", 1)[0]: t["visibility"] for t in document["tests"]}
        assert visibility == {name: tier.gradescope_visibility for name, tier in ex.tiers.items()}
        assert visibility["edge"] == "after_due_date"


@pytest.mark.pinned_hypothesis
def test_the_gradescope_export_holds_the_tier_and_its_autograder_shows_it_after_the_due_date(edged, tmp_path):
    archive = tmp_path / "autograder.zip"
    done = kit(edged, "export-gradescope", "--out", str(archive))
    assert done.returncode == 0, done.stderr
    with zipfile.ZipFile(archive) as zf:
        assert "hidden_tests/test_edge.py" in zf.namelist()
        assert (
            tomllib.loads(zf.read("problem/exercise.toml").decode())["tiers"]["edge"]["gradescope_visibility"] == "after_due_date"
        )
    # What the autograder writes for a submission, in Gradescope's layout (the exported exercise is the copy).
    (tmp_path / "submission").mkdir()
    shutil.copy(WRONG, tmp_path / "submission" / "wer.py")
    assert autograder.run(tmp_path, edged) == 0
    document = json.loads((tmp_path / "results" / "results.json").read_text(encoding="utf-8"))
    check_format(document)
    edge = [t for t in document["tests"] if t["name"].startswith("edge: ")]
    assert [t["visibility"] for t in edge] == ["after_due_date", "after_due_date"]
    assert [t["status"] for t in edge] == ["passed", "failed"]
    assert "word_error_rate('b c', 'a b c')" in edge[1]["output"]  # shows_inputs: the call is shown whole


def test_the_page_lists_the_new_tier_with_its_title_and_runs_it(edged, tmp_path):
    ex = exercise.load(edged)
    data = web_build.page_data(ex)
    assert list(data["tiers"]) == list(ex.browser_tiers) and data["tiers"]["edge"]["title"] == "Edge cases"
    assert "hidden_tests/test_edge.py" in web_build.kit_files(ex)  # shipped to the page, its tier being a browser one
    assert "hidden_tests/test_edge_twins.py" not in web_build.kit_files(ex)

    # The page's Python side, as the site's kit.zip holds it: page_session.py beside the exercise's shipped files.
    shutil.copy(KIT_ROOT / "web" / "py" / "page_session.py", tmp_path / "page_session.py")
    for name in web_build.kit_files(ex):
        if (edged / name).is_file():  # the engine's files come from the kit
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(edged / name, tmp_path / name)
    assert not (tmp_path / "hidden_tests" / "test_private.py").exists()
    run = (
        "import json, sys\n"
        "import page_session\n"
        "print(page_session.run_tests(open(sys.argv[1]).read(), lambda kind, data: None))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", run, str(WRONG)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={
            **os.environ,
            "PYTHONPATH": str(tmp_path),
            "PYTHONDONTWRITEBYTECODE": "1",
            "KIT_REPLAY_FILE": str(tmp_path / "replay.json"),
        },
    )
    shutil.rmtree(exercise.load(tmp_path).cache, ignore_errors=True)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert {t["tier"] for t in report["tests"]} == set(ex.browser_tiers)
    assert [t["status"] for t in report["tests"] if t["tier"] == "edge"] == ["pass", "fail"], report["message"]

    # The results panel's groups (web/src/results.js), from that report and the page's data.
    script = (
        "import { tierGroups } from 'file://" + str(KIT_ROOT / "web" / "src" / "results.js") + "';\n"
        "const [report, data] = JSON.parse(process.argv[1]);\n"
        "console.log(JSON.stringify(tierGroups(report, data).map((g) => [g.tier, g.title, g.tests.length])));\n"
    )
    shown = subprocess.run(
        ["node", "--input-type=module", "-e", script, json.dumps([report, data])], capture_output=True, text=True, timeout=60
    )
    assert shown.returncode == 0, shown.stderr
    groups = json.loads(shown.stdout)
    assert [tier for tier, _, _ in groups] == list(ex.browser_tiers)
    assert [title for _, title, _ in groups] == [ex.tiers[t].title for t in ex.browser_tiers]
    assert groups[-1] == ["edge", "Edge cases", 2]


# ---------------------------------------------------------------- defaults and validation


def declared(folder: Path) -> dict:
    with open(folder / "problem" / "exercise.toml", "rb") as f:
        return tomllib.load(f)


@pytest.mark.parametrize("folder", [KIT_ROOT, WER], ids=["meteor", "wer"])
def test_the_shipped_exercises_keep_what_their_tiers_did_when_the_engine_knew_them_by_name(folder):
    ex = exercise.load(folder)
    # What gradescope.py, results.js and scoring.py said of the four names before tiers were data.
    visibility = {"examples": "visible", "hidden": "visible", "properties": "visible", "private": "after_published"}
    titles = {"examples": "Examples", "hidden": "Hidden tests", "properties": "Properties"}
    assert {name: tier.gradescope_visibility for name, tier in ex.tiers.items()} == visibility
    assert {name for name, tier in ex.tiers.items() if tier.shows_printed} == {"examples"}
    assert ex.diagnosis_tiers == ("examples", "properties")
    assert {name: ex.tiers[name].title for name in ex.browser_tiers} == titles
    assert scoring.policy(ex).twin_tier == "private"


def parsed(folder: Path, tiers: dict, scoring_table: dict | None = None) -> exercise.Exercise:
    data = declared(folder)
    data["tiers"] = tiers
    if scoring_table is not None:
        data["scoring"] = scoring_table
    return exercise.parse(data, folder)


PUBLIC = {"points": 1, "browser": True, "shows_inputs": True}
SECRET = {"points": 3}


@pytest.mark.parametrize(
    ("table", "says"),
    [
        ({"browser": True}, "needs points"),
        ({**PUBLIC, "show_inputs": True}, "unknown field(s) ['show_inputs']"),
        ({**PUBLIC, "points": "2"}, "points must be a number, not '2'"),
        ({**PUBLIC, "points": True}, "points must be a number, not True"),
        ({**PUBLIC, "points": -1}, "points must be a number of at least 0"),
        ({**PUBLIC, "browser": "yes"}, "browser must be true or false, not 'yes'"),
        ({**PUBLIC, "gradescope_visibility": "later"}, "gradescope_visibility must be one of"),
        ({"points": 1, "shows_inputs": True}, "cannot show its inputs"),
        ({"points": 1, "browser": True, "shows_printed": True}, "shows_printed = true quotes its inputs"),
        ({"points": 1, "browser": True, "feeds_diagnosis": True}, "feeds_diagnosis = true quotes its inputs"),
    ],
)
def test_a_wrong_tier_field_is_refused_naming_the_file_and_the_tier(table, says):
    with pytest.raises(ValueError) as refused:
        parsed(WER, {"examples": PUBLIC, "edge": table, "private": SECRET})
    assert str(refused.value).startswith(f"{WER / 'problem' / 'exercise.toml'}: [tiers.edge]")
    assert says in str(refused.value)


@pytest.mark.parametrize("name", ["Edge", "edge-cases", "1st", "", "über"])
def test_a_tier_name_that_cannot_name_a_file_and_a_key_is_refused(name):
    with pytest.raises(ValueError, match=r"a tier's name is lower-case letters"):
        parsed(WER, {name: PUBLIC, "private": SECRET})


def test_the_twins_go_to_the_one_secret_tier_unless_the_toml_names_another():
    one = parsed(WER, {"examples": PUBLIC, "vault": SECRET}, {})
    assert scoring.policy(one).twin_tier == "vault"
    none = parsed(WER, {"examples": PUBLIC}, {})
    assert scoring.policy(none).twin_tier is None
    named = parsed(WER, {"examples": PUBLIC, "vault": SECRET, "cellar": SECRET}, {"twin_tier": "cellar"})
    assert scoring.policy(named).twin_tier == "cellar"
    with pytest.raises(ValueError, match=r"twin_tier must say which of the secret tiers \['vault', 'cellar'\]"):
        parsed(WER, {"examples": PUBLIC, "vault": SECRET, "cellar": SECRET}, {"constant_passes": []})
    with pytest.raises(ValueError, match="twin_tier must name a tier with browser = false"):
        parsed(WER, {"examples": PUBLIC, "vault": SECRET}, {"twin_tier": "examples"})


def test_a_test_of_a_tier_the_exercise_does_not_declare_is_shown_to_nobody():
    ex = exercise.load(WER)
    test = {
        "name": "test_x",
        "tier": "elsewhere",
        "status": "fail",
        "message": "m",
        "output": "printed",
        "score": 0.0,
        "max_score": 0.0,
    }
    (shown,) = gradescope.to_gradescope(typed({"tests": [test], "score": 0.0, "message": "", "passed": 0}), ex)["tests"]
    assert shown["visibility"] == "hidden" and "printed" not in shown["output"]
