"""The student's page end to end, in real headless Chromium (Debian's) driven by Playwright.

One page is loaded for the whole module, as a student would keep it open: each test leaves it
usable for the next. Screenshots go to tests/.artifacts/web/.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, sync_playwright

from grader import exercise, runner, serve
from grader.diagnose import diagnose_submission
from grader.submission import LocalSubmission
from tests.web_site import ROOT, built_site

CHROMIUM = "/usr/bin/chromium"
# Without the networking flags Chromium reaches for Google's services on its own.
FLAGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-default-apps", "--disable-extensions",
]
SHOTS = ROOT / "tests" / ".artifacts" / "web"
REFERENCE = (ROOT / "solutions" / "reference.py").read_text(encoding="utf-8")
# Forgets to lowercase: wrong exactly where case matters.
NO_LOWERCASE = REFERENCE.replace("reference.lower().split()", "reference.split()").replace(
    "candidate.lower().split()", "candidate.split()"
)
# Forgets to round: fails the rounding invariant, which shows a counterexample.
NO_ROUNDING = REFERENCE.replace("score=round(score, DECIMALS),", "score=score,")
# Matches a repeated word as often as it appears: the diagnosis names clipping (rule 2).
NO_CLIPPING = (ROOT / "tests" / "catalogue" / "wrong" / "no_clipping.py").read_text(encoding="utf-8")
PYTHON_LOOP = "def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n    while True:\n        pass\n"
C_LOOP = (
    "import itertools\n\n"
    "def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n"
    "    return sum(itertools.count())  # a loop inside C code: an interrupt cannot land\n"
)


@pytest.fixture(scope="module")
def site_url():
    server, url = serve.serve_in_thread(built_site())
    yield url
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    # A missing browser is a failure, not a skip: CI installs Debian's chromium (make system).
    assert shutil.which(CHROMIUM), f"{CHROMIUM} is missing: apt-get install chromium (make system does it)"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def requests_seen():
    return []


@pytest.fixture(scope="module")
def page(browser, site_url, requests_seen) -> Page:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.on("request", lambda request: requests_seen.append(request.url))
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(site_url)
    page.evaluate("window.kit.ready")
    page.errors = errors  # type: ignore[attr-defined]
    SHOTS.mkdir(parents=True, exist_ok=True)
    yield page
    context.close()


def run_tests(page: Page, code: str) -> dict:
    page.evaluate("(src) => window.kit.setCode(src)", code)
    return page.evaluate("window.kit.runTests()")


def cpython_verdicts(code: str) -> dict[str, str]:
    report = runner.run(lambda: LocalSubmission(code), "submission.py", tiers=exercise.load().browser_tiers)
    return {t.name: t.status for t in report.tests}


def cli_diagnosis(code: str, report: dict) -> dict | None:
    """What `meteor-kit check --json` says under "diagnosis", for the page's test results."""
    found = diagnose_submission(LocalSubmission(code), tests=report["tests"])
    return found.as_json() if found else None


def shown_statuses(page: Page) -> dict[str, str]:
    items = page.locator("[data-testid=test-result]")
    return {
        items.nth(i).get_attribute("data-name"): items.nth(i).get_attribute("data-status") for i in range(items.count())
    }


def test_the_page_loads_the_statement_and_the_starter(page):
    assert page.locator("#statement h2", has_text="Problem statement").count() == 1
    assert page.locator("#statement .katex").count() >= 10
    assert page.evaluate("crossOriginIsolated") is True
    assert "raise NotImplementedError" in page.evaluate("window.kit.getCode()")
    assert page.get_attribute("[data-testid=status]", "data-state") == "ready"


def test_the_reference_passes_every_browser_test(page):
    report = run_tests(page, REFERENCE)
    tiers = set(exercise.load().browser_tiers)
    assert report["status"] == "graded"
    assert {t["tier"] for t in report["tests"]} == tiers
    assert report["passed"] == len(report["tests"]) > 40
    assert report["score"] == report["max_score"]
    assert set(shown_statuses(page).values()) == {"pass"}
    total = len(report["tests"])
    assert page.text_content("[data-testid=summary]").startswith(f"{total}/{total} passed")
    assert report["diagnosis"] is None
    assert page.locator("[data-testid=diagnosis]").is_hidden()
    page.screenshot(path=str(SHOTS / "all-pass.png"), full_page=True)


def test_the_report_is_the_cli_report(page):
    report = page.evaluate("window.kit.lastReport()")
    assert set(report) >= {"submission", "status", "message", "tests", "duration", "score", "max_score", "passed", "diagnosis"}
    assert set(report["tests"][0]) == {"name", "tier", "status", "message", "output", "score", "max_score"}


def test_a_wrong_solution_fails_the_tests_cpython_fails(page):
    report = run_tests(page, NO_LOWERCASE)
    verdicts = {t["name"]: t["status"] for t in report["tests"]}
    assert verdicts == cpython_verdicts(NO_LOWERCASE)
    failed = {name for name, status in verdicts.items() if status != "pass"}
    assert "test_rule[uppercase_reference]" in failed
    assert "test_statement_example[no_common_word]" not in failed
    assert shown_statuses(page) == verdicts
    assert page.text_content("[data-testid=summary]").startswith(f"{report['passed']}/{len(verdicts)} passed")
    # Hidden tests show a message but never their input; properties show the counterexample.
    hidden = page.locator('[data-testid=test-result][data-name="test_rule[uppercase_reference]"]')
    assert "rule: Tokens: lowercase" in hidden.text_content()
    assert "THE Cat SAT" not in hidden.text_content()
    page.screenshot(path=str(SHOTS / "wrong-solution.png"), full_page=True)


def test_a_wrong_solution_gets_the_clis_diagnosis_and_a_right_one_none(page):
    report = run_tests(page, NO_CLIPPING)
    assert report["passed"] < len(report["tests"])
    found = report["diagnosis"]
    assert found["mistake"] == "no_clipping" and found["kind"] == "model"
    assert found == cli_diagnosis(NO_CLIPPING, report)
    box = page.locator("[data-testid=diagnosis]")
    assert box.is_visible()
    text = box.text_content()
    assert text == found["text"]
    assert "repeated words are not clipped" in text and "matched only once" in text
    assert "meteor_score('sun moon', 'sun sun moon')" in text  # one of our probes, never a hidden test's input
    page.screenshot(path=str(SHOTS / "diagnosis.png"), full_page=True)
    # Everything passes: no diagnosis, and the last one is hidden again.
    again = run_tests(page, REFERENCE)
    assert again["passed"] == len(again["tests"]) and again["diagnosis"] is None
    assert box.is_hidden() and box.text_content() == ""


def test_a_failing_property_shows_its_counterexample(page):
    report = run_tests(page, NO_ROUNDING)
    verdicts = {t["name"]: t["status"] for t in report["tests"]}
    assert verdicts == cpython_verdicts(NO_ROUNDING)
    name = "test_score_is_a_rounded_number_between_0_and_1"
    assert verdicts[name] == "fail"
    prop = page.locator(f'[data-testid=test-result][data-name="{name}"]')
    assert "Falsifying example" in prop.text_content()
    assert "meteor_score(" in prop.text_content()


def test_examples_show_input_expected_and_returned_and_prints_are_shown(page):
    code = REFERENCE.replace("    return explain(", "    print('computing', reference)\n    return 0.5 if reference == 'the cat' else explain(")
    report = run_tests(page, code)
    by_name = {t["name"]: t for t in report["tests"]}
    clipped = by_name["test_statement_example[repeated_word_is_clipped]"]
    assert clipped["status"] == "fail" and "computing the cat" in clipped["output"]
    item = page.locator('[data-testid=test-result][data-name="test_statement_example[repeated_word_is_clipped]"]')
    text = item.text_content()
    assert "meteor_score(\"the cat\", \"the the the cat\")" in text
    assert "0.455" in text and "0.5" in text and "computing the cat" in text


def test_a_traceback_names_the_editor_lines(page):
    code = "def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n\n    return 1 / 0\n"
    report = run_tests(page, code)
    first = report["tests"][0]
    assert first["status"] == "error"
    assert 'File "submission.py", line 3, in meteor_score' in first["message"]
    assert "ZeroDivisionError" in first["message"]
    page.locator(".line-link").first.click()
    # The link moves the editor's cursor to that line.
    assert page.text_content(".cm-activeLine") == "    return 1 / 0"


def test_an_infinite_loop_times_out_and_the_next_run_works(page):
    report = run_tests(page, PYTHON_LOOP)
    statuses = [t["status"] for t in report["tests"]]
    assert statuses[0] == "timeout"
    assert set(statuses) <= {"timeout", "not_run"}
    assert page.evaluate("window.kit.restarts()") == 0, "a Python loop is interrupted, not restarted"
    page.screenshot(path=str(SHOTS / "timeout.png"))
    assert run_tests(page, REFERENCE)["passed"] == len(report["tests"])


def test_a_loop_in_c_code_restarts_python_and_the_next_run_works(page):
    report = run_tests(page, C_LOOP)
    assert report["tests"][0]["status"] == "timeout"
    assert "restarted" in report["tests"][0]["message"]
    assert page.evaluate("window.kit.restarts()") == 1
    again = run_tests(page, REFERENCE)
    assert again["passed"] == len(again["tests"]) == len(report["tests"])


def test_ctrl_enter_runs_the_tests(page):
    page.evaluate("(src) => window.kit.setCode(src)", NO_LOWERCASE)
    page.locator(".cm-content").click()
    before = page.evaluate("window.kit.lastReport()")["duration"]
    page.keyboard.press("Control+Enter")
    page.wait_for_function("(d) => window.kit.lastReport() && window.kit.lastReport().duration !== d", arg=before)
    page.wait_for_selector("[data-testid=run-tests]:not([disabled])")
    assert page.locator('[data-testid=test-result][data-status="fail"]').count() > 0


def test_try_it_runs_the_students_function_and_draws_the_reference_breakdown(page):
    page.evaluate("(src) => window.kit.setCode(src)", REFERENCE.replace("    return explain(", "    print('hello from try')\n    return explain("))
    page.click("[data-testid=try-tab]")
    page.select_option("[data-testid=try-example]", label="worked example")
    svg = page.locator("[data-testid=breakdown]")
    assert svg.count() == 1
    assert svg.locator("line").count() == 4  # rain, from, the, sky
    assert svg.locator("rect.chunk").count() == 2
    assert "score = 0.625" in svg.text_content()
    page.click("[data-testid=try-run]")
    page.wait_for_selector("[data-testid=try-value]")
    assert page.text_content("[data-testid=try-value]") == "0.625"
    assert "hello from try" in page.text_content("[data-testid=try-result]")
    page.screenshot(path=str(SHOTS / "try-it.png"), full_page=True)
    # A custom input: the student's answer only, no reference value.
    page.fill("[data-testid=try-candidate]", "something else entirely")
    assert page.locator("[data-testid=breakdown]").count() == 0
    page.click("[data-testid=try-run]")
    page.wait_for_function("document.querySelector('[data-testid=try-result]').dataset.status === 'ok'")
    assert "the reference returns" not in page.text_content("[data-testid=try-result]")
    page.click("#tab-results")


def test_a_try_during_a_run_waits_for_it(page):
    page.evaluate("(src) => window.kit.setCode(src)", REFERENCE)
    passed_all, tried = page.evaluate(
        """async () => {
            const [report, tried] = await Promise.all([window.kit.runTests(), window.kit.tryIt("the cat", "the cat")]);
            return [report.passed === report.tests.length, tried];
        }"""
    )
    assert passed_all
    assert tried["status"] == "ok" and tried["value"] in ("0.938", "0.937")


def test_the_draft_survives_a_reload_and_reset_asks_first(page):
    page.evaluate("(src) => window.kit.setCode(src)", "def meteor_score(reference, candidate):\n    return 0.0\n")
    page.locator(".cm-content").click()
    page.keyboard.press("Control+End")
    page.keyboard.type("\n# typed by hand")
    page.reload()
    page.evaluate("window.kit.ready")
    code = page.evaluate("window.kit.getCode()")
    assert code.startswith("def meteor_score(reference, candidate):") and code.endswith("# typed by hand")
    page.once("dialog", lambda dialog: dialog.dismiss())
    page.click("[data-testid=reset]")
    assert page.evaluate("window.kit.getCode()") == code
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("[data-testid=reset]")
    assert page.evaluate("window.kit.getCode()") == (ROOT / "problem" / "starter.py").read_text(encoding="utf-8")


def test_the_page_made_no_request_outside_localhost_and_raised_no_error(page, requests_seen, site_url):
    origin = urlsplit(site_url).netloc
    assert requests_seen, "no request was recorded"
    outside = [url for url in requests_seen if urlsplit(url).scheme not in ("data", "blob") and urlsplit(url).netloc != origin]
    assert outside == []
    assert page.errors == []
