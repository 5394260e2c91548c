"""A rerun into the same --out keeps the results of unchanged code, but never a verdict that time ran out."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from lms_results import one_test, result

from grader.core.results import SubmissionResult
from grader.judging import resume

KIT_ROOT = Path(__file__).resolve().parent.parent
# One hidden test's input makes this file spin: that test times out, every other passes.
SPINS_ON_ONE_INPUT = '    if reference == "Die Straße ist lang":\n        while True:\n            pass\n'


def written(out: Path, *results: dict) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    for number, r in enumerate(results):
        r["key"] = f"key-{number}"
    (out / "results.json").write_text(json.dumps({"submissions": list(results)}), encoding="utf-8")
    return out


def test_a_result_that_ran_out_of_time_anywhere_is_not_kept(tmp_path):
    timed_out = result("slow.py")
    timed_out["tests"].append(one_test("test_rule[long]", "timeout", "it did not return within 2 s"))
    spent = result("spent.py")
    spent["tests"].append(one_test("test_rule[last]", "not_run", "the time budget of 60 s was used up"))
    load = result("load.py", status="error", message="could not load the submission: loading the file took longer than 10 s")
    waited = result(
        "wait.py",
        status="error",
        message="could not load the submission: loading the file did not end within 20 s, and it was not computing",
    )
    fine, wrong = result("fine.py"), result("wrong.py", mistake="no_clipping")
    broken = result("broken.py", status="error", message="could not load the submission: syntax error on line 3")
    out = written(tmp_path, timed_out, spent, load, waited, fine, wrong, broken)
    kept = resume.previous(out)
    assert sorted(r.submission for r in kept.values()) == ["broken.py", "fine.py", "wrong.py"]


def test_a_result_whose_tests_are_not_a_list_is_graded_again(tmp_path):
    odd = result("odd.py")
    odd["tests"] = {"status": "pass"}
    kept = resume.previous(written(tmp_path, odd, result("fine.py")))
    assert kept == {"key-1": SubmissionResult.from_json(result("fine.py") | {"key": "key-1"})}


def test_a_rerun_grades_a_timed_out_file_again_and_keeps_the_others(tmp_path, meteor_kit):
    reference = (KIT_ROOT / "solutions" / "reference.py").read_text()
    head, _, body = reference.partition("def meteor_score")
    signature, _, rest = body.partition(":\n")
    klass, out = tmp_path / "class", tmp_path / "out"
    klass.mkdir()
    (klass / "ann.py").write_text(reference)
    (klass / "spin.py").write_text(f"{head}def meteor_score{signature}:\n{SPINS_ON_ONE_INPUT}{rest}")

    def run() -> dict:
        done = subprocess.run(
            [str(meteor_kit), "grade", str(klass), "--out", str(out), "--timeout", "0.5"],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr
        return {r["submission"]: r for r in json.loads((out / "results.json").read_text())["submissions"]}

    first = run()
    timed_out = [t["name"] for t in first["spin.py"]["tests"] if t["status"] == "timeout"]
    assert timed_out == ["test_rule[lower_is_not_casefold]"]
    second = run()
    assert second["ann.py"]["reused"] and not second["spin.py"]["reused"]
    assert [t["name"] for t in second["spin.py"]["tests"] if t["status"] == "timeout"] == timed_out
