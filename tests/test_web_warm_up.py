"""The page's warm-up run never overlaps a student's run, in real headless Chromium.

Restored from its snapshot, the page's Python runs the tests once, unseen, right after "ready".
A run clicked then interrupts that warm-up and starts once it has unwound, with nothing of the
interrupt left over: the student's own endless loop is still timed and interrupted as usual.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, sync_playwright

from grader.cli import serve
from tests.test_web_e2e import CHROMIUM, FLAGS, REFERENCE
from tests.web_site import built_site

TOP_LEVEL_LOOP = (
    "while True:\n    pass\n\ndef meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n    return 0.5\n"
)
LOADING = "ran out of time while loading"
# The test hook: the warm-up first works this long without looking at the page (as pytest's start
# does on a slow machine), longer than the run's whole budget (20 s): a run that counted its wait
# for the warm-up would run out of it.
SLOW_WARM_UP_S = 25


@pytest.fixture(scope="module")
def site_url():
    server, url = serve.serve_in_thread(built_site())
    yield url
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        yield browser
        browser.close()


def open_page(browser: Browser, url: str, slow_warm_up: float = 0):
    context = browser.new_context()
    context.set_default_timeout(180_000)
    if slow_warm_up:
        # Read by the page when it starts its worker.
        context.add_init_script(f"self.kitSlowWarmUp = {slow_warm_up}")
    page = context.new_page()
    page.goto(url)
    page.evaluate("window.kit.ready")
    return context, page


def run_at_ready(page, code: str) -> dict:
    page.evaluate("(src) => window.kit.setCode(src)", code)
    return page.evaluate("window.kit.runTests()")


def test_a_run_clicked_during_a_slow_warm_up_begins_after_it_with_its_whole_budget(browser, site_url):
    context, page = open_page(browser, site_url, slow_warm_up=SLOW_WARM_UP_S)
    try:
        page.wait_for_function("window.kit.timings().warming !== undefined")  # it waits a moment after ready
        report = run_at_ready(page, TOP_LEVEL_LOOP)  # the page's own run budget (20 s), not a test's
        assert any(LOADING in a for a in report["advice"]), report
        assert page.evaluate("window.kit.restarts()") == 0
        # The run began once the warm-up had ended, and waited for it.
        began, warmed = page.evaluate("window.kit.runTimings()")["begunAt"], page.evaluate("window.kit.timings()")["warm"]
        assert warmed <= began
        assert page.evaluate("window.kit.runTimings()")["waited"] > SLOW_WARM_UP_S / 2
        # And the next run is a plain one.
        assert run_at_ready(page, REFERENCE)["passed"] == len(report["tests"])
    finally:
        context.close()


@pytest.mark.parametrize("when", ["at_ready", "during_the_warm_up"])
def test_the_endless_top_level_loop_runs_out_of_time_while_loading_whenever_it_is_clicked(browser, site_url, when):
    context, page = open_page(browser, site_url)
    try:
        if when == "during_the_warm_up":
            page.wait_for_function("window.kit.timings().warming !== undefined")
        report = run_at_ready(page, TOP_LEVEL_LOOP)
        assert any(LOADING in a for a in report["advice"]), report
        assert page.evaluate("window.kit.restarts()") == 0
        assert run_at_ready(page, REFERENCE)["passed"] == len(report["tests"])
    finally:
        context.close()


def test_a_run_clicked_at_ready_goes_before_the_warm_up_which_then_never_runs(browser, site_url):
    context, page = open_page(browser, site_url, slow_warm_up=SLOW_WARM_UP_S)
    try:
        report = run_at_ready(page, REFERENCE)
        assert report["passed"] == len(report["tests"]) == 57
        assert page.evaluate("window.kit.runTimings()")["waited"] < SLOW_WARM_UP_S / 2
        page.wait_for_function("window.kit.timings().warm !== undefined")
        assert page.evaluate("window.kit.timings().warming") is None
    finally:
        context.close()
