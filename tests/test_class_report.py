"""The class report: built from a results.json dict, checked as HTML and in headless Chromium."""

from __future__ import annotations

import base64
import hashlib
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from grader.core import exercise
from grader.core.results import ClassRun, SubmissionResult
from grader.judging import diagnose
from grader.reports import class_report
from grader.reports.files import write_report
from grader.reports.progress import summary
from grader.reports.tally import UNSCORED
from tests.big_class import big_class
from tests.conftest import KIT_ROOT, load_module

ARTIFACTS = KIT_ROOT / "tests" / ".artifacts"
EXERCISE = exercise.load(KIT_ROOT)
TITLE = EXERCISE.title
CHROMIUM = "/usr/bin/chromium"
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
TESTS = (
    [
        ("examples", f"test_statement_example[{n}]", 1.0)
        for n in ("worked_example", "identical_sentences", "repeated_word_is_clipped")
    ]
    + [
        ("hidden", f"test_rule[{n}]", 2.0)
        for n in ("uppercase_reference", "repeated_candidate_words_are_clipped", "rounds_to_three_decimals", "empty_candidate")
    ]
    + [("properties", "test_case_does_not_change_the_score", 2.0), ("private", "test_matches_the_reference", 3.0)]
)

# name -> (catalogue file, which tests fail, status of the failures)
CLASS = {
    "ada.py": ("correct/counter_based.py", set(), "fail"),
    "bo.py": ("correct/list_remove.py", set(), "fail"),
    "cy.py": (
        "wrong/no_clipping.py",
        {
            "test_statement_example[repeated_word_is_clipped]",
            "test_rule[repeated_candidate_words_are_clipped]",
            "test_matches_the_reference",
        },
        "fail",
    ),
    "di.py": ("wrong/no_clipping.py", {"test_rule[repeated_candidate_words_are_clipped]", "test_matches_the_reference"}, "fail"),
    "ed.py": (
        "wrong/no_lowercase.py",
        {"test_rule[uppercase_reference]", "test_case_does_not_change_the_score", "test_matches_the_reference"},
        "fail",
    ),
    "fay.py": ("wrong/truncation.py", {"test_rule[rounds_to_three_decimals]", "test_matches_the_reference"}, "fail"),
    "gus.py": ("wrong/crash_on_empty.py", {"test_rule[empty_candidate]"}, "error"),
    "hal.py": (
        "wrong/no_clipping.py",
        {"test_statement_example[repeated_word_is_clipped]", "test_matches_the_reference"},
        "fail",
    ),
    "ivy.py": ("wrong/fmean_precedence.py", {name for _, name, _ in TESTS} - {"test_rule[empty_candidate]"}, "fail"),
    "jo.py": (
        "wrong/two_decimals.py",
        {"test_statement_example[worked_example]", "test_rule[rounds_to_three_decimals]", "test_matches_the_reference"},
        "fail",
    ),
    "kim.py": ("wrong/two_decimals.py", {"test_rule[rounds_to_three_decimals]"}, "timeout"),
}


def synthetic_results() -> dict:
    """A class of eleven, with real code and real diagnoses from the catalogue."""
    submissions = []
    for name, (file, failing, failure) in CLASS.items():
        path = KIT_ROOT / "tests" / "catalogue" / file
        tests = [
            {
                "name": test,
                "tier": tier,
                "status": failure if test in failing else "pass",
                "message": ""
                if test not in failing
                else ("the call took longer than 2 s" if failure == "timeout" else "expected 0.455, got 0.769"),
                "output": "",
                "score": 0.0 if test in failing else points,
                "max_score": points,
            }
            for tier, test, points in TESTS
        ]
        found = diagnose.diagnose_submission(EXERCISE, load_module(path, f"report_{name[:-3]}")) if failing else None
        submissions.append(
            {
                "submission": name,
                "status": "graded",
                "message": "",
                "score": sum(t["score"] for t in tests),
                "max_score": sum(t["max_score"] for t in tests),
                "diagnosis": found.as_json() if found else None,
                "tests": tests,
                "source": path.read_text(),
            }
        )
    submissions.append(
        {
            "submission": "lu.py",
            "status": "error",
            "message": "could not load the submission: syntax error on line 3: invalid syntax",
            "score": 0.0,
            "max_score": 16.0,
            "diagnosis": None,
            "tests": [],
            "source": "def meteor_score(reference, candidate\n    return 0\n",
        }
    )
    return {"submissions": submissions}


class Elements(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


@pytest.fixture(scope="module")
def results() -> dict:
    return synthetic_results()


@pytest.fixture(scope="module")
def page(results) -> str:
    return class_report.render(ClassRun.from_json(results), TITLE)


def tags(page: str, name: str) -> list[dict]:
    parser = Elements()
    parser.feed(page)
    return [attrs for tag, attrs in parser.tags if tag == name]


@pytest.fixture(scope="module")
def pages(results) -> dict[str, str]:
    return class_report.pages(ClassRun.from_json(results), TITLE)


def test_the_histogram_keeps_files_that_never_loaded_apart_from_low_scores(page, results):
    bins = [a for a in tags(page, "rect") if a.get("class") == "bin"]
    assert len(bins) == class_report.BINS
    counts = [int(b["data-count"]) for b in bins]
    never = [a for a in tags(page, "rect") if a.get("class") == "unscored never_loaded"]
    assert sum(counts) + int(never[0]["data-count"]) == len(results["submissions"])
    assert counts[-1] == 2  # the two correct ones: 100%
    assert counts[0] == 0 and never[0]["data-count"] == "1"  # lu.py did not load: not a 0 % score
    assert all(float(b["height"]) > 0 for b, c in zip(bins, counts) if c)
    legend = page.split('class="legend"')[1].split("</ul>")[0]
    assert "score below 50 %" in legend and "score 80 % and more" in legend and "never loaded: no score" in legend


def test_pass_rates_count_the_graded_submissions_that_ran_each_test(page):
    rows = re.findall(
        r"<tr><td>(test_[^<]+)</td><td class=\"tier\">(\w+)</td><td>.*?</td><td class=\"num\">(\d+)/(\d+)</td></tr>", page
    )
    rates = {name: (int(p), int(t)) for name, _tier, p, t in rows}
    assert rates["test_rule[empty_candidate]"] == (10, 11)
    assert rates["test_matches_the_reference"] == (4, 11)
    assert rates["test_statement_example[identical_sentences]"] == (10, 11)
    assert len(rates) == len(TESTS)


def test_the_most_common_diagnosis_comes_first_with_its_count(page):
    section = page.split('id="diagnoses"')[1].split("</section>")[0]
    counts = re.findall(r'<td class="num"><b>(\d+)</b></td><td><span class="mistake">([^<]+)</span>', section)
    assert counts[0] == ("3", "no_clipping")
    assert ("2", "two_decimals") in counts
    assert ("1", "(no known mistake)") in counts
    assert "Your scores match what happens when repeated words are not clipped" in section


def test_errors_and_timeouts_are_listed(page):
    section = page.split('id="errors"')[1].split("</section>")[0]
    assert "lu.py" in section and "syntax error on line 3" in section
    assert "gus.py" in section and "1 test raised an error, first test_rule[empty_candidate]" in section
    assert "kim.py" in section and "1 test timed out" in section
    assert "ada.py" not in section


def test_each_submission_has_a_page_with_its_highlighted_code_results_and_diagnosis(page, pages, results):
    assert len(pages) == len(results["submissions"])
    for sub in results["submissions"]:
        name = sub["submission"] + ".html"
        assert f'href="report/{name}"' in page  # the overview links to it
        section = pages[name]
        assert f"<h1>{sub['submission']}</h1>" in section and 'href="../report.html"' in section
        assert '<div class="code">' in section and '<span class="k">def</span>' in section
        for test in sub["tests"]:
            assert test["name"] in section
        if sub["diagnosis"]:
            assert 'class="diag' in section
    assert "Your scores match what happens when repeated words are not clipped" in pages["cy.py.html"]
    assert "<script" not in "".join(pages.values())


def test_student_text_is_escaped_and_nothing_can_run_or_load(results):
    evil = {
        "submission": "<script>alert(1)</script>.py",
        "status": "graded",
        "message": "",
        "score": 0,
        "max_score": 1,
        "diagnosis": {"mistake": None, "message": "<img src=x onerror=alert(2)>", "text": "<img src=x onerror=alert(2)>"},
        "tests": [
            {
                "name": "t<b>",
                "tier": "hidden",
                "status": "fail",
                "message": "</pre><script>alert(3)</script>",
                "output": "<iframe>",
                "score": 0,
                "max_score": 1,
            }
        ],
        "source": "x = '</pre><script>alert(4)</script>'\n",
    }
    document = {"submissions": results["submissions"] + [evil]}
    page = class_report.render(ClassRun.from_json(document), TITLE)
    student = class_report.pages(ClassRun.from_json(document), TITLE)["_script_alert_1___script_.py.html"]
    # The overview's one script is its own sorting script, allowed by its hash alone.
    assert page.count("<script") == 1 and f"<script>{class_report.SORT_SCRIPT}</script>" in page
    digest = base64.b64encode(hashlib.sha256(class_report.SORT_SCRIPT.encode()).digest()).decode()
    for html_text, script in ((page, f"script-src 'sha256-{digest}'"), (student, None)):
        assert "<img" not in html_text and "<iframe" not in html_text
        assert "&lt;script&gt;alert(1)&lt;/script&gt;.py" in html_text
        csp = next(a for a in tags(html_text, "meta") if a.get("http-equiv") == "Content-Security-Policy")
        assert csp["content"].startswith("default-src 'none'")
        assert (script in csp["content"]) if script else "script-src" not in csp["content"]
        assert not re.search(r"""(src|href)=["']?(https?:)?//""", html_text)
    assert "<script" not in student and "&lt;/pre&gt;&lt;script&gt;alert(3)" in student


def test_a_submission_without_source_or_tests_still_renders():
    document = {
        "submissions": [
            {"submission": "x.py", "status": "error", "message": "over budget", "score": 0, "max_score": 10, "tests": []}
        ]
    }
    assert "error: over budget" in class_report.render(ClassRun.from_json(document), TITLE)
    page = class_report.pages(ClassRun.from_json(document), TITLE)["x.py.html"]
    assert "The code of this submission was not recorded in results.json." in page
    assert "No test ran." in page and "over budget" in page


def test_an_empty_class_renders():
    page = class_report.render(ClassRun.from_json({"submissions": []}), TITLE)
    assert "0 submissions" in page and "No submission got a diagnosis." in page


def _write(folder, document) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    write_report(folder, ClassRun.from_json(document), TITLE)
    return folder / "report.html"


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / ".gitignore").write_text("*\n")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def _open(browser, url: str, width: int):
    view = browser.new_page(viewport={"width": width, "height": 900})
    view.requests, view.problems = [], []
    view.on("request", lambda r: view.requests.append(r.url))
    view.on("console", lambda m: view.problems.append(m.text) if m.type == "error" else None)
    view.on("pageerror", lambda e: view.problems.append(str(e)))
    view.goto(url)
    view.wait_for_load_state("load")
    return view


def test_the_report_in_headless_chromium(tmp_path, results, browser):
    """Rendered offline: no request but the file itself, no console error, and a screenshot to look at."""
    report = _write(tmp_path, results)
    view = _open(browser, report.as_uri(), 1280)
    assert view.requests == [report.as_uri()]
    assert view.problems == []
    bars = view.locator("svg.histogram rect.bin")
    assert bars.count() == class_report.BINS
    tallest = max(bars.nth(i).bounding_box()["height"] for i in range(bars.count()))
    assert tallest > 60
    view.screenshot(path=str(ARTIFACTS / "class_report.png"), full_page=False)
    view.click("#class a >> text=cy.py")  # the name opens the student's page
    view.wait_for_load_state("load")
    assert view.url.endswith("/report/cy.py.html") and view.problems == []
    code = view.locator("div.code").bounding_box()
    tests = view.locator("ul.tests").bounding_box()
    assert code["x"] + code["width"] <= tests["x"]  # the code sits next to the results
    view.screenshot(path=str(ARTIFACTS / "class_report_submission.png"))
    view.close()
    assert (ARTIFACTS / "class_report.png").stat().st_size > 10_000


def test_a_regrade_replaces_the_student_pages(tmp_path, results):
    _write(tmp_path, results)
    fewer = {"submissions": [s for s in results["submissions"] if s["submission"] != "ada.py"]}
    _write(tmp_path, fewer)
    assert sorted(p.name for p in (tmp_path / "report").iterdir()) == sorted(
        s["submission"] + ".html" for s in fewer["submissions"]
    )
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_page_names_are_unique_even_without_case(tmp_path):
    subs = [SubmissionResult.from_json({"submission": n}) for n in ("Ann.py", "ann.py", "a/n?n.py", "a_n_n.py", "..", "")]
    names = class_report.page_names(subs)
    assert len({n.lower() for n in names}) == 6 and all(
        n.endswith(".html") and "/" not in n and not n.startswith(".") for n in names
    )


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> tuple[dict, Path]:
    document = big_class(1000)
    return document, _write(tmp_path_factory.mktemp("big"), document)


def test_a_class_of_1000_opens_in_under_2_s_and_never_overflows(big, browser):
    document, report = big
    assert report.stat().st_size < 1_000_000  # 8.3 MB for 600 before: the code lives in the students' pages
    student = sorted((report.parent / "report").iterdir())[0]
    for width in (390, 768, 1440):
        view = _open(browser, report.as_uri(), width)
        load = view.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd") / 1000
        assert load < 2.0, f"{load:.2f} s at {width} px"
        assert view.problems == []
        assert view.locator("#class .rows > [role=row]").count() == 1000
        overflow = "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        assert view.evaluate(overflow) == 0, width
        view.screenshot(path=str(ARTIFACTS / f"class_report_1000_{width}.png"))
        view.evaluate("document.getElementById('submissions').scrollIntoView()")
        assert view.evaluate(overflow) == 0, width  # rows laid out only now: still no overflow
        view.screenshot(path=str(ARTIFACTS / f"class_report_1000_{width}_table.png"))
        view.close()
        view = _open(browser, student.as_uri(), width)
        assert view.evaluate(overflow) == 0, (student.name, width)
        view.close()


def test_the_class_sorts_by_name_score_and_diagnosis_from_the_keyboard(big, browser):
    document, report = big
    view = _open(browser, report.as_uri(), 1024)

    def column(key: str) -> list:
        return view.evaluate(f"Array.from(document.querySelectorAll('#class .rows > [role=row]'), r => r.dataset.{key})")

    names = column("name")
    assert names == sorted(names)  # by name at first
    view.focus("#class button[data-key=score]")
    view.keyboard.press("Enter")
    scores = [float(x) for x in column("score")]
    assert scores == sorted(scores) and scores[0] == -1  # unscored first, then the lowest
    assert view.get_attribute("#class [role=columnheader]:nth-child(2)", "aria-sort") == "ascending"
    view.keyboard.press(" ")  # again: the other way
    scores = [float(x) for x in column("score")]
    assert scores == sorted(scores, reverse=True)
    assert view.get_attribute("#class [role=columnheader]:nth-child(2)", "aria-sort") == "descending"
    assert view.get_attribute("#class [role=columnheader]:nth-child(1)", "aria-sort") is None
    view.keyboard.press("Shift+Tab")
    view.keyboard.press("Enter")
    assert column("name") == sorted(names)
    view.focus("#class button[data-key=diagnosis]")
    view.keyboard.press("Enter")
    diagnoses = column("diag")
    named = [d for d in diagnoses if d]
    assert named == sorted(named) and diagnoses[: len(named)] == named  # the undiagnosed last
    assert view.locator("#sorted").text_content() == "Sorted by diagnosis, ascending."
    assert view.problems == []
    view.close()


def test_every_count_agrees_with_the_terminal_summary(big):
    document, report = big
    page = report.read_text()
    subs = document["submissions"]
    text = summary(ClassRun.from_json({**document, "duration": 10.0}), report.parent)

    def stat(key: str) -> int:
        return int(re.search(rf'id="stat-{key}"><b>(\d+)</b>', page).group(1))

    assert stat("total") == len(subs) == int(re.search(r"graded (\d+) submission", text).group(1))
    assert stat("graded") == int(re.search(r"distribution of the (\d+) graded", text).group(1))
    assert stat("all-passed") == int(re.search(r"(\d+) passed every test", text).group(1))
    terminal_rows = dict(re.findall(r"^  (\S.*?) +(\d+)(?: +#+)?$", text, re.M))
    bins = [int(a["data-count"]) for a in tags(page, "rect") if a.get("class") == "bin"]
    assert bins == [int(terminal_rows["90-100%" if i == 9 else f"{i * 10}-{i * 10 + 9}%"]) for i in range(10)]
    for kind, label in UNSCORED.items():
        chart = [a for a in tags(page, "rect") if a.get("class") == f"unscored {kind}"]
        if label in terminal_rows:
            assert int(chart[0]["data-count"]) == int(terminal_rows[label])
        else:
            assert not chart
    assert stat("never-loaded") == int(terminal_rows["never loaded"]) > 0
    assert stat("not-graded") == int(terminal_rows["not graded (interrupted)"]) > 0
    could_not = int(re.search(r"(\d+) could not be graded", text).group(1))
    assert could_not == stat("never-loaded") + (stat("grader-error") if 'id="stat-grader-error"' in page else 0)
    diagnoses = {
        name: int(count)
        for count, name in re.findall(r'<td class="num"><b>(\d+)</b></td><td><span class="mistake">([^<]+)</span>', page)
    }
    top = re.findall(r"^ +(\d+)  (\S+)$", text.split("diagnoses, most common first:")[1], re.M)
    assert top and all(diagnoses[name] == int(count) for count, name in top)
    rows = re.findall(r'<div role="row" data-name="[^"]*" data-score="([^"]+)"', page)
    assert len(rows) == len(subs) and sum(r == "-1" for r in rows) == len(subs) - stat("graded")


@pytest.mark.parametrize(
    "mode, loud, words",
    [
        ("bubblewrap", False, "Every submission ran in a cell of its own"),
        ("separate-uid", True, "chrooted into a copy of the standard library"),
        ("none", True, "NOT ISOLATED"),
        ("rlimits", True, "rlimits, not bubblewrap"),
        (None, True, "not recorded"),
    ],
)
def test_the_isolation_mode_is_shown_and_loud_when_not_bubblewrap(mode, loud, words):
    page = class_report.render(ClassRun.from_json({"isolation": mode, "submissions": []} if mode else {"submissions": []}), TITLE)
    banner = next(a for a in tags(page, "div") if a.get("id") == "isolation")
    assert ("loud" in banner["class"]) == loud and (banner.get("role") == "alert") == loud
    assert banner["data-isolation"] == (mode or "")
    assert words in page.split('id="isolation"')[1].split("</div>")[0]


def test_the_isolation_banner_says_what_the_run_itself_recorded_of_each_submission_s_cell():
    note = "isolation: separate-uid in a container that allows no namespace (as on Gradescope). <b>sic</b>"
    page = class_report.render(
        ClassRun.from_json({"isolation": "separate-uid", "isolation_note": note, "submissions": []}), TITLE
    )
    banner = page.split('id="isolation"')[1].split("</div>")[0]
    assert "a container that allows no namespace" in banner and "&lt;b&gt;sic&lt;/b&gt;" in banner and "<b>" not in banner
