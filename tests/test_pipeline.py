"""grade_class (grader/judging/pipeline.py): one class, from the submissions found to every file written."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace

from conftest import KIT_ROOT

from grader.core import exercise
from grader.core.results import ClassRun, SubmissionStatus
from grader.judging.discovery import Spec
from grader.judging.pipeline import ClassRequest, grade_class

EXERCISE = exercise.load(KIT_ROOT)
REFERENCE = KIT_ROOT / "solutions" / "reference.py"
WRONG = KIT_ROOT / "tests" / "catalogue" / "wrong" / "no_clipping.py"


def test_a_class_of_one_without_an_out_is_graded_and_nothing_is_kept_or_written(tmp_path):
    said: list[str] = []
    request = ClassRequest(EXERCISE, specs=[Spec("ann.py", REFERENCE)], similar=False, progress=False, tell=said.append)
    run = grade_class(request)
    (result,) = run.submissions
    assert result.status == SubmissionStatus.GRADED and result.score == result.max_score > 0 and result.source
    assert result.key is None and not result.reused and run.similar is None
    assert run.settings is not None and run.settings.timeout == EXERCISE.call_timeout
    assert list(tmp_path.iterdir()) == [] and not any("unchanged" in line for line in said)


def test_a_second_run_into_the_same_out_keeps_the_unchanged_result_named_as_it_is_now(tmp_path):
    klass = tmp_path / "class"
    klass.mkdir()
    shutil.copy(WRONG, klass / "bob.py")
    out = tmp_path / "out"
    request = ClassRequest(EXERCISE, specs=[Spec("bob.py", klass / "bob.py")], out=out, progress=False, tell=lambda _: None)
    first = grade_class(request)
    said: list[str] = []
    again = grade_class(replace(request, specs=[Spec("robert.py", klass / "bob.py")], tell=said.append))
    (kept,) = again.submissions
    assert kept.reused and kept.submission == "robert.py" and kept.key == first.submissions[0].key
    assert kept.tests == first.submissions[0].tests and kept.diagnosis == first.submissions[0].diagnosis
    assert "1 submission(s) unchanged since the last run" in said[0]
    written = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert written["schema_version"] == 1 and written["submissions"][0]["submission"] == "robert.py"


def test_merged_shards_are_not_graded_again_but_checked_for_similar_code_and_written(tmp_path):
    graded = grade_class(
        ClassRequest(EXERCISE, specs=[Spec("ann.py", REFERENCE)], similar=False, progress=False, tell=lambda _: None)
    )
    ann = graded.submissions[0]
    merged = ClassRun(exercise=EXERCISE.id, isolation="none", submissions=[ann, replace(ann, submission="copy.py")])
    said: list[str] = []
    run = grade_class(ClassRequest(EXERCISE, out=tmp_path, merged=merged, tell=said.append))
    assert [r.submission for r in run.submissions] == ["ann.py", "copy.py"] and run.submissions[0] is ann
    assert run.similar is not None and [(p.a, p.b, p.identical) for p in run.similar] == [("ann.py", "copy.py", True)]
    assert said == ["checking 2 submission(s) for similar code..."]  # and nothing about grading
    assert sorted(p.name for p in (tmp_path / "gradescope").iterdir()) == ["ann.py", "copy.py"]
    assert json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))["similar"][0]["identical"] is True
