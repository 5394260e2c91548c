"""The Gradescope autograder zip, run against a simulated /autograder layout in a temporary root."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import zipfile

from grader.gradescope import to_gradescope


def test_a_result_converts_to_gradescopes_format():
    result = {"submission": "a.py", "score": 3.0, "max_score": 5.0, "status": "graded", "message": "", "passed": 1,
              "duration": 1.4, "tests": [
                  {"name": "t1", "tier": "examples", "status": "pass", "message": "", "output": "", "score": 1.0, "max_score": 1.0},
                  {"name": "t2", "tier": "private", "status": "fail", "message": "expected 0.5", "output": "hi",
                   "score": 0.0, "max_score": 3.0}]}
    converted = to_gradescope(result)
    assert converted["score"] == 3.0 and converted["output"] == "1/2 tests passed"
    assert [t["status"] for t in converted["tests"]] == ["passed", "failed"]
    assert converted["tests"][1] == {"name": "private: t2", "number": "2", "score": 0.0, "max_score": 3.0, "status": "failed",
                                     "output": "expected 0.5\nprinted:\nhi", "visibility": "after_published"}


def test_run_autograder_grades_the_submission_in_a_simulated_autograder_root(tmp_path, meteor_kit, kit_root):
    archive = tmp_path / "autograder.zip"
    run = subprocess.run([str(meteor_kit), "export-gradescope", "--out", str(archive)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    root = tmp_path / "autograder"
    with zipfile.ZipFile(archive) as zf:
        names = zf.namelist()
        assert {"setup.sh", "run_autograder", "source/pyproject.toml", "source/grader/grade.py",
                "source/hidden_tests/test_private.py", "source/solutions/reference.py"} <= set(names)
        assert zf.getinfo("run_autograder").external_attr >> 16 & stat.S_IXUSR
        zf.extractall(root)
    (root / "submission").mkdir()
    wrong = (kit_root / "solutions" / "reference.py").read_text().replace("candidate.lower()", "candidate")
    (root / "submission" / "meteor.py").write_text(wrong)
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "AUTOGRADER_PYTHON": sys.executable}
    run = subprocess.run(["bash", str(root / "run_autograder")], capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    assert 0 < results["score"] < sum(t["max_score"] for t in results["tests"])
    failed = [t["name"] for t in results["tests"] if t["status"] == "failed"]
    assert "hidden: test_rule[uppercase_candidate]" in failed
    assert all(t["visibility"] in ("visible", "after_published") for t in results["tests"])


def test_run_autograder_explains_an_empty_upload(tmp_path, meteor_kit):
    archive = tmp_path / "autograder.zip"
    subprocess.run([str(meteor_kit), "export-gradescope", "--out", str(archive)], check=True, capture_output=True)
    root = tmp_path / "autograder"
    with zipfile.ZipFile(archive) as zf:
        zf.extractall(root)
    (root / "submission").mkdir()
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "AUTOGRADER_PYTHON": sys.executable}
    run = subprocess.run(["bash", str(root / "run_autograder")], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == 0 and "Upload one .py or .ipynb file" in results["output"]
