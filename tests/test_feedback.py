"""Feedback files for students (Markdown, HTML, Moodle's zip) and the report's roster and adjustment lines."""

from __future__ import annotations

import dataclasses
import html
import re
import zipfile
from io import BytesIO

from lms_results import ROSTERS, one_test, result, submission

from grader.core import exercise
from grader.core.adjustments import apply, parse_plan
from grader.core.results import ClassRun, SubmissionResult
from grader.judging import passback
from grader.lms.moodle import moodle_zip
from grader.lms.registry import read_roster
from grader.reports import feedback
from grader.reports.class_report import render
from grader.reports.roster import Student

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
HOSTILE = "<script>alert(1)</script> [x](javascript:alert(1)) ```"
EXERCISE = exercise.load(exercise.KIT_ROOT)


def titled(title: str) -> exercise.Exercise:
    """The kit's exercise under another title (the feedback's heading)."""
    return dataclasses.replace(EXERCISE, title=title)


def test_feedback_holds_score_failed_tests_and_diagnosis_in_both_formats():
    r = submission("ann.py", 80, mistake="no_clipping")
    md, page = feedback.render(r, Student(0, "7", "Ann Lee"), titled("METEOR score"))
    for text in (md.replace("\\", ""), page):  # Markdown backslashes every mark of a name or sentence
        assert "80 / 113 (71%)" in text and "Tests not passed: 1 of 2" in text
        assert "test_rule[clipping]" in text and "expected 0.5, got 0.7" in text and "Your scores match no_clipping." in text
    assert "test_rule[lowercase]" not in md  # passed tests are not listed


def test_student_text_is_escaped_in_html_and_inert_in_markdown():
    r = result(HOSTILE, 10, mistake="x", message=HOSTILE)
    r["tests"][0]["message"] = HOSTILE
    r["tests"][0]["tier"] = "examples"
    r["diagnosis"]["text"] = HOSTILE
    md, page = feedback.render(SubmissionResult.from_json(r), Student(0, "7", HOSTILE), titled(HOSTILE))
    assert "<script>" not in page and "&lt;script&gt;" in page
    # Markdown: outside code blocks every < [ ` is backslashed; a message sits in a fence longer than its backticks.
    outside = re.sub(r"^( *)````text\n.*?\n\1````$", "", md, flags=re.S | re.M)
    assert not re.search(r"(?<!\\)[<\[`]", outside)
    assert "  ````text\n  " + HOSTILE + "\n  ````" in md


def test_private_tier_messages_are_shown_as_gradescope_shows_them():
    r = result("ann.py", 80)
    r["tests"].append(
        one_test("test_twin[x]", "fail", "the same rule on 'secret input words': returned 'secret input words'", tier="private")
    )
    md, page = feedback.render(SubmissionResult.from_json(r), None, titled("T"))
    assert "secret input" not in md and "secret input" not in page and "test_twin[x]" in page


def test_adjustments_and_late_flag_reach_the_feedback():
    r = submission("ann.py", 80, mistake="no_clipping", student={"late": True})
    (r,), _ = apply([r], parse_plan({"diagnosis": {"no_clipping": {"change": 3, "comment": "Rule 2 <i>again</i>"}}}))
    md, page = feedback.render(r, None, titled("T"))
    assert (
        "83 / 113" in page
        and "the tests gave 80" in page
        and "diagnosis no_clipping: +3: Rule 2 &lt;i&gt;again&lt;/i&gt;" in page
    )
    assert "Submitted late." in md


def test_file_names_are_safe_and_unique_ignoring_case():
    used: set[str] = set()
    names = [
        feedback.file_base(submission("x"), Student(0, "1", "../../etc/passwd"), used),
        feedback.file_base(submission("A.py"), None, used),
        feedback.file_base(submission("a.py"), None, used),
    ]
    assert names == ["1-.._.._etc_passwd", "A.py", "a.py-2"]
    assert all("/" not in n and not n.startswith(".") for n in names)


def test_moodle_zip_has_one_folder_per_student_as_moodles_import_parses_it():
    roster = read_roster(ROSTERS / "moodle.csv")
    dee = roster.students[3]  # Dee_Under O'Neil: the underscore would shift the participant id
    evil = Student(9, "505", "../x_1_assignsubmission_file_/..")
    data = moodle_zip([(roster.students[0], "<p>a</p>"), (dee, "<p>d</p>"), (evil, "e")])
    with zipfile.ZipFile(BytesIO(data)) as zf:
        names = zf.namelist()
        assert zf.read(names[0]) == b"<p>a</p>"
    assert names == [
        "Ann Lee_501_assignsubmission_file_/feedback.html",
        "Dee Under O'Neil_504_assignsubmission_file_/feedback.html",
        "x 1 assignsubmission file_505_assignsubmission_file_/feedback.html",
    ]
    for name in names:  # Moodle: explode('_', part, 5); [1] is the participant id, [2]_[3] the plugin
        parts = name.split("/")[0].split("_", 4)
        assert parts[1].isdigit() and parts[2:4] == ["assignsubmission", "file"] and ".." not in name


def test_moodle_roster_run_writes_the_zip_and_the_worksheet(tmp_path):
    document = {"exercise": "meteor", "submissions": [result("Ann Lee_501_assignsubmission_file_", 113, student={"late": True})]}
    pb = passback.Passback(roster=read_roster(ROSTERS / "moodle.csv"))
    run, matched = passback.apply(ClassRun.from_json(document), pb)
    run = passback.write(tmp_path, run, pb, matched, EXERCISE)
    assert passback.files(run, pb) == ["gradebook-moodle.csv", "unmatched.csv", "feedback-moodle.zip", "feedback/"]
    with zipfile.ZipFile(tmp_path / "feedback-moodle.zip") as zf:
        assert zf.namelist() == ["Ann Lee_501_assignsubmission_file_/feedback.html"]
    assert sorted(p.name for p in (tmp_path / "feedback").iterdir()) == ["501-Ann_Lee.html", "501-Ann_Lee.md"]
    assert run.lms is not None and any("cannot be changed" in w for w in run.lms.warnings)
    worksheet = (tmp_path / "gradebook-moodle.csv").read_text(encoding="utf-8-sig").splitlines()
    assert worksheet[1].startswith("Participant 501,Ann Lee,") and worksheet[1].endswith(
        ',100,100.00,Yes,"Monday, 3 March 2025, 10:00 AM",-,Submitted late.'
    )
    lines = passback.summary(run, pb)
    assert lines[0] == "roster (moodle): 1 matched, 3 without a submission, 0 submission(s) matching nobody"


def test_report_header_lists_unmatched_submissions_and_adjustments_escaped():
    document = {"exercise": "meteor", "isolation": "bubblewrap", "submissions": [result("alee.py", 100), result(HOSTILE, 50)]}
    pb = passback.Passback(
        roster=read_roster(ROSTERS / "canvas.csv"),
        plan=parse_plan(
            {"student": [{"who": "alee", "change": -1, "reason": "late <b>"}, {"who": "ghost", "change": 1, "reason": "x"}]}
        ),
    )
    run, _ = passback.apply(ClassRun.from_json(document), pb)
    page = render(run, EXERCISE.title)
    assert "<script>alert" not in page
    assert f"{html.escape(HOSTILE)}: matches nobody on the roster" in page
    assert "1 submission(s) adjusted" in page and "[[student]] who = &#x27;ghost&#x27;: matches no submission" in page
    assert "99/113" in page and "(tests: 100)" in page


def test_feedback_page_fits_a_phone_without_scrolling_sideways(tmp_path):
    from playwright.sync_api import sync_playwright

    r = result("x", 50, mistake="no_clipping")
    r["tests"][0]["name"] = "test_rule[repeated_candidate_words_are_clipped_" + "and_on" * 20 + "]"
    r["tests"][0]["message"] = "x" * 400
    _, page = feedback.render(SubmissionResult.from_json(r), Student(0, "7", "Ann" + "N" * 80), titled("METEOR score"))
    (tmp_path / "f.html").write_text(page)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        try:
            tab = browser.new_page(viewport={"width": 320, "height": 800})
            tab.goto((tmp_path / "f.html").as_uri())
            assert tab.evaluate("document.documentElement.scrollWidth") == 320
        finally:
            browser.close()
