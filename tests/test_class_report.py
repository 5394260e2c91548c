"""The class report: built from a results.json dict, checked as HTML and in headless Chromium."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from grader import class_report, diagnose
from tests.conftest import KIT_ROOT, load_module

ARTIFACTS = KIT_ROOT / "tests" / ".artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
TESTS = [("examples", f"test_statement_example[{n}]", 1.0) for n in ("worked_example", "identical_sentences", "repeated_word_is_clipped")] + [
    ("hidden", f"test_rule[{n}]", 2.0) for n in ("uppercase_reference", "repeated_candidate_words_are_clipped", "rounds_to_three_decimals", "empty_candidate")
] + [("properties", "test_case_does_not_change_the_score", 2.0), ("private", "test_matches_the_reference", 3.0)]

# name -> (catalogue file, which tests fail, status of the failures)
CLASS = {
    "ada.py": ("correct/counter_based.py", set(), "fail"),
    "bo.py": ("correct/list_remove.py", set(), "fail"),
    "cy.py": ("wrong/no_clipping.py", {"test_statement_example[repeated_word_is_clipped]", "test_rule[repeated_candidate_words_are_clipped]", "test_matches_the_reference"}, "fail"),
    "di.py": ("wrong/no_clipping.py", {"test_rule[repeated_candidate_words_are_clipped]", "test_matches_the_reference"}, "fail"),
    "ed.py": ("wrong/no_lowercase.py", {"test_rule[uppercase_reference]", "test_case_does_not_change_the_score", "test_matches_the_reference"}, "fail"),
    "fay.py": ("wrong/truncation.py", {"test_rule[rounds_to_three_decimals]", "test_matches_the_reference"}, "fail"),
    "gus.py": ("wrong/crash_on_empty.py", {"test_rule[empty_candidate]"}, "error"),
    "hal.py": ("wrong/no_clipping.py", {"test_statement_example[repeated_word_is_clipped]", "test_matches_the_reference"}, "fail"),
    "ivy.py": ("wrong/fmean_precedence.py", {name for _, name, _ in TESTS} - {"test_rule[empty_candidate]"}, "fail"),
    "jo.py": ("wrong/two_decimals.py", {"test_statement_example[worked_example]", "test_rule[rounds_to_three_decimals]", "test_matches_the_reference"}, "fail"),
    "kim.py": ("wrong/two_decimals.py", {"test_rule[rounds_to_three_decimals]"}, "timeout"),
}


def synthetic_results() -> dict:
    """A class of eleven, with real code and real diagnoses from the catalogue."""
    submissions = []
    for name, (file, failing, failure) in CLASS.items():
        path = KIT_ROOT / "tests" / "catalogue" / file
        tests = [
            {"name": test, "tier": tier, "status": failure if test in failing else "pass",
             "message": "" if test not in failing else ("the call took longer than 2 s" if failure == "timeout" else "expected 0.455, got 0.769"),
             "output": "", "score": 0.0 if test in failing else points, "max_score": points}
            for tier, test, points in TESTS
        ]
        found = diagnose.diagnose_submission(load_module(path, f"report_{name[:-3]}")) if failing else None
        submissions.append({
            "submission": name, "status": "graded", "message": "",
            "score": sum(t["score"] for t in tests), "max_score": sum(t["max_score"] for t in tests),
            "diagnosis": found.as_json() if found else None, "tests": tests, "source": path.read_text(),
        })
    submissions.append({
        "submission": "lu.py", "status": "error", "message": "could not load the submission: syntax error on line 3: invalid syntax",
        "score": 0.0, "max_score": 16.0, "diagnosis": None, "tests": [], "source": "def meteor_score(reference, candidate\n    return 0\n",
    })
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
    return class_report.render(results)


def tags(page: str, name: str) -> list[dict]:
    parser = Elements()
    parser.feed(page)
    return [attrs for tag, attrs in parser.tags if tag == name]


def test_the_histogram_is_an_inline_svg_chart_of_every_submission(page, results):
    bins = [a for a in tags(page, "rect") if a.get("class") == "bin"]
    assert len(bins) == class_report.BINS
    counts = [int(b["data-count"]) for b in bins]
    assert sum(counts) == len(results["submissions"])
    assert counts[-1] == 2  # the two correct ones: 100%
    assert counts[0] == 1  # the one that did not load: 0%
    assert all(float(b["height"]) > 0 for b, c in zip(bins, counts) if c)


def test_pass_rates_count_the_submissions_that_ran_each_test(page):
    rows = re.findall(r"<tr><td>(test_[^<]+)</td><td class=\"tier\">(\w+)</td><td>.*?</td><td class=\"num\">(\d+)/(\d+)</td></tr>", page)
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


def test_each_submission_has_its_highlighted_code_results_and_diagnosis(page, results):
    for i, sub in enumerate(sorted(results["submissions"], key=lambda s: s["submission"])):
        section = page.split(f'id="sub-{i + 1}"')[1].split("</section>")[0]
        assert sub["submission"] in section
        assert '<div class="code">' in section and '<span class="k">def</span>' in section
        for test in sub["tests"]:
            assert test["name"] in section
        if sub["diagnosis"]:
            assert 'class="diag' in section
    cy = page.split('<h3>cy.py</h3>')[1].split("</section>")[0]
    assert "Your scores match what happens when repeated words are not clipped" in cy


def test_student_text_is_escaped_and_nothing_can_run_or_load(results):
    evil = {
        "submission": "<script>alert(1)</script>.py", "status": "graded", "message": "", "score": 0, "max_score": 1,
        "diagnosis": {"mistake": None, "message": "<img src=x onerror=alert(2)>", "text": "<img src=x onerror=alert(2)>"},
        "tests": [{"name": "t<b>", "tier": "hidden", "status": "fail", "message": "</pre><script>alert(3)</script>", "output": "<iframe>", "score": 0, "max_score": 1}],
        "source": "x = '</pre><script>alert(4)</script>'\n",
    }
    page = class_report.render({"submissions": results["submissions"] + [evil]})
    assert "<script" not in page and "<img" not in page and "<iframe" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;.py" in page
    csp = next(a for a in tags(page, "meta") if a.get("http-equiv") == "Content-Security-Policy")
    assert csp["content"].startswith("default-src 'none'")
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)


def test_a_submission_without_source_or_tests_still_renders():
    page = class_report.render({"submissions": [{"submission": "x.py", "status": "timeout", "message": "over budget", "score": 0, "max_score": 10, "tests": []}]})
    assert "The code of this submission was not recorded in results.json." in page
    assert "No test ran." in page
    assert "timeout: over budget" in page


def test_an_empty_class_renders():
    page = class_report.render({"submissions": []})
    assert "0 submissions" in page and "No submission got a diagnosis." in page


def test_the_report_in_headless_chromium(tmp_path, page):
    """Rendered offline: no request but the file itself, no console error, and a screenshot to look at."""
    from playwright.sync_api import sync_playwright

    report = tmp_path / "report.html"
    report.write_text(page, encoding="utf-8")
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / ".gitignore").write_text("*\n")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            view = browser.new_page(viewport={"width": 1280, "height": 900})
            requests, problems = [], []
            view.on("request", lambda r: requests.append(r.url))
            view.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
            view.on("pageerror", lambda e: problems.append(str(e)))
            view.goto(report.as_uri())
            view.wait_for_load_state("load")
            assert requests == [report.as_uri()]
            assert problems == []
            bars = view.locator("svg.histogram rect.bin")
            assert bars.count() == class_report.BINS
            tallest = max(bars.nth(i).bounding_box()["height"] for i in range(bars.count()))
            assert tallest > 60
            code = view.locator("#sub-1 div.code").bounding_box()
            tests = view.locator("#sub-1 ul.tests").bounding_box()
            assert code["x"] + code["width"] <= tests["x"]  # the code sits next to the results
            view.screenshot(path=str(ARTIFACTS / "class_report.png"), full_page=False)
            view.locator("#sub-3").scroll_into_view_if_needed()
            view.locator("#sub-3").screenshot(path=str(ARTIFACTS / "class_report_submission.png"))
        finally:
            browser.close()
    assert (ARTIFACTS / "class_report.png").stat().st_size > 10_000


def test_a_diagnosis_without_its_text_field_shows_the_example_too():
    diagnosis = {"mistake": "no_clipping", "message": "Your scores match what happens when repeated words are not clipped.",
                 "example": "meteor_score('sun moon', 'sun sun moon') returned 1.402, but the rules give 0.476",
                 "section": "rule 2, Matching", "rule": "each reference word can be matched only once", "explains_all": True}
    page = class_report.render({"submissions": [{"submission": "a.py", "status": "graded", "score": 1, "max_score": 2,
                                                  "diagnosis": diagnosis, "tests": []}]})
    assert "not clipped. For example, meteor_score(&#x27;sun moon&#x27;" in page


def test_submissions_that_never_answer_are_counted_apart_from_unknown_mistakes():
    def sub(name, kind):
        return {"submission": name, "status": "graded", "score": 0, "max_score": 1, "tests": [],
                "diagnosis": {"mistake": None, "kind": kind, "message": "...", "example": None}}

    page = class_report.render({"submissions": [sub("a.py", "no_answer"), sub("b.py", "no_answer"), sub("c.py", "unknown")]})
    section = page.split('id="diagnoses"')[1].split("</section>")[0]
    counts = re.findall(r'<td class="num"><b>(\d+)</b></td><td><span class="mistake">([^<]+)</span>', section)
    assert counts == [("2", "(no answer)"), ("1", "(no known mistake)")]
    assert "Every call raised an error or ran out of time." in section
