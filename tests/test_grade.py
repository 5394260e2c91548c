"""`meteor-kit grade`: arguments, finding submissions, notebooks, output files."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from grader.core.notebook import extract
from grader.judging.grade import UsageError, discover

CATALOGUE = Path(__file__).parent / "catalogue"


def grade(meteor_kit, *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([str(meteor_kit), "grade", *map(str, args)], capture_output=True, text=True, timeout=timeout)


def notebook(*cells: str) -> str:
    return json.dumps(
        {
            "nbformat": 4,
            "nbformat_minor": 5,
            "metadata": {},
            "cells": [{"cell_type": "markdown", "metadata": {}, "source": ["# My METEOR\n"]}]
            + [
                {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": c.splitlines(True)}
                for c in cells
            ],
        }
    )


@pytest.mark.parametrize(
    "args, words",
    [
        (["/no/such/path", "--out", "OUT"], "no such file or directory: /no/such/path"),
        (["SUB", "--out", "OUT", "--jobs", "0"], "--jobs: must be at least 1"),
        (["SUB", "--out", "OUT", "--timeout", "-1"], "--timeout: must be a positive number"),
        (["SUB", "--out", "OUT", "--budget", "soon"], "--budget: not a number"),
        (["SUB"], "the following arguments are required: --out"),
        (["README", "--out", "OUT"], "is not a .py or .ipynb file"),
    ],
)
def test_bad_arguments_stop_with_a_clear_message_and_status_2(meteor_kit, tmp_path, args, words):
    (tmp_path / "sub.py").write_text("def meteor_score(r, c, alpha=0.9, beta=3, gamma=0.5):\n    return 0.0\n")
    (tmp_path / "README").write_text("not a submission")
    names = {"SUB": tmp_path / "sub.py", "OUT": tmp_path / "out", "README": tmp_path / "README"}
    run = grade(meteor_kit, *[names.get(a, a) for a in args], timeout=60)
    assert run.returncode == 2 and words in run.stderr
    assert not (tmp_path / "out").exists()


def test_a_directory_holding_one_file_is_named_after_the_directory(tmp_path):
    (tmp_path / "class" / "alice").mkdir(parents=True)
    (tmp_path / "class" / "alice" / "solution.py").write_text("x")
    (tmp_path / "class" / "bob").mkdir()
    (tmp_path / "class" / "bob" / "work.ipynb").write_text("{}")
    (tmp_path / "class" / "carol").mkdir()
    (tmp_path / "class" / "dave.py").write_text("x")
    (tmp_path / "class" / "notes.txt").write_text("x")
    specs = discover([str(tmp_path / "class")])
    assert [(s.name, s.path.name if s.path else None, s.problem) for s in specs] == [
        ("dave.py", "dave.py", ""),
        ("alice", "solution.py", ""),
        ("bob", "work.ipynb", ""),
        ("carol", None, "the directory holds no .py or .ipynb file"),
    ]
    assert [s.name for s in discover([str(tmp_path / "class" / "alice")])] == ["solution.py"]
    with pytest.raises(UsageError):
        discover([str(tmp_path / "class" / "carol")])


def test_a_notebook_keeps_its_code_and_skips_magics_and_shell_lines():
    script = extract(notebook("%timeit f()\n!pip install numpy\nfiles = !ls\nx = 1", "%%bash\necho hi", "y = x + 1"))
    assert script.source.splitlines() == [
        "# (IPython line skipped)",
        "# (IPython line skipped)",
        "# (IPython line skipped)",
        "x = 1",
        "# (cell magic skipped)",
        "# (cell magic skipped)",
        "y = x + 1",
    ]
    assert script.where(7) == "cell 4, line 1"


@pytest.fixture(scope="module")
def class_run(tmp_path_factory, kit_root, meteor_kit):
    """One class with a notebook, a directory submission, printed output and a broken notebook."""
    root = tmp_path_factory.mktemp("grade")
    klass = root / "class"
    (klass / "alice").mkdir(parents=True)
    reference = (kit_root / "solutions" / "reference.py").read_text()
    shutil.copy(kit_root / "solutions" / "reference.py", klass / "alice" / "meteor.py")
    (klass / "bob.ipynb").write_text(
        notebook("%load_ext autoreload\n!pip install nothing", reference, "%timeit meteor_score('a', 'a')")
    )
    (klass / "carol.ipynb").write_text(notebook("import math", "def meteor_score(reference, candidate:\n    pass"))
    (klass / "dave.py").write_text(
        reference.replace("    ref_tokens = ", "    print('tokenizing', repr(reference))\n    ref_tokens = ")
    )
    out = root / "out"
    (out / "gradescope" / "someone_gone").mkdir(parents=True)  # from an earlier run: must not survive a regrade
    run = grade(meteor_kit, klass, "--out", out, "--jobs", "2")
    return run, out, {r["submission"]: r for r in json.loads((out / "results.json").read_text())["submissions"]}


def test_a_class_grades_py_files_notebooks_and_directories(class_run):
    run, out, results = class_run
    assert run.returncode == 0, run.stderr
    assert sorted(results) == ["alice", "bob.ipynb", "carol.ipynb", "dave.py"]
    for name in ("alice", "bob.ipynb", "dave.py"):
        assert results[name]["status"] == "graded" and results[name]["score"] == results[name]["max_score"]


def test_a_broken_notebook_names_the_cell_and_line(class_run):
    carol = class_run[2]["carol.ipynb"]
    assert carol["status"] == "error"
    assert "syntax error on cell 3, line 1" in carol["message"]


def test_printed_output_is_attached_to_each_test(class_run):
    tests = {t["name"]: t for t in class_run[2]["dave.py"]["tests"]}
    assert tests["test_statement_example[worked_example]"]["output"] == "tokenizing 'Rain falls gently from the sky'\n"
    assert all(t["output"] == "" for t in class_run[2]["alice"]["tests"])


def test_results_and_the_summary_say_which_way_the_tests_and_the_property_tests_ran(class_run, kit_root):
    from grader.core import exercise
    from grader.judging.grade import Settings, paths
    from grader.reports.progress import ran_as

    run, out, _ = class_run
    said = json.loads((out / "results.json").read_text())["paths"]
    # As this process would run them: memoized where the memoized side is installed, replay where
    # hypothesis is a version the kit knows (grader/core/hypothesis_adapter.py).
    assert said == paths(Settings(exercise.load(kit_root), 2.0, 60.0))
    assert said["tests"] in ("memoized", "plain") and said["property_tests"] in ("replay", "plain hypothesis")
    assert ran_as(said) in run.stdout.splitlines()


def test_the_summary_shows_the_distribution_and_the_most_failed_tests(class_run):
    summary = class_run[0].stdout
    assert "graded 4 submission(s)" in summary and "score distribution" in summary
    assert "1 could not be graded" in summary and "carol.ipynb" in summary


def test_results_keep_the_code_as_graded_for_the_report(class_run, kit_root):
    results = class_run[2]
    assert results["alice"]["source"] == (kit_root / "solutions" / "reference.py").read_text()
    assert "%timeit" not in results["bob.ipynb"]["source"] and "def meteor_score" in results["bob.ipynb"]["source"]
    assert "def meteor_score(reference, candidate:" in results["carol.ipynb"]["source"]  # shown even when it cannot load
    report = (class_run[1] / "report.html").read_text()
    assert "code not recorded" not in report


def test_a_regrade_replaces_the_output_files(class_run):
    out = class_run[1]
    assert sorted(p.name for p in (out / "gradescope").iterdir()) == ["alice", "bob.ipynb", "carol.ipynb", "dave.py"]
    # The identity columns come after the first six, so readers of those still work.
    assert (out / "grades.csv").read_text().splitlines()[0] == (
        "submission,score,max_score,status,passed,tests,name,lms_id,login,email,late,submitted_at,layout,path,note"
    )
    # Every output can be read by others (temporary files and directories start private).
    for path in [out / "gradescope", out / "results.json", out / "report.html", out / "grades.csv"]:
        assert path.stat().st_mode & 0o004, path
