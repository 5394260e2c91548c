"""`meteor-kit new` writes an exercise that runs at once, in a folder outside the kit, and refuses what it cannot write."""

from __future__ import annotations

import ast
import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from grader.core import exercise
from grader.judging import cheats
from tests.conftest import KIT_ROOT

KIT = [sys.executable, "-m", "grader.cli"]
SIGNATURE = "pairs(left, right, times=1)"
# The template's placeholder rule, which its tests check: the arguments, in order, as a list.
FILLED = "def pairs(left, right, times=1):\n    return [left, right, times]\n"
IGNORES_TIMES = "def pairs(left, right, times=1):\n    return [left, right, 1]\n"


def kit(*args: str, cwd: Path = KIT_ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([*KIT, *args], capture_output=True, text=True, timeout=300, cwd=cwd)


def check(folder: Path, submission: Path) -> dict:
    done = kit("check", "--exercise", str(folder), "--json", str(submission), cwd=folder)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Iterator[Path]:
    """A new exercise, written by the command into a temporary folder nowhere under the kit."""
    folder = tmp_path_factory.mktemp("authors") / "pairs"
    assert not folder.resolve().is_relative_to(KIT_ROOT.resolve())
    done = kit("new", str(folder), "--function", "pairs", "--signature", SIGNATURE, "--title", "Pairs", cwd=folder.parent)
    assert done.returncode == 0, done.stderr
    assert "TODO" in done.stdout
    yield folder
    forget(folder)


@pytest.fixture(scope="module")
def filled(made, tmp_path_factory) -> Iterator[Path]:
    """The same exercise, its reference written as the placeholder rule says."""
    folder = tmp_path_factory.mktemp("filled") / "pairs"
    shutil.copytree(made, folder)
    (folder / "solutions" / "reference.py").write_text(FILLED, encoding="utf-8")
    yield folder
    forget(folder)


def forget(folder: Path) -> None:
    """Remove what the commands kept of a temporary exercise in the kit's cache folder: its folder and its bytecode."""
    shutil.rmtree(exercise.load(folder).cache, ignore_errors=True)
    mirrored = exercise.CACHE / "pycache" / Path(*folder.resolve().parts[1:])
    shutil.rmtree(mirrored, ignore_errors=True)
    with contextlib.suppress(OSError):
        os.removedirs(mirrored.parent)


def test_new_writes_every_part_of_an_exercise_the_engine_reads(made):
    ex = exercise.load(made)
    assert (ex.function, ex.signature, ex.title, ex.id) == ("pairs", SIGNATURE, "Pairs", "pairs")
    assert (ex.parameters, ex.defaults) == (["left", "right"], {"times": 1})
    assert list(ex.tiers) == ["examples", "hidden", "properties", "private"]
    assert ex.browser_tiers == ("examples", "hidden", "properties") and ex.diagnosis_tiers == ("examples", "properties")
    assert set(ex.scoring) == {"anchors", "constant_passes", "rules"}
    for part in ("values", "trusted"):
        assert ex.path(part).is_file()
    for tier in ex.tiers:
        assert (ex.tests_dir / f"test_{tier}.py").is_file()
    assert len(ex.module("trusted").MODELS) == 1
    # What `new` wrote: not the bytecode of the modules this test imported just above.
    texts = [path.read_text(encoding="utf-8") for path in made.rglob("*") if path.is_file() and path.suffix != ".pyc"]
    assert sum("TODO" in text for text in texts) >= 8  # what to write where
    # The exercise reaches the engine through grader.core alone, as the shipped ones do.
    imported = {
        alias.name if isinstance(node, ast.Import) else str(node.module)
        for path in made.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    engine = {name for name in imported if name.split(".")[0] == "grader"}
    assert engine and all(name.startswith("grader.core") for name in engine), engine


def test_the_placeholder_reference_fails_cleanly(made):
    report = check(made, made / "solutions" / "reference.py")
    assert report["status"] == "graded"
    statuses = {t["name"]: t["status"] for t in report["tests"]}
    assert len(statuses) == 7 and set(statuses.values()) <= {"pass", "fail"}
    assert statuses["test_statement_example[first_example]"] == statuses["test_rule[first_rule]"] == "fail"
    failed = next(t for t in report["tests"] if t["name"] == "test_statement_example[first_example]")
    assert "write pairs in solutions/reference.py" in failed["message"]
    assert report["score"] < report["max_score"]


def test_check_passes_every_test_once_the_reference_is_filled(filled):
    report = check(filled, filled / "solutions" / "reference.py")
    assert report["passed"] == len(report["tests"]) == 7
    assert report["score"] == report["max_score"] == 8
    assert report["diagnosis"] is None


def test_the_filled_template_pays_no_cheat(filled):
    found = cheats.measure(exercise.load(filled))
    assert found.problems() == []
    assert found.table_misses == [] and max(found.shares.values()) == 0.0


def audit(folder: Path) -> tuple[int, dict[str, dict]]:
    done = kit("audit", "--exercise", str(folder), "--jobs", "2", "--json", cwd=folder)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, {check["id"]: check for check in json.loads(done.stdout)["checks"]}


def test_the_audit_names_the_placeholder_reference_and_runs_every_check(made):
    code, checks = audit(made)
    assert code == 1
    assert checks["reference"]["status"] == "fail"
    assert any("write pairs in solutions/reference.py" in line for line in checks["reference"]["details"])
    assert checks["strength"]["status"] == "skipped"  # it needs a reference that passes
    assert checks["diagnosis"]["status"] == "pass"  # the example model is named from its answers
    assert not [c for c in checks.values() if c["reason"].startswith("could not run")]


def test_the_filled_template_passes_the_audit(filled):
    code, checks = audit(filled)
    assert code == 0
    assert {name: c["status"] for name, c in checks.items() if c["status"] != "skipped"} == dict.fromkeys(
        ("reference", "limits", "strength", "cheats", "diagnosis"), "pass"
    )


def test_the_example_model_names_its_mistake(filled, tmp_path):
    wrong = tmp_path / "ignores_times.py"
    wrong.write_text(IGNORES_TIMES, encoding="utf-8")
    report = check(filled, wrong)
    assert report["score"] < report["max_score"]
    assert report["diagnosis"]["mistake"] == "ignores_times"
    assert "pairs(" in report["diagnosis"]["text"]


def test_the_written_files_pass_the_kits_lint(made):
    ruff = Path(sys.executable).parent / "ruff"
    done = subprocess.run([str(ruff), "check", "--no-cache", str(made)], capture_output=True, text=True, cwd=KIT_ROOT)
    assert done.returncode == 0, done.stdout


@pytest.mark.parametrize(
    ("function", "signature", "says"),
    [
        ("1pairs", "1pairs(a)", "is not a Python identifier"),
        ("class", "class(a)", "is not a Python identifier"),
        ("pairs", "pairs(a, b", "does not parse"),
        ("pairs", "zip(a, b)", "names 'zip', not the function 'pairs'"),
        ("pairs", "pairs(*a)", "no * or **"),
        ("pairs", "pairs(a, b=len)", "must be a literal"),
        ("pairs", "pairs(times=1)", "at least one parameter without a default"),
    ],
)
def test_new_refuses_a_bad_name_or_signature_and_writes_nothing(tmp_path, function, signature, says):
    done = kit("new", str(tmp_path / "x"), "--function", function, "--signature", signature)
    assert done.returncode == 2
    assert says in done.stderr
    assert not (tmp_path / "x").exists()


def test_new_refuses_a_folder_that_is_not_empty(tmp_path):
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    done = kit("new", str(tmp_path), "--function", "pairs", "--signature", SIGNATURE)
    assert done.returncode == 2 and "not an empty folder" in done.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert kit("new", str(empty), "--function", "pairs", "--signature", SIGNATURE).returncode == 0
    assert (empty / "problem" / "exercise.toml").is_file()


@pytest.mark.parametrize("command", ["check", "grade"])
def test_a_hidden_test_module_that_does_not_import_stops_the_command_and_names_the_module(filled, tmp_path, command):
    # Once such a module was dropped in silence: `check` printed 0/0 and `grade` graded on the other tiers.
    folder = tmp_path / "pairs"
    shutil.copytree(filled, folder)
    with (folder / "hidden_tests" / "test_hidden.py").open("a", encoding="utf-8") as module:
        module.write("\nraise RuntimeError('a typo the author made')\n")
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "ann.py").write_text(FILLED, encoding="utf-8")
    out = tmp_path / "out"
    if command == "check":
        done = kit("check", "--exercise", str(folder), str(tmp_path / "class" / "ann.py"), cwd=tmp_path)
    else:
        done = kit("grade", "--exercise", str(folder), str(tmp_path / "class"), "--out", str(out), cwd=tmp_path)
    try:
        assert done.returncode == 2, done.stdout + done.stderr
        assert "hidden tests do not run" in done.stderr
        assert "test_hidden.py" in done.stderr and "a typo the author made" in done.stderr
        assert not (out / "results.json").exists()
    finally:
        forget(folder)


def test_two_exercises_graded_one_after_the_other_in_one_process_each_collect_their_own_tests(filled, tmp_path):
    # Their test modules share names (test_examples.py, ...): pytest once refused the second exercise's
    # ("import file mismatch"), and the audit of a second exercise in a process saw no test at all.
    twin = tmp_path / "pairs"
    shutil.copytree(filled, twin)
    script = (
        "import sys\nfrom grader.core import exercise, runner\nfrom grader.core.submission import load_local\n"
        "for folder in sys.argv[2:]:\n"
        "    ex = exercise.load(folder)\n"
        "    done = runner.run(ex, lambda: load_local(sys.argv[1], ex.function), name='ann.py')\n"
        "    print(done.status, len(done.tests), done.passed)\n"
    )
    (tmp_path / "ann.py").write_text(FILLED, encoding="utf-8")
    try:
        done = subprocess.run(
            [sys.executable, "-c", script, str(tmp_path / "ann.py"), str(filled), str(twin)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        lines = done.stdout.split("\n")[:2]
        assert len(lines) == 2 and lines[0] == lines[1], done.stdout + done.stderr
        status, count, passed = lines[0].split()
        assert status == "graded" and int(count) > 0 and passed == count
    finally:
        forget(twin)
