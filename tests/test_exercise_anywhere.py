"""An exercise is a value: a copy of the second exercise, in a folder outside the kit, through every command.

Each test runs the real command line on the copy (`--exercise DIR`), asserts what it gave, and
that nothing was written into the exercise's folder: the engine's caches go to the kit's.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from grader.core import exercise
from tests.conftest import KIT_ROOT
from tests.test_gradescope import IN_THE_CONTAINER, build_image, check_format, max_score, run_autograder, wheels_for

WER = KIT_ROOT / "tests" / "exercises" / "wer"
CATALOGUE = KIT_ROOT / "tests" / "exercises" / "wer-catalogue"
CORRECT = CATALOGUE / "correct" / "two_rows.py"
WRONG = CATALOGUE / "wrong" / "positional.py"  # MISTAKE = "positional"
COMMANDS = ("check", "grade", "merge", "export-gradescope", "explain", "build-web", "serve")
# Python's own bytecode is written (no PYTHONDONTWRITEBYTECODE): the commands must put it elsewhere too.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


@dataclass
class Outside:
    """A copy of the WER exercise in a temporary folder, nowhere under the kit, and what it held when copied."""

    folder: Path
    before: dict[str, tuple[int, int]]

    def untouched(self) -> None:
        """Nothing was written into the exercise's folder: every file and folder as copied, sizes and times."""
        assert snapshot(self.folder) == self.before


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Iterator[Outside]:
    folder = tmp_path_factory.mktemp("anywhere") / "word-error-rate"
    shutil.copytree(WER, folder, ignore=shutil.ignore_patterns("__pycache__", "build"))
    assert not folder.resolve().is_relative_to(KIT_ROOT.resolve())
    yield Outside(folder, snapshot(folder))
    # What the commands kept of this copy in the kit's cache folder: its own folder, and its bytecode.
    shutil.rmtree(exercise.load(folder).cache, ignore_errors=True)
    mirrored = exercise.CACHE / "pycache" / Path(*folder.resolve().parts[1:])
    shutil.rmtree(mirrored, ignore_errors=True)
    with contextlib.suppress(OSError):
        os.removedirs(mirrored.parent)  # and the folders above it left empty


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {p.relative_to(folder).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(folder.rglob("*"))}


def kit(copy: Outside, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """`meteor-kit ARGS --exercise <the copy>`, run from inside the copy, as an instructor would."""
    command = [sys.executable, "-m", "grader.cli", *args, "--exercise", str(copy.folder)]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=copy.folder, env=ENV)


# What names the kit's own exercise (METEOR) and what names the second one (WER), in a command's help.
NAMES_METEOR = re.compile(r"meteor(?!-kit)|meteor_score|\bcandidate|\bsentences?\b|\balpha\b", re.IGNORECASE)
NAMES_WER = re.compile(r"word.error.rate|\bwer\b", re.IGNORECASE)


def test_every_command_s_help_works_and_names_the_exercise(copy):
    top = kit(copy, "--help")
    assert top.returncode == 0, top.stderr
    assert "grader kit" in top.stdout and not NAMES_METEOR.search(top.stdout)
    assert re.search(r"The exercise: Word error rate \(", top.stdout)
    for command in COMMANDS:
        done = kit(copy, command, "--help")
        assert done.returncode == 0 and done.stderr == "", (command, done.stderr)
        assert "--exercise DIR" in done.stdout, command
        assert not NAMES_METEOR.search(done.stdout), (command, NAMES_METEOR.search(done.stdout))
        if command != "explain":  # its help is the exercise's explain's, and this one has none
            assert "Word error rate" in " ".join(done.stdout.split()), command
    copy.untouched()


def test_the_kit_s_own_help_names_no_other_exercise():
    helps = {}
    for command in ("", *COMMANDS):
        done = subprocess.run(
            [sys.executable, "-m", "grader.cli", *filter(None, [command]), "--help"],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=KIT_ROOT,
        )
        assert done.returncode == 0, (command, done.stderr)
        helps[command] = done.stdout
    assert "The exercise: METEOR score (" in helps[""] and NAMES_METEOR.search(helps[""])
    assert {command: NAMES_WER.findall(text) for command, text in helps.items()} == {command: [] for command in helps}


def test_check_scores_the_exercise_s_files_and_names_its_mistake(copy):
    right = kit(copy, "check", "--json", str(CORRECT))
    assert right.returncode == 0, right.stderr
    report = json.loads(right.stdout)
    assert report["passed"] == len(report["tests"]) == 34 and report["score"] == report["max_score"] == 35
    assert report["diagnosis"] is None
    wrong = kit(copy, "check", "--json", str(WRONG))
    assert wrong.returncode == 1, wrong.stderr
    report = json.loads(wrong.stdout)
    assert 0 < report["score"] < report["max_score"] == 35
    assert report["diagnosis"]["mistake"] == "positional" and "word_error_rate(" in report["diagnosis"]["text"]
    copy.untouched()


def test_a_file_without_the_exercise_s_function_is_told_its_name(copy, tmp_path):
    other = tmp_path / "meteor.py"
    other.write_text("def meteor_score(reference, candidate):\n    return 0.0\n")
    done = kit(copy, "check", "--json", str(other))
    report = json.loads(done.stdout)
    assert report["status"] == "error" and "no function named 'word_error_rate'" in report["message"]
    copy.untouched()


@pytest.fixture(scope="module")
def graded(copy, tmp_path_factory) -> tuple[Path, dict]:
    """The catalogue graded with --jobs 2: the --out folder, and its results by file name."""
    out = tmp_path_factory.mktemp("graded") / "out"
    done = kit(copy, "grade", str(CATALOGUE), "--out", str(out), "--jobs", "2")
    assert done.returncode == 0, done.stderr
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["exercise"] == "wer"
    return out, {Path(r["submission"]).name: r for r in results["submissions"]}


def test_grade_scores_the_class_as_check_does(copy, graded):
    out, results = graded
    assert results["two_rows.py"]["score"] == results["two_rows.py"]["max_score"] == 35
    assert results["positional.py"]["diagnosis"]["mistake"] == "positional"
    assert 0 < results["positional.py"]["score"] < 35
    shown = json.loads((out / "gradescope" / "wrong_positional.py" / "results.json").read_text(encoding="utf-8"))
    assert shown["score"] == results["positional.py"]["score"] and "word_error_rate(" in shown["output"]
    assert "Word error rate" in (out / "report.html").read_text(encoding="utf-8")
    copy.untouched()


def test_the_shards_merge_into_the_class_s_results_and_only_for_their_exercise(copy, graded, tmp_path):
    _, whole = graded
    for k in (1, 2):
        done = kit(copy, "grade", str(CATALOGUE), "--out", str(tmp_path / f"part{k}"), "--shard", f"{k}/2", "--jobs", "1")
        assert done.returncode == 0, done.stderr
    merged = kit(copy, "merge", str(tmp_path / "part1"), str(tmp_path / "part2"), "--out", str(tmp_path / "merged"))
    assert merged.returncode == 0, merged.stderr
    results = json.loads((tmp_path / "merged" / "results.json").read_text(encoding="utf-8"))
    assert {Path(r["submission"]).name: r["score"] for r in results["submissions"]} == {n: r["score"] for n, r in whole.items()}
    # The kit's own exercise is not the one these parts were graded on.
    wrong = subprocess.run(
        [sys.executable, "-m", "grader.cli", "merge", str(tmp_path / "part1"), "--out", str(tmp_path / "other")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert wrong.returncode == 2 and "graded on the exercise 'wer', not 'meteor'" in wrong.stderr
    copy.untouched()


def test_explain_says_this_exercise_has_none(copy):
    done = kit(copy, "explain", "a b", "a c")
    assert done.returncode == 2
    assert done.stderr.strip() == "meteor-kit explain: the exercise 'wer' has no explain ([seam] explain in exercise.toml)"
    copy.untouched()


def test_pytest_on_its_hidden_tests_uses_that_exercise(copy, tmp_path):
    def pytest_run(submission: Path) -> subprocess.CompletedProcess:
        # pytest's own caches aside (Python's bytecode, .pytest_cache), which its options turn off.
        return subprocess.run(
            [sys.executable, "-m", "pytest", str(copy.folder / "hidden_tests"), "--submission", str(submission)]
            + ["-q", "-p", "no:cacheprovider", "-p", "no:xdist"],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=tmp_path,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        )

    right = pytest_run(CORRECT)
    assert right.returncode == 0 and "34 passed" in right.stdout, right.stdout[-2000:]
    wrong = pytest_run(WRONG)
    assert wrong.returncode == 1 and re.search(r"\b6 failed, 28 passed\b", wrong.stdout), wrong.stdout[-2000:]
    other = tmp_path / "meteor.py"
    other.write_text("def meteor_score(reference, candidate):\n    return 0.0\n")
    missing = pytest_run(other)
    assert missing.returncode == 1 and "no function named 'word_error_rate'" in missing.stdout
    copy.untouched()


@pytest.fixture(scope="module")
def site(copy, tmp_path_factory) -> Path:
    site = tmp_path_factory.mktemp("site") / "web"
    done = kit(copy, "build-web", "--out", str(site), timeout=900)
    assert done.returncode == 0, done.stderr
    return site


def test_build_web_ships_the_exercise_s_page_and_none_of_its_secrets(copy, site):
    page = (site / "index.html").read_text(encoding="utf-8")
    assert "<title>Word error rate · practice</title>" in page and '"function": "word_error_rate"' in page
    with zipfile.ZipFile(site / "py" / "kit.zip") as z:
        names = set(z.namelist())
        assert 'id = "wer"' in z.read("problem/exercise.toml").decode()
    assert "hidden_tests/test_hidden.py" in names and "problem/values.py" in names
    assert not [n for n in names if "test_private" in n or n.startswith("solutions/")]
    copy.untouched()


def test_serve_builds_nothing_new_and_serves_the_page(copy, site):
    server = subprocess.Popen(
        [sys.executable, "-m", "grader.cli", "serve", "--dir", str(site), "--port", "0", "--exercise", str(copy.folder)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=copy.folder,
        env=ENV,
    )
    try:
        line = server.stdout.readline()  # "The student's page is at http://localhost:PORT/ ..."
        url = re.search(r"http://\S+/", line)
        assert url, line
        with urllib.request.urlopen(url.group(0), timeout=30) as response:
            page = response.read().decode("utf-8")
            assert response.headers["Cross-Origin-Embedder-Policy"] == "require-corp"
        assert "<title>Word error rate · practice</title>" in page
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert "build-web:" not in server.stderr.read()  # the site was current: nothing was built again
    copy.untouched()


@pytest.fixture(scope="module")
def archive(copy, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("export") / "autograder.zip"
    done = kit(copy, "export-gradescope", "--out", str(path))
    assert done.returncode == 0, done.stderr
    return path


@pytest.mark.pinned_hypothesis
def test_the_gradescope_zip_holds_the_exercise_beside_the_engine(copy, archive):
    with zipfile.ZipFile(archive) as zf:
        names = set(zf.namelist())
        assert 'id = "wer"' in zf.read("problem/exercise.toml").decode()
        assert "word_error_rate" in zf.read("solutions/reference.py").decode()
    assert {"grader/judging/grade.py", "hidden_tests/test_private.py", "solutions/misconceptions.py"} <= names
    assert not [n for n in names if n.startswith("build/")]
    copy.untouched()


@pytest.mark.pinned_hypothesis
@pytest.mark.needs_root(IN_THE_CONTAINER)
def test_the_autograder_grades_the_exercise_in_gradescope_s_layout(copy, archive, tmp_path):
    (tmp_path / "wheels").mkdir()
    (tmp_path / "gradescope").mkdir()
    wheelhouse = wheels_for(archive, tmp_path / "wheels")
    built = build_image(archive, wheelhouse, tmp_path / "gradescope")
    right = run_autograder(built, wheelhouse, {"wer.py": CORRECT.read_text()})
    check_format(right)
    assert right["score"] == max_score(right) == 35
    wrong = run_autograder(built, wheelhouse, {"wer.py": WRONG.read_text()})
    assert 0 < wrong["score"] < max_score(wrong) == 35
    assert "word_error_rate(" in wrong["output"]  # the diagnosis, from the exercise's own models
    copy.untouched()
