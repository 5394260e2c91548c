"""Instructors' adjustments (--adjust, TOML): read strictly, applied per student and per diagnosis, shown everywhere."""

from __future__ import annotations

import csv
import io
import json
import os
import tomllib
from dataclasses import replace

import pytest
from lms_results import ROSTERS, submission

from grader.core import exercise
from grader.core.adjustments import AdjustError, apply, parse_plan, read_plan
from grader.core.results import ClassRun
from grader.judging import passback
from grader.reports.files import grades_csv, write_outputs

EXAMPLE = """
# Scores are points out of the exercise's maximum.
[[student]]
who = "ann.py"
score = 100
reason = "Regraded by hand"

[[student]]
who = "bob@example.edu"
change = -5
reason = "Late"

[diagnosis.no_clipping]
change = 3
comment = "Rule 2: clip repeated words."
"""


def _plan(text: str):
    return parse_plan(tomllib.loads(text))


def test_the_documented_example_reads_back(tmp_path):
    path = tmp_path / "adjust.toml"
    path.write_bytes(b"\xef\xbb\xbf" + EXAMPLE.encode())  # an editor's BOM is fine
    plan = read_plan(path)
    assert [(s.who, s.score, s.change) for s in plan.students] == [("ann.py", 100.0, None), ("bob@example.edu", None, -5.0)]
    assert [(d.mistake, d.change, d.comment) for d in plan.diagnoses] == [("no_clipping", 3.0, "Rule 2: clip repeated words.")]


@pytest.mark.parametrize(
    "text, error",
    [
        ('[[student]]\nwho = "a"\nscore = 1\n', "reason"),
        ('[[student]]\nwho = "a"\nreason = "r"\n', "either score"),
        ('[[student]]\nwho = "a"\nscore = 1\nchange = 1\nreason = "r"\n', "either score"),
        ('[[student]]\nwho = "a"\nscore = -1\nreason = "r"\n', "below 0"),
        ('[[student]]\nwho = "a"\nscore = nan\nreason = "r"\n', "number of points"),
        ('[[student]]\nwho = "a"\nscore = "9"\nreason = "r"\n', "number of points"),
        ('[[student]]\nwho = "a"\nscore = 1\nreason = "r"\ngrade = 3\n', "unknown key"),
        ('[[student]]\nwho = "A"\nscore = 1\nreason = "r"\n[[student]]\nwho = "a"\nchange = 1\nreason = "r"\n', "more than one"),
        ("[diagnosis.x]\nchange = 1\n", "comment"),
        ("[students]\n", "unknown section"),
    ],
)
def test_a_bad_adjustment_is_an_error_naming_its_entry(text, error):
    with pytest.raises(AdjustError, match=error):
        _plan(text)


def test_a_fifo_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "a.toml")
    with pytest.raises(AdjustError, match="not a regular file"):
        read_plan(tmp_path / "a.toml")


def test_bad_toml_is_an_error_with_its_line(tmp_path):
    (tmp_path / "a.toml").write_text("[[student]\n")
    with pytest.raises(AdjustError, match="not valid TOML.*line 1"):
        read_plan(tmp_path / "a.toml")


def test_diagnosis_change_applies_to_everyone_diagnosed_and_student_changes_follow():
    results = [
        submission("ann.py", 80, mistake="no_clipping"),
        submission("bob.py", 60, mistake="no_clipping", student={"email": "bob@example.edu"}),
        submission("cy.py", 50, mistake="no_lowercase"),
    ]
    adjusted, outcome = apply(results, _plan(EXAMPLE))
    assert [r.final_score for r in adjusted] == [100, 58, 50]
    assert [r.score for r in adjusted] == [80, 60, 50]  # the grader's score is kept
    assert adjusted[2].adjusted_score is None and outcome.adjusted == 2 and outcome.unused == []
    assert [a.describe() for a in adjusted[0].adjustments] == [
        "diagnosis no_clipping: +3: Rule 2: clip repeated words.",
        "instructor: set to 100 (+17): Regraded by hand",
    ]
    assert [r.final_score for r in results] == [80, 60, 50]  # a step: the results it was given are left as they were


def test_a_diagnosis_without_a_model_is_adjusted_by_the_name_the_class_report_gives_it():
    """docs/lms-gradebook.md: "(rule: round)", "(one answer)", "(no answer)", "(no known mistake)"."""
    results = [submission(f"{n}.py", 40, mistake="x") for n in ("ann", "bob", "cy", "dee")]
    diagnoses = [
        {"kind": "rules", "rules": ["round", "case"]},
        {"kind": "constant"},
        {"kind": "no_answer"},
        {"kind": "unknown"},
    ]
    results = [replace(r, diagnosis=replace(r.diagnosis, mistake=None, **d)) for r, d in zip(results, diagnoses)]
    plan = _plan(
        '[diagnosis."(rule: round)"]\nchange = 4\ncomment = "Rule 4."\n'
        '[diagnosis."(one answer)"]\nchange = 3\ncomment = "One."\n'
        '[diagnosis."(no answer)"]\nchange = 2\ncomment = "None."\n'
        '[diagnosis."(no known mistake)"]\nchange = 1\ncomment = "Ask me."\n'
        '[diagnosis."(rule: case)"]\nchange = 9\ncomment = "Only the first rule names it."\n'
    )
    adjusted, outcome = apply(results, plan)
    assert [r.final_score for r in adjusted] == [44, 43, 42, 41]
    assert outcome.unused == ["[diagnosis.(rule: case)]: no submission has this diagnosis"]


def test_an_adjustment_matching_nobody_is_listed_never_ignored():
    _, outcome = apply([submission("cy.py", 50, mistake="no_lowercase")], _plan(EXAMPLE))
    assert outcome.unused == [
        "[diagnosis.no_clipping]: no submission has this diagnosis",
        "[[student]] who = 'ann.py': matches no submission",
        "[[student]] who = 'bob@example.edu': matches no submission",
    ]


def test_a_who_matching_two_submissions_is_listed_not_applied():
    results = [submission("a/ann.py"), submission("b/ann.py", student={"name": "ann"})]
    adjusted, outcome = apply(results, _plan('[[student]]\nwho = "ann"\nchange = 1\nreason = "r"\n'))
    assert "matches 2 submissions" in outcome.unused[0] and all(r.adjustments is None for r in adjusted)


def test_scores_stay_within_zero_and_the_maximum_with_the_limit_shown():
    results = [submission("ann.py", 110), submission("bob.py", 2)]
    adjusted, outcome = apply(
        results,
        _plan(
            '[[student]]\nwho = "ann"\nchange = 10\nreason = "bonus"\n[[student]]\nwho = "bob"\nchange = -5\nreason = "late"\n'
        ),
    )
    assert [r.final_score for r in adjusted] == [113, 0]
    assert adjusted[0].adjustments[-1].as_json() == {"by": "limit", "change": -7.0, "reason": "a score stays within 0..113"}
    assert outcome.clamped == ["ann.py: 120 is outside 0..113, so 113", "bob.py: -3 is outside 0..113, so 0"]


def test_a_second_run_replaces_earlier_adjustments_instead_of_adding_to_them():
    plan = _plan('[[student]]\nwho = "ann"\nchange = 10\nreason = "r"\n')
    once, _ = apply([submission("ann.py", 80)], plan)
    twice, _ = apply(once, plan)
    assert twice[0].final_score == 90 and len(twice[0].adjustments) == 1
    (none,), outcome = apply(twice, None)
    assert none.adjusted_score is None and none.adjustments is None and none.final_score == 80 and outcome is None


def test_who_may_name_the_roster_row_a_submission_matched():
    document = ClassRun(exercise="meteor", isolation="", submissions=[submission("martinezbob.py", 60)])
    pb = passback.Passback(
        roster=passback.read_roster(ROSTERS / "canvas.csv"),
        plan=_plan(
            '[[student]]\nwho = "S102"\nchange = 1\nreason = "r"\n[[student]]\nwho = "bmartinez"\nchange = 2\nreason = "r"\n'
        ),
    )
    run, _ = passback.apply(document, pb)
    # The SIS user id is no key; the login on the matched roster row is.
    assert run.submissions[0].final_score == 62
    assert run.adjust is not None and run.adjust.unused == ["[[student]] who = 'S102': matches no submission"]
    assert run.submissions[0].as_json()["lms_student"] == {"lms_id": "102", "name": "Martinez, Bob"}


def test_grades_csv_and_gradescope_files_show_the_adjustment(tmp_path):
    results, _ = apply([submission("ann.py", 80, mistake="no_clipping"), submission("=cy.py", 50)], _plan(EXAMPLE))
    rows = list(csv.reader(io.StringIO(grades_csv(results))))
    assert rows[0][-2:] == ["adjusted_score", "adjustments"]
    assert rows[1][-2:] == [
        "100",
        "diagnosis no_clipping: +3: Rule 2: clip repeated words. | instructor: set to 100 (+17): Regraded by hand",
    ]
    assert rows[2][0] == "'=cy.py" and rows[2][-2:] == ["50", ""]
    write_outputs(
        tmp_path, ClassRun(exercise="meteor", isolation="bubblewrap", submissions=results), exercise.load(exercise.KIT_ROOT)
    )
    shown = json.loads((tmp_path / "gradescope" / "ann.py" / "results.json").read_text())
    assert shown["score"] == 100 and "The tests gave 80; adjusted:" in shown["output"]
    saved = json.loads((tmp_path / "results.json").read_text())["submissions"][0]
    assert saved["score"] == 80 and saved["adjusted_score"] == 100


def test_without_adjustments_grades_csv_keeps_its_columns():
    assert grades_csv([submission("ann.py")]).splitlines()[0] == (
        "submission,score,max_score,status,passed,tests,name,lms_id,login,email,late,submitted_at,layout,path,note"
    )
