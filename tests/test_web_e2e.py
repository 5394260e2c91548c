"""The student's page end to end, in real headless Chromium (Debian's) driven by Playwright.

One page is loaded for the whole module, as a student would keep it open: each test leaves it
usable for the next. Screenshots go to tests/.artifacts/web/.
"""

from __future__ import annotations

import shutil
import time
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, sync_playwright

from grader.cli import serve
from grader.core import runner
from grader.core.submission import LocalSubmission
from grader.judging.diagnose import diagnose_submission
from tests.web_site import EXERCISE, ROOT, built_site

CHROMIUM = "/usr/bin/chromium"
# Without the networking flags Chromium reaches for Google's services on its own.
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
]
SHOTS = ROOT / "tests" / ".artifacts" / "web"
AXE = ROOT / "web" / "node_modules" / "axe-core" / "axe.min.js"
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
        # Waits are generous: this machine is shared, and a slow run is not a wrong one.
        browser.new_context = _patient(browser.new_context)
        yield browser
        browser.close()


def _patient(new_context):
    def make(**options):
        context = new_context(**options)
        context.set_default_timeout(120_000)
        return context

    return make


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
    # The whole run's budget (20 s) is checked by its own test; on a shared, loaded machine a
    # failing run can take longer than that, and the other tests compare full verdicts.
    page.evaluate("window.kit.setRunBudget(300)")
    page.errors = errors  # type: ignore[attr-defined]
    SHOTS.mkdir(parents=True, exist_ok=True)
    yield page
    context.close()


def run_tests(page: Page, code: str) -> dict:
    page.evaluate("(src) => window.kit.setCode(src)", code)
    return page.evaluate("window.kit.runTests()")


def cpython_verdicts(code: str) -> dict[str, str]:
    report = runner.run(EXERCISE, lambda: LocalSubmission(code, EXERCISE.function), "submission.py", tiers=EXERCISE.browser_tiers)
    return {t.name: t.status for t in report.tests}


def cli_diagnosis(code: str, report: dict) -> dict | None:
    """What `meteor-kit check --json` says under "diagnosis", for the page's test results."""
    found = diagnose_submission(EXERCISE, LocalSubmission(code, EXERCISE.function), tests=report["tests"])
    return found.as_json() if found else None


def shown_statuses(page: Page) -> dict[str, str]:
    items = page.locator("[data-testid=test-result]")
    return {items.nth(i).get_attribute("data-name"): items.nth(i).get_attribute("data-status") for i in range(items.count())}


def test_the_page_loads_the_statement_and_the_starter(page):
    assert page.locator("#statement h2", has_text="Problem statement").count() == 1
    assert page.locator("#statement .katex").count() >= 10
    assert page.evaluate("crossOriginIsolated") is True
    assert "raise NotImplementedError" in page.evaluate("window.kit.getCode()")
    assert page.get_attribute("[data-testid=status]", "data-state") == "ready"


def test_the_reference_passes_every_browser_test(page):
    report = run_tests(page, REFERENCE)
    tiers = set(EXERCISE.browser_tiers)
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
    code = REFERENCE.replace(
        "    return explain(", "    print('computing', reference)\n    return 0.5 if reference == 'the cat' else explain("
    )
    report = run_tests(page, code)
    by_name = {t["name"]: t for t in report["tests"]}
    clipped = by_name["test_statement_example[repeated_word_is_clipped]"]
    assert clipped["status"] == "fail" and "computing the cat" in clipped["output"]
    item = page.locator('[data-testid=test-result][data-name="test_statement_example[repeated_word_is_clipped]"]')
    text = item.text_content()
    assert 'meteor_score("the cat", "the the the cat")' in text
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
    assert page.evaluate("window.kit.restarts()") == 0, (
        "a Python loop is interrupted, not restarted",
        page.evaluate("window.kit.lastRestart()"),
    )
    page.screenshot(path=str(SHOTS / "timeout.png"))
    assert run_tests(page, REFERENCE)["passed"] == len(report["tests"])


def test_a_loop_in_c_code_restarts_python_and_the_next_run_works(page):
    report = run_tests(page, C_LOOP)
    assert report["tests"][0]["status"] == "timeout"
    assert "restarted" in report["tests"][0]["message"]
    assert page.evaluate("window.kit.restarts()") == 1
    # Python never read the interrupt: the byte the page set is still there.
    assert page.evaluate("window.kit.lastRestart()") == {"byte": 2, "landed": False, "resent": 0}
    again = run_tests(page, REFERENCE)
    assert again["passed"] == len(again["tests"]) == len(report["tests"])


def test_an_interrupt_python_reads_but_never_raises_is_sent_again_then_python_restarts(page):
    # The student's own SIGINT handler swallows the interrupt: Python reads it (the byte goes back
    # to 0) and no KeyboardInterrupt comes, as in the rare stall seen on a loaded machine.
    swallowed = (
        "import signal\n\ndef meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n"
        "    signal.signal(signal.SIGINT, lambda *args: None)\n    while True:\n        pass\n"
    )
    before = page.evaluate("window.kit.restarts()")
    report = run_tests(page, swallowed)
    assert report["tests"][0]["status"] == "timeout"
    assert page.evaluate("window.kit.restarts()") == before + 1
    assert page.evaluate("window.kit.lastRestart()") == {"byte": 0, "landed": False, "resent": 2}
    again = run_tests(page, REFERENCE)
    assert again["passed"] == len(again["tests"])


def test_ctrl_enter_runs_the_tests(page):
    page.evaluate("(src) => window.kit.setCode(src)", NO_LOWERCASE)
    page.locator(".cm-content").click()
    before = page.evaluate("window.kit.lastReport()")["duration"]
    page.keyboard.press("Control+Enter")
    page.wait_for_function("(d) => window.kit.lastReport() && window.kit.lastReport().duration !== d", arg=before)
    page.wait_for_selector("[data-testid=run-tests]:not([disabled])")
    assert page.locator('[data-testid=test-result][data-status="fail"]').count() > 0


def test_try_it_runs_the_students_function_and_draws_the_reference_breakdown(page):
    page.evaluate(
        "(src) => window.kit.setCode(src)",
        REFERENCE.replace("    return explain(", "    print('hello from try')\n    return explain("),
    )
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


# ---- runs that cannot go wrong ----------------------------------------------------------


def start_run(page: Page, code: str) -> None:
    """Start Run tests from the button, and wait until a test is running."""
    page.evaluate("(src) => window.kit.setCode(src)", code)
    page.click("[data-testid=run-tests]")
    page.wait_for_function("document.querySelector('[data-testid=summary]').textContent.includes('/')")


def wait_ready(page: Page) -> None:
    page.wait_for_function("window.kit.state() === 'ready'", timeout=60_000)
    assert page.get_attribute("[data-testid=status]", "data-state") == "ready"


def test_stop_ends_an_endless_loop_within_a_second_and_the_next_run_works(page):
    start_run(page, PYTHON_LOOP)
    assert page.get_attribute("[data-testid=status]", "data-state") == "busy", "not ready while a run goes on"
    started = time.perf_counter()
    page.click("[data-testid=stop]")
    page.wait_for_function("document.querySelector('[data-testid=summary]').dataset.state !== 'running'")
    assert time.perf_counter() - started < 1.0
    report = page.evaluate("window.kit.lastReport()")
    assert "you pressed Stop" in report["message"]
    assert {t["status"] for t in report["tests"]} <= {"not_run", "timeout"}
    assert page.locator("[data-testid=stop]").is_hidden()
    wait_ready(page)
    assert run_tests(page, REFERENCE)["passed"] == len(report["tests"])


def test_the_whole_run_has_a_budget_and_what_it_leaves_is_not_run(page):
    page.evaluate("window.kit.setRunBudget(2)")
    try:
        slow = "import time\n\ndef meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n    time.sleep(0.3)\n    return 0.0\n"
        started = time.perf_counter()
        report = run_tests(page, slow)
        assert time.perf_counter() - started < 2 + 1.5
    finally:
        page.evaluate("window.kit.setRunBudget(300)")
    left = [t for t in report["tests"] if t["status"] == "not_run"]
    assert left and all("budget" in t["message"] for t in left)
    assert "budget" in page.text_content("[data-testid=summary]")
    wait_ready(page)
    assert run_tests(page, REFERENCE)["passed"] == len(report["tests"])


def test_printed_output_is_capped_as_it_is_printed(page):
    chatty = "def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n    for i in range(20000):\n        print('line', i)\n    return 0.0\n"
    report = run_tests(page, chatty)
    outputs = [t["output"] for t in report["tests"] if t["output"]]
    assert outputs and all(len(out) <= 600 for out in outputs)
    assert "line 0" in outputs[0]


def test_running_out_of_memory_is_reported_and_the_next_run_works(page):
    bomb = "def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n    x = []\n    while True:\n        x.append(bytearray(10**7))\n"
    report = run_tests(page, bomb)
    first = report["tests"][0]
    # On a slow machine the time limit may come first; either way it is said, and Python recovers.
    assert first["status"] in ("error", "timeout")
    if first["status"] == "error":
        assert "ran out of memory" in first["message"]
        assert any("ran out of memory" in a for a in report["advice"])
    wait_ready(page)
    again = run_tests(page, REFERENCE)
    assert again["status"] == "graded" and again["passed"] == len(again["tests"]) == len(report["tests"])


# ---- messages for beginners ---------------------------------------------------------------


def advice_shown(page: Page) -> str:
    return page.text_content("[data-testid=advice]")


def test_input_is_explained_once_in_a_plain_sentence(page):
    code = "def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n    words = input('words? ')\n    return 0.5\n"
    report = run_tests(page, code)
    assert any("input()" in a and "Remove the input()" in a for a in report["advice"])
    assert "input()" in advice_shown(page)
    assert not any("Consider using" in t["message"] for t in report["tests"])


def test_a_missing_return_is_named_and_not_blamed_on_a_rule(page):
    code = REFERENCE.replace(
        '    return explain(reference, candidate, alpha, beta, gamma)["score"]',
        '    explain(reference, candidate, alpha, beta, gamma)["score"]',
    )
    assert code != REFERENCE
    report = run_tests(page, code)
    assert any("returned None" in a and "return" in a for a in report["advice"])
    assert report["diagnosis"] is None
    assert page.locator("[data-testid=diagnosis]").is_hidden()


def test_a_module_outside_the_standard_library_is_named(page):
    report = run_tests(
        page, "import numpy as np\n\ndef meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n    return 0.5\n"
    )
    assert any("standard library" in a and "numpy" in a for a in report["advice"])
    # The load error is said once, above the cards, not on each of them.
    assert page.locator("[data-testid=test-result]", has_text="ModuleNotFoundError").count() == 0
    assert advice_shown(page).count("numpy") >= 1


def test_a_load_error_is_shown_once_and_its_line_link_jumps_there(page):
    report = run_tests(page, "x = 1\n\ndef meteor_score(reference, candidate)\n    return 0.5\n")
    assert report["status"] == "error"
    assert page.locator("[data-testid=test-result]", has_text="syntax error").count() == 0
    assert (
        page.locator("[data-testid=summary]", has_text="syntax error").count()
        + page.locator("[data-testid=advice]", has_text="syntax error").count()
        >= 1
    )
    page.locator("#panel-results .line-link").first.click()
    assert page.text_content(".cm-activeLine") == "def meteor_score(reference, candidate)"


def test_an_endless_loop_at_the_top_level_ran_out_of_time_while_loading(page):
    report = run_tests(
        page, "while True:\n    pass\n\ndef meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n    return 0.5\n"
    )
    assert any("ran out of time while loading" in a for a in report["advice"]), (
        report["advice"],
        report.get("message"),
        report.get("status"),
        [t["message"][:120] for t in report.get("tests", [])[:3]],
        page.evaluate("window.kit.lastRestart()"),
    )
    assert "KeyboardInterrupt" not in advice_shown(page)
    wait_ready(page)


def test_an_interrupt_that_lands_waits_for_python_to_unwind_rather_than_restarting_it(page):
    # The interrupt lands in the loop; the `finally` then keeps Python busy for 4 s, longer than
    # the page's grace for an interrupt that does not land (a busy machine can stall as long).
    slow_unwinding = (
        "import time\n\ntry:\n    while True:\n        pass\nfinally:\n"
        "    end = time.monotonic() + 4\n    while time.monotonic() < end:\n        pass\n\n"
        "def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n    return 0.5\n"
    )
    before = page.evaluate("window.kit.restarts()")
    report = run_tests(page, slow_unwinding)
    assert page.evaluate("window.kit.restarts()") == before, (report["message"], page.evaluate("window.kit.lastRestart()"))
    assert any("ran out of time while loading" in a for a in report["advice"]), (report["advice"], report["message"])


def test_a_diagnosis_with_no_known_mistake_names_the_failing_rules_and_an_input(page):
    code = "def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n    return round(len(candidate) / 100, 3)\n"
    report = run_tests(page, code)
    found = report["diagnosis"]
    assert found["kind"] == "rules" and found["rules"] and found["mistake"] is None
    assert "the failing tests point to rule" in found["text"]
    assert found["example"].startswith("meteor_score(") and f"For example, {found['example']}." in found["text"]
    assert page.locator("[data-testid=diagnosis]").text_content() == found["text"]
    assert found == cli_diagnosis(code, report)


def test_a_bom_set_or_typed_into_the_editor_is_removed(page):
    page.evaluate("(src) => window.kit.setCode(src)", "\ufeff" + REFERENCE)
    assert "\ufeff" not in page.evaluate("window.kit.getCode()")
    page.locator(".cm-content").click()
    page.keyboard.press("Control+End")
    page.keyboard.insert_text("\n\ufeff# pasted")  # what a paste inserts, through the editor's input
    code = page.evaluate("window.kit.getCode()")
    assert code.endswith("\n# pasted") and "\ufeff" not in code
    assert page.evaluate("window.kit.runTests()")["passed"] > 40


# ---- keyboard, screen readers, axe ----------------------------------------------------------


def axe_violations(page: Page) -> list[str]:
    page.evaluate("new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")  # let layout settle
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    found = page.evaluate(
        "async () => (await axe.run(document)).violations.map((v) => `${v.impact} ${v.id}: ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(' | ')}`)"
    )
    return found


def test_axe_finds_nothing_on_load_after_a_failing_run_and_on_try_it(page):
    page.reload()
    page.evaluate("window.kit.ready")
    page.evaluate("window.kit.setRunBudget(300)")
    wait_ready(page)
    assert axe_violations(page) == []
    run_tests(page, NO_CLIPPING)
    assert axe_violations(page) == []
    page.click("[data-testid=try-tab]")
    assert axe_violations(page) == []
    page.click("#tab-results")


def test_one_h1_and_the_editor_says_how_to_leave_it(page):
    assert page.locator("h1").count() == 1
    help_id = page.get_attribute(".cm-content", "aria-describedby")
    assert "Escape, then Tab" in page.text_content(f"#{help_id}")
    page.locator(".cm-content").click()
    ring = page.evaluate("getComputedStyle(document.querySelector('#editor')).outlineStyle")
    assert ring == "solid"
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.closest('#editor') === null")


def test_focus_stays_on_run_tests_and_the_result_is_announced(page):
    page.evaluate("(src) => window.kit.setCode(src)", NO_LOWERCASE)
    page.focus("[data-testid=run-tests]")
    before = page.evaluate("window.kit.lastReport() && window.kit.lastReport().duration")
    page.keyboard.press("Enter")
    page.wait_for_function("(d) => window.kit.lastReport() && window.kit.lastReport().duration !== d", arg=before)
    assert page.evaluate("document.activeElement.dataset.testid") == "run-tests"
    page.wait_for_function("document.querySelector('[data-testid=announce]').textContent.includes('passed')")
    region = page.locator("[data-testid=announce]")
    assert region.get_attribute("aria-live") == "polite"
    assert region.text_content().startswith(page.text_content("[data-testid=summary]")[:10])
    assert page.get_attribute("#saved", "aria-live") is None  # typing is not announced


def test_the_tabs_follow_the_aria_pattern(page):
    tabs = page.locator("[role=tab]")
    for i in range(tabs.count()):
        panel = tabs.nth(i).get_attribute("aria-controls")
        assert page.get_attribute(f"#{panel}", "role") == "tabpanel"
    page.focus("#tab-results")
    page.keyboard.press("ArrowRight")
    assert page.evaluate("document.activeElement.id") == "tab-try"
    assert page.get_attribute("#tab-try", "aria-selected") == "true" and page.is_visible("#panel-try")
    assert page.get_attribute("#tab-results", "tabindex") == "-1"
    page.keyboard.press("Home")
    assert page.evaluate("document.activeElement.id") == "tab-results"
    page.keyboard.press("End")
    assert page.evaluate("document.activeElement.id") == "tab-try"
    page.keyboard.press("ArrowRight")  # wraps round
    assert page.evaluate("document.activeElement.id") == "tab-results" and page.is_visible("#panel-results")


# ---- try it ---------------------------------------------------------------------------------


def test_try_it_checks_its_inputs_against_the_statement(page):
    page.evaluate("(src) => window.kit.setCode(src)", REFERENCE)
    page.click("[data-testid=try-tab]")
    page.fill("[data-testid=try-reference]", "the cat")
    page.fill("[data-testid=try-candidate]", "the cat")
    page.fill("[data-testid=try-alpha]", "2")
    page.fill("[data-testid=try-beta]", "-1")
    page.fill("[data-testid=try-gamma]", "5")
    page.click("[data-testid=try-run]")
    errors = page.text_content("[data-testid=try-errors]")
    assert (
        "alpha must be between 0 and 1" in errors
        and "beta must be greater than 0" in errors
        and "gamma must be between 0 and 1" in errors
    )
    assert page.text_content("[data-testid=try-result]") == ""
    # Empty means the default, said in the echo of the call.
    page.fill("[data-testid=try-alpha]", "")
    page.fill("[data-testid=try-beta]", "3")
    page.fill("[data-testid=try-gamma]", "0.5")
    page.click("[data-testid=try-run]")
    page.wait_for_selector("[data-testid=try-value]")
    assert page.is_hidden("[data-testid=try-errors]")
    assert "alpha=0.9" in page.text_content("[data-testid=try-result] .call")
    long = " ".join(["word"] * 5000)
    page.fill("[data-testid=try-reference]", long)
    page.click("[data-testid=try-run]")
    page.wait_for_function(
        "document.querySelector('[data-testid=try-result] .call') && document.querySelector('[data-testid=try-result] .call').textContent.includes('characters in all')"
    )
    assert len(page.text_content("[data-testid=try-result] .call")) < 600
    page.click("#tab-results")


# ---- reflow ---------------------------------------------------------------------------------


def centre_is_itself(page: Page, selector: str) -> bool:
    return page.evaluate(
        """(sel) => {
            const el = document.querySelector(sel);
            el.scrollIntoView({ block: "center", inline: "center" });
            const r = el.getBoundingClientRect();
            const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
            return Boolean(hit) && (hit === el || el.contains(hit));
        }""",
        selector,
    )


# 200 % and 400 % zoom of a 1440 px window leave 720 and 360 CSS px.
@pytest.mark.parametrize("width", [320, 390, 768, 1024, 720, 360])
def test_every_width_shows_the_summary_editor_and_run_tests_uncovered(page, width):
    page.set_viewport_size({"width": width, "height": 700})
    try:
        for selector in ("[data-testid=summary]", "[data-testid=editor]", "[data-testid=run-tests]"):
            assert centre_is_itself(page, selector), f"{selector} is covered at {width} px"
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), "the page scrolls sideways"
        if width < 1000:
            assert page.evaluate("getComputedStyle(document.querySelector('#statement')).position") == "static"
        if width in (390, 320):
            assert axe_violations(page) == []
    finally:
        page.set_viewport_size({"width": 1400, "height": 1000})


def test_screenshots_light_and_dark_at_390_and_1440(browser, site_url):
    for scheme in ("light", "dark"):
        context = browser.new_context(viewport={"width": 1440, "height": 1000}, color_scheme=scheme)
        page = context.new_page()
        page.goto(site_url)
        page.evaluate("window.kit.ready")
        run_tests(page, NO_CLIPPING)
        assert axe_violations(page) == [], scheme
        page.screenshot(path=str(SHOTS / f"page-1440-{scheme}.png"))
        page.set_viewport_size({"width": 390, "height": 844})
        page.screenshot(path=str(SHOTS / f"page-390-{scheme}.png"), full_page=True)
        page.click("[data-testid=try-tab]")
        assert axe_violations(page) == [], f"try it, {scheme}"
        context.close()


# ---- storage --------------------------------------------------------------------------------

BLOCK_STORAGE = """
Object.defineProperty(window, "localStorage", { get() { throw new DOMException("blocked", "SecurityError"); } });
"""


def test_with_storage_blocked_the_page_works_and_says_drafts_are_not_kept(browser, site_url):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.add_init_script(BLOCK_STORAGE)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(site_url)
    page.evaluate("window.kit.ready")
    assert page.evaluate("window.kit.drafts()") is False
    assert "raise NotImplementedError" in page.evaluate("window.kit.getCode()")
    assert "will not be kept" in page.text_content("[data-testid=storage-note]")
    assert run_tests(page, REFERENCE)["passed"] > 40
    assert errors == []
    context.close()


def test_two_tabs_keep_one_draft(page):
    other = page.context.new_page()
    other.goto(page.url)
    other.wait_for_function("window.kit && window.kit.getCode")
    page.evaluate("(src) => window.kit.setCode(src)", "def meteor_score(reference, candidate):\n    return 0.25\n")
    other.wait_for_function("window.kit.getCode().includes('0.25')")
    other.close()


# ---- offline --------------------------------------------------------------------------------


def test_with_the_server_gone_a_reload_a_run_and_a_restart_work(browser, tmp_path):
    site = tmp_path / "site"
    shutil.copytree(built_site(), site)
    server, url = serve.serve_in_thread(site)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        page.goto(url)
        page.evaluate("window.kit.ready")
        assert page.evaluate("window.kit.offline") is True
        page.wait_for_function("navigator.serviceWorker.controller !== null")
        server.shutdown()
        server.server_close()
        page.reload()
        page.evaluate("window.kit.ready")
        assert page.evaluate("crossOriginIsolated") is True, "the service worker keeps COOP/COEP"
        assert run_tests(page, REFERENCE)["passed"] > 40
        start_run(page, C_LOOP)
        page.click("[data-testid=stop]")  # a loop in C code ignores the interrupt: Python restarts
        page.wait_for_function("window.kit.restarts() === 1")
        wait_ready(page)
        assert run_tests(page, REFERENCE)["passed"] > 40
        # A new build (another digest) replaces the old cache on the next online visit.
        old = page.evaluate("caches.keys()")
        sw = site / "sw.js"
        sw.write_text(sw.read_text().replace(old[0].removeprefix("meteor-kit-"), "0123456789abcdef"))
        server, url2 = serve.serve_in_thread(site, port=int(urlsplit(url).port))
        page.reload()
        page.evaluate("window.kit.ready")
        page.wait_for_function(
            "caches.keys().then((k) => k.length === 1 && k[0] === 'meteor-kit-0123456789abcdef')", timeout=60_000
        )
        server.shutdown()
        server.server_close()
    finally:
        context.close()


def test_the_page_made_no_request_outside_localhost_and_raised_no_error(page, requests_seen, site_url):
    origin = urlsplit(site_url).netloc
    assert requests_seen, "no request was recorded"
    outside = [url for url in requests_seen if urlsplit(url).scheme not in ("data", "blob") and urlsplit(url).netloc != origin]
    assert outside == []
    assert page.errors == []
