"""Rosters in (Canvas, Moodle, Gradescope exports, hostile ones), matching, and import-ready gradebooks out."""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import shutil
import subprocess

import pytest
from lms_results import ROSTERS, submission

from grader.core import exercise
from grader.judging import passback
from grader.judging.discovery import UsageError
from grader.lms.canvas import assignment_column, canvas_gradebook
from grader.lms.folder import CONTESTED, PLAIN_COLUMNS, plain_gradebook
from grader.lms.moodle import NO_SUBMISSION, moodle_gradebook
from grader.lms.registry import parse_roster, read_roster
from grader.reports import gradebook
from grader.reports.roster import CELL_LIMIT, RosterError, match


def _table(text: str) -> list[list[str]]:
    assert text.startswith("\ufeff")
    return list(csv.reader(io.StringIO(text[1:], newline="")))


# ---------------------------------------------------------------- reading and detecting


def test_canvas_export_is_detected_with_its_students_and_without_its_extra_rows():
    roster = read_roster(ROSTERS / "canvas.csv")
    assert roster.kind == "canvas"
    assert [(s.lms_id, s.name, s.login) for s in roster.students] == [
        ("101", "Lee, Ann", "alee"),
        ("102", "Martinez, Bob", "bmartinez"),
        ("104", "Okafor, Chi", "cokafor"),
    ]
    assert len(roster.rows) == 5  # Points Possible and the test student are kept, as rows


def test_moodle_worksheet_is_detected_with_participant_ids_and_maximum_grades():
    roster = read_roster(ROSTERS / "moodle.csv")  # starts with a BOM
    assert roster.kind == "moodle"
    assert [(s.lms_id, s.name, s.maximum) for s in roster.students][:2] == [
        ("501", "Ann Lee", 100.0),
        ("502", "Bob Martinez", 10.0),
    ]


def test_a_canvas_export_without_sis_columns_is_still_canvas():
    roster = parse_roster(b"Student,ID,Section,METEOR score (1002)\nLee,101,A,\n")
    assert roster.kind == "canvas" and roster.students[0].lms_id == "101"


def test_gradescope_export_is_a_plain_roster_keyed_by_sid():
    roster = read_roster(ROSTERS / "gradescope.csv")
    assert roster.kind == "plain"
    assert [(s.lms_id, s.email) for s in roster.students][0] == ("1001", "ann@example.edu")


def test_a_csv_that_is_no_gradebook_is_refused_with_its_header():
    with pytest.raises(RosterError, match="header \\('Name', 'Score'\\) is neither Canvas"):
        parse_roster(b"Name,Score\nann,3\n")


def test_bom_and_crlf_line_ends_are_read_like_plain_csv():
    plain = b"Student,ID,SIS User ID,SIS Login ID,Section,Quiz (7)\nLee,1,,alee,A,\n"
    hostile = b"\xef\xbb\xbf" + plain.replace(b"\n", b"\r\n")
    assert [s.__dict__ for s in parse_roster(hostile).students] == [s.__dict__ for s in parse_roster(plain).students]
    assert parse_roster(hostile).header[0] == "Student"


def test_a_huge_cell_is_refused_not_held():
    with pytest.raises(RosterError, match="cell of more than"):
        parse_roster(b"Student,ID,SIS User ID,SIS Login ID\n" + b"x" * (CELL_LIMIT + 1) + b",1,,a\n")


def test_bytes_that_are_not_utf8_and_encoded_surrogates_become_replacement_characters_with_a_warning():
    roster = parse_roster(b"Student,ID,SIS User ID,SIS Login ID\n" + b"Ann \xed\xa0\x80 \xff,1,,alee\n")
    assert roster.students[0].name == "Ann \ufffd\ufffd\ufffd \ufffd"
    assert "not valid UTF-8" in roster.warnings[0]


def test_lone_surrogates_in_a_roster_never_reach_the_gradebook():
    roster = parse_roster(
        "Student,ID,SIS User ID,SIS Login ID,Section,Quiz (7)\nAnn \ud800,1,,alee,A,\n".encode("utf-8", "surrogatepass")
    )
    text = canvas_gradebook(roster, [submission("alee.py")], match([submission("alee.py")], roster), 5)
    text.encode("utf-8")  # would raise on a lone surrogate
    assert "\ud800" not in text


def test_duplicate_student_ids_are_refused_naming_them():
    with pytest.raises(RosterError, match="more than once.*'7'"):
        parse_roster(b"Student,ID,SIS User ID,SIS Login ID\nAnn,7,,a\nBob,7,,b\n")


def test_a_fifo_or_a_missing_file_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "fifo.csv")
    with pytest.raises(RosterError, match="not a regular file"):
        read_roster(tmp_path / "fifo.csv")
    with pytest.raises(RosterError, match="cannot read the roster .*No such file"):
        read_roster(tmp_path / "none.csv")


def test_a_nul_byte_says_it_is_not_csv():
    with pytest.raises(RosterError, match="NUL"):
        parse_roster(b"PK\x03\x04\x00\x00Student,ID")


def test_formulas_in_the_roster_are_neutralised_in_the_gradebook_and_numbers_kept():
    roster = read_roster(ROSTERS / "canvas_formulas.csv")
    results = [submission("cmallory.py", score=56.5)]
    table = _table(canvas_gradebook(roster, results, match(results, roster), roster.header.index("METEOR score (1002)")))
    cells = [c for row in table for c in row]
    assert not [c for c in cells if c[:1] in ("=", "+", "@") or (c[:1] == "-" and not c[1:].replace(".", "").isdigit())]
    assert table[2][0] == "'=cmd|' /C calc'!A0" and table[2][5] == "25"  # 56.5/113 of 50 points
    assert table[3][3] == "'-2+3" and table[1][5] == "50"


def test_a_roster_with_a_shard_is_a_usage_error():
    args = argparse.Namespace(roster=ROSTERS / "canvas.csv", shard=(1, 3), assignment=None, adjust=None, missing="zero")
    with pytest.raises(UsageError, match="give --roster to `meteor-kit merge`"):
        passback.load(args, exercise.load(exercise.KIT_ROOT))


def test_assignment_with_a_roster_that_is_not_canvas_is_a_usage_error():
    args = argparse.Namespace(roster=ROSTERS / "moodle.csv", assignment="x", adjust=None, missing="zero")
    with pytest.raises(UsageError, match="this roster is moodle's"):
        passback.load(args, exercise.load(exercise.KIT_ROOT))


# ---------------------------------------------------------------- matching


def test_the_student_field_matches_by_lms_id_before_any_name():
    roster = read_roster(ROSTERS / "canvas.csv")
    # lms-in's identity: the file is named after someone else, the id says who it is.
    results = [
        submission("cokafor.py", student={"lms_id": "101", "login": "alee"}),
        submission("x.py", student={"login": "bmartinez"}),
    ]
    found = match(results, roster)
    assert {i: s.lms_id for i, s in found.by_result.items()} == {0: "101", 1: "102"}
    assert [s.lms_id for s in found.missing] == ["104"]


def test_a_canvas_download_name_matches_the_squashed_sortable_name():
    roster = read_roster(ROSTERS / "canvas.csv")
    found = match([submission("martinezbob.py")], roster)
    assert found.by_result[0].lms_id == "102"


def test_a_moodle_folder_name_matches_its_participant_id_even_with_a_forged_one_in_the_name():
    roster = read_roster(ROSTERS / "moodle.csv")
    results = [
        submission("Bob Martinez_501_assignsubmission_file_x_502_assignsubmission_file_"),
        submission("", student={"lms_id": "503", "name": "Chi Okafor"}),
    ]
    found = match(results, roster)
    assert found.by_result[0].lms_id == "502" and found.by_result[1].lms_id == "503"


def test_a_gradescope_roster_matches_by_email():
    roster = read_roster(ROSTERS / "gradescope.csv")
    found = match([submission("s1", student={"email": "BOB@example.edu"})], roster)
    assert found.by_result[0].lms_id == "1002"


def test_two_submissions_for_one_student_keep_the_stronger_match_and_list_the_other():
    roster = read_roster(ROSTERS / "canvas.csv")
    results = [submission("alee.py"), submission("zz.py", student={"lms_id": "101"})]
    found = match(results, roster)
    assert found.by_result[1].lms_id == "101"
    assert found.unmatched == [(0, "its student (Lee, Ann) already has a submission: zz.py")]


def test_a_name_two_students_share_is_never_guessed():
    roster = parse_roster(
        b"Identifier,Full name,Email address,Status,Grade,Maximum Grade,Grade can be changed,"
        b"Last modified (submission),Last modified (grade),Feedback comments\n"
        b"Participant 1,Sam Lee,a@x,,,10,Yes,,,\nParticipant 2,Sam Lee,b@x,,,10,Yes,,,\n"
    )
    found = match([submission("Sam Lee.py")], roster)
    assert found.unmatched == [(0, "matches more than one student on the roster")]


def test_an_exact_login_beats_a_case_variant_of_it_whatever_comes_first():
    roster = read_roster(ROSTERS / "canvas.csv")  # Martinez, Bob's login is bmartinez
    results = [submission("BMartinez.py", score=10.0), submission("bmartinez.py")]
    found = match(results, roster)
    assert {i: s.lms_id for i, s in found.by_result.items()} == {1: "102"}
    assert found.unmatched == [(0, "its student (Martinez, Bob) already has a submission: bmartinez.py")]
    assert found.contested == []


def test_an_exact_id_beats_a_case_variant_of_it():
    roster = parse_roster(b"SID,Name\nab12,Ann\nzz9,Zed\n")
    results = [submission("x", student={"lms_id": "AB12"}), submission("y", student={"lms_id": "ab12"})]
    found = match(results, roster)
    assert found.by_result[1].lms_id == "ab12" and [i for i, _ in found.unmatched] == [0]


@pytest.mark.parametrize("names", [("BMartinez.py", "BMARTINEZ.py"), ("bmartinez.py", "bmartinez")])
def test_two_submissions_that_claim_one_student_equally_place_neither(names):
    roster = read_roster(ROSTERS / "canvas.csv")
    results = [submission(names[0]), submission(names[1]), submission("alee.py")]
    found = match(results, roster)
    assert {i: s.lms_id for i, s in found.by_result.items()} == {2: "101"}
    assert [(s.lms_id, claimants) for s, claimants in found.contested] == [("102", [0, 1])]
    assert [i for i, _ in found.unmatched] == [0, 1]
    assert all(f"2 submissions claim Martinez, Bob equally ({names[0]}, {names[1]}" in why for _, why in found.unmatched)
    assert [s.lms_id for s in found.missing] == ["104"]  # claimed, so not "without a submission"


@pytest.mark.parametrize(
    "name",
    ["502", "Eve_502_assignsubmission_file_777", "Eve_502_assignsubmission_file_"],
)
def test_a_name_a_student_chose_in_an_lms_download_is_never_read_as_an_id(name):
    roster = read_roster(ROSTERS / "moodle.csv")  # 502 is Bob Martinez
    results = [submission(name, student={"lms_id": "900", "name": name, "layout": "moodle"})]
    found = match(results, roster)
    assert found.by_result == {} and found.unmatched == [(0, "matches nobody on the roster")]


@pytest.mark.parametrize(
    "flat",
    [
        "Eve_502_assignsubmission_file_777_900_assignsubmission_file_meteor.py",  # Bob's id in her name
        "Eve_900_assignsubmission_file_x_502_assignsubmission_file_meteor.py",  # in her file's name
    ],
)
def test_a_moodle_flat_file_name_with_two_participant_ids_places_nobody(flat):
    roster = read_roster(ROSTERS / "moodle.csv")
    results = [
        submission(flat),
        submission("Ann Lee_501_assignsubmission_file_meteor.py"),
    ]
    found = match(results, roster)
    assert {i: s.lms_id for i, s in found.by_result.items()} == {1: "501"} and [i for i, _ in found.unmatched] == [0]


def test_a_contested_student_is_blank_in_every_gradebook_and_said_so():
    names = ("ANN LEE.py", "ann lee.py")
    moodle = read_roster(ROSTERS / "moodle.csv")
    results = [submission(names[0]), submission(names[1])]
    found = match(results, moodle)
    text, _ = moodle_gradebook(moodle, results, found, {})
    table = _table(text)
    grade, comments = table[0].index("Grade"), table[0].index("Feedback comments")
    assert table[1][grade] == "" and table[2][grade] == "0"  # Ann undecided; Bob missing
    assert "2 submissions claim this student equally (ANN LEE.py, ann lee.py)" in table[1][comments]
    canvas = read_roster(ROSTERS / "canvas.csv")
    results = [submission("ALEE.py"), submission("Alee.py")]
    column = canvas.header.index("METEOR score (1002)")
    table = _table(canvas_gradebook(canvas, results, match(results, canvas), column))
    assert [row[column] for row in table[2:5]] == ["", "0", "0"]
    plain = read_roster(ROSTERS / "gradescope.csv")
    results = [submission("x", student={"email": "ANN@example.edu"}), submission("y", student={"email": "Ann@Example.edu"})]
    table = _table(plain_gradebook(plain, results, match(results, plain)))
    assert table[1][4:9] == ["", "", CONTESTED, "", "x | y"]
    assert "x" in gradebook.unmatched_csv(results, match(results, plain)).splitlines()[1]


# ---------------------------------------------------------------- writing gradebooks


def test_canvas_assignment_column_is_the_one_naming_the_exercise_or_an_error_listing_them():
    roster = read_roster(ROSTERS / "canvas.csv")
    assert roster.header[assignment_column(roster, None, "meteor", "METEOR score")] == "METEOR score (1002)"
    assert roster.header[assignment_column(roster, "1001", "meteor", "x")] == "Week 1 Quiz (1001)"
    with pytest.raises(RosterError, match="none of its columns.*Week 1 Quiz \\(1001\\); METEOR score \\(1002\\)"):
        assignment_column(roster, None, "other", "Other")
    with pytest.raises(RosterError, match="no assignment column"):
        assignment_column(roster, "Current Score", "meteor", "x")


def test_canvas_gradebook_keeps_every_column_and_fills_only_the_assignment():
    roster = read_roster(ROSTERS / "canvas.csv")
    results = [submission("alee.py", score=113.0), submission("bmartinez.py", score=56.5)]
    column = roster.header.index("METEOR score (1002)")
    table = _table(canvas_gradebook(roster, results, match(results, roster), column))
    original = list(csv.reader(io.StringIO((ROSTERS / "canvas.csv").read_text(encoding="utf-8-sig"), newline="")))
    assert table[0] == original[0] and table[1] == original[1]
    assert [row[column] for row in table[2:]] == ["50", "25", "0", ""]  # Okafor missing: 0; the test student untouched
    for new, old in zip(table[2:], original[2:]):
        assert new[:column] + new[column + 1 :] == old[:column] + old[column + 1 :]


def test_missing_blank_leaves_the_cell_empty_and_an_interrupted_result_gets_no_score():
    roster = read_roster(ROSTERS / "canvas.csv")
    results = [submission("alee.py", status="not_graded", score=0.0)]
    column = roster.header.index("METEOR score (1002)")
    table = _table(canvas_gradebook(roster, results, match(results, roster), column, missing="blank"))
    assert [row[column] for row in table[2:5]] == ["", "", ""]


def test_moodle_worksheet_scales_to_each_maximum_and_respects_locked_grades():
    roster = read_roster(ROSTERS / "moodle.csv")
    results = [
        submission("Ann Lee.py", score=113.0),
        submission("x", score=56.5, student={"lms_id": "502"}),
        submission("y", student={"lms_id": "504"}),
    ]
    found = match(results, roster)
    text, warnings = moodle_gradebook(roster, results, found, {0: "<b>well done</b>", 1: "half"})
    table = _table(text)
    grade, comments = table[0].index("Grade"), table[0].index("Feedback comments")
    assert [row[grade] for row in table[1:]] == ["100", "5", "0", ""]
    assert table[1][comments] == "&lt;b&gt;well done&lt;/b&gt;" and table[3][comments] == NO_SUBMISSION
    assert table[4][table[0].index("Last modified (grade)")] == "Tuesday, 4 March 2025, 9:00 AM"
    assert warnings == ["Dee_Under O'Neil: Moodle says the grade cannot be changed; row left as it was"]


def test_plain_gradebook_is_keyed_by_the_lms_id_with_missing_rows_marked():
    roster = read_roster(ROSTERS / "gradescope.csv")
    results = [submission("s", score=80.0, student={"email": "ann@example.edu", "late": True})]
    table = _table(plain_gradebook(roster, results, match(results, roster)))
    assert table[0] == list(PLAIN_COLUMNS)
    assert table[1][:8] == ["1001", "Ann Lee", "", "ann@example.edu", "80", "113", "graded", "true"]
    assert table[2][0] == "1002" and table[2][4:7] == ["0", "", "missing"]


# ---------------------------------------------------------------- the command


CLASS = {
    "alee.py": "solutions/reference.py",
    "bmartinez.py": "tests/catalogue/wrong/no_clipping.py",
    "zed.py": "tests/catalogue/correct/functional.py",
}
ADJUST = """
[[student]]
who = "alee"
change = -10
reason = "Late by two days: 10 points off"

[[student]]
who = "nobody-here"
score = 50
reason = "matches no one"

[diagnosis.no_clipping]
change = 5
comment = "Clipping is rule 2 <b>read it</b>; five points back."
"""


def test_grade_with_roster_and_adjust_writes_gradebook_missing_unmatched_feedback_and_adjusted_results(
    tmp_path, kit_root, meteor_kit
):
    klass = tmp_path / "class"
    klass.mkdir()
    for name, source in CLASS.items():
        shutil.copy(kit_root / source, klass / name)
    (tmp_path / "adjust.toml").write_text(ADJUST)
    out = tmp_path / "out"
    run = subprocess.run(
        [
            str(meteor_kit),
            "grade",
            str(klass),
            "--out",
            str(out),
            "--jobs",
            "1",
            "--roster",
            str(ROSTERS / "canvas.csv"),
            "--adjust",
            str(tmp_path / "adjust.toml"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    # The gradebook: adjusted scores scaled to 50 points, the missing student 0, every other cell as exported.
    table = _table((out / "gradebook-canvas.csv").read_text(encoding="utf-8"))
    column = table[0].index("METEOR score (1002)")
    results = {r["submission"]: r for r in json.loads((out / "results.json").read_text())["submissions"]}
    bob = results["bmartinez.py"]
    assert results["alee.py"]["score"] == 113 and results["alee.py"]["adjusted_score"] == 103
    assert bob["adjusted_score"] == bob["score"] + 5 and bob["diagnosis"]["mistake"] == "no_clipping"
    assert [row[column] for row in table[2:5]] == ["45.58", f"{round(bob['adjusted_score'] / 113 * 50, 2):g}", "0"]
    assert results["alee.py"]["adjustments"] == [
        {"by": "student", "who": "alee", "change": -10.0, "reason": "Late by two days: 10 points off"}
    ]
    # Who is missing, who matched nobody, which adjustment matched nobody: terminal, files, report.
    assert "roster (canvas): 2 matched, 1 without a submission, 1 submission(s) matching nobody" in run.stdout
    assert (
        "zed.py: matches nobody on the roster" in run.stdout
        and "without a submission (marked missing in the gradebook): Okafor, Chi" in run.stdout
    )
    assert "warning: [[student]] who = 'nobody-here': matches no submission" in run.stdout
    assert list(csv.reader(io.StringIO((out / "unmatched.csv").read_text())))[1][0] == "zed.py"
    report = (out / "report.html").read_text()
    assert (
        "zed.py: matches nobody on the roster" in report
        and "nobody-here" in report
        and "103/113" in report
        and "<li>Okafor, Chi</li>" in report
    )
    assert "adjusted_score" in (out / "grades.csv").read_text().splitlines()[0]
    assert "Adjusted from 113 to 103" in (out / "report" / "alee.py.html").read_text()
    assert json.loads((out / "gradescope" / "alee.py" / "results.json").read_text())["score"] == 103
    # Feedback: one per student, Markdown and HTML, with the score, failed tests, diagnosis and adjustment.
    names = sorted(p.name for p in (out / "feedback").iterdir())
    assert names == [
        "101-Lee__Ann.html",
        "101-Lee__Ann.md",
        "102-Martinez__Bob.html",
        "102-Martinez__Bob.md",
        "zed.py.html",
        "zed.py.md",
    ]
    page = (out / "feedback" / "102-Martinez__Bob.html").read_text()
    assert f"Score: {bob['adjusted_score']:g} / 113" in page and "repeated words are not clipped" in page
    assert (
        "test_rule[repeated_candidate_words_are_clipped]" in page
        and "&lt;b&gt;read it&lt;/b&gt;" in page
        and "<b>read it" not in page
    )
    # merge rebuilds the same files from results.json; without --adjust no adjustment survives.
    merged = subprocess.run(
        [str(meteor_kit), "merge", str(out), "--out", str(tmp_path / "merged"), "--roster", str(ROSTERS / "canvas.csv")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert merged.returncode == 0, merged.stderr
    again = _table((tmp_path / "merged" / "gradebook-canvas.csv").read_text(encoding="utf-8"))
    assert again[2][column] == "50" and "adjusted_score" not in (tmp_path / "merged" / "results.json").read_text()


def test_a_case_variant_of_a_login_never_takes_its_row_and_a_tie_is_shown_in_every_output(tmp_path, kit_root, meteor_kit):
    # Made here, not committed: a clone on a case-insensitive disk could not hold bmartinez.py and BMartinez.py.
    klass = tmp_path / "class"
    klass.mkdir()
    correct, wrong = kit_root / "solutions" / "reference.py", kit_root / "tests" / "catalogue" / "wrong" / "no_clipping.py"
    for name, source in {"BMartinez.py": wrong, "bmartinez.py": correct, "ALEE.py": correct, "Alee.py": wrong}.items():
        shutil.copy(source, klass / name)
    out = tmp_path / "out"
    run = subprocess.run(
        [str(meteor_kit), "grade", str(klass), "--out", str(out), "--jobs", "2", "--roster", str(ROSTERS / "canvas.csv")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    table = _table((out / "gradebook-canvas.csv").read_text(encoding="utf-8"))
    column = table[0].index("METEOR score (1002)")
    # Bob's own file has his row (full marks, 50 of 50); Ann's is claimed equally twice: blank, not a guess.
    assert {row[0]: row[column] for row in table[2:5]} == {"Lee, Ann": "", "Martinez, Bob": "50", "Okafor, Chi": "0"}
    unmatched = {row[0]: row[-1] for row in list(csv.reader(io.StringIO((out / "unmatched.csv").read_text())))[1:]}
    assert unmatched["BMartinez.py"] == "its student (Martinez, Bob) already has a submission: bmartinez.py"
    tie = "2 submissions claim Lee, Ann equally (ALEE.py, Alee.py"
    assert (
        sorted(unmatched) == ["ALEE.py", "Alee.py", "BMartinez.py"]
        and tie in unmatched["ALEE.py"]
        and tie in unmatched["Alee.py"]
    )
    document = json.loads((out / "results.json").read_text())
    assert document["lms"]["contested"] == [{"lms_id": "101", "name": "Lee, Ann", "submissions": ["ALEE.py", "Alee.py"]}]
    assert [m["lms_id"] for m in document["lms"]["missing"]] == ["104"]
    assert "claimed equally, left blank in the gradebook: Lee, Ann (ALEE.py, Alee.py)" in run.stdout and tie in run.stdout
    assert tie in (out / "report.html").read_text()


def test_grade_refuses_a_bad_roster_before_grading_with_one_line(tmp_path, meteor_kit):
    (tmp_path / "a.py").write_text("def meteor_score(r, c): return 0.0\n")
    (tmp_path / "r.csv").write_text("Name,Score\n")
    run = subprocess.run(
        [str(meteor_kit), "grade", str(tmp_path / "a.py"), "--out", str(tmp_path / "out"), "--roster", str(tmp_path / "r.csv")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 2 and len(run.stderr.strip().splitlines()) == 1 and "not a gradebook" in run.stderr
    assert not (tmp_path / "out" / "results.json").exists()
