"""The reference in the students' page: every test the page runs passes there too (headless Chromium, through playwright)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field

from grader.core import exercise

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
RUN_BUDGET = 300  # seconds the page may take for one run of the tests (its own default is the students')


@dataclass
class PageRun:
    problems: list[str]
    tests: int = 0
    tiers: list[str] = field(default_factory=list)


def missing() -> str:
    """Why the page cannot be driven here ("" when it can)."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install playwright, or the kit's dev dependencies)"
    if not shutil.which(CHROMIUM):
        return f"{CHROMIUM} is missing (apt-get install chromium)"
    return ""


def run_reference(ex: exercise.Exercise, url: str) -> PageRun:
    """Load the page served at `url`, run the reference's code there, and say which of its tests do not pass."""
    from playwright.sync_api import sync_playwright

    source = (ex.root / "solutions" / "reference.py").read_text(encoding="utf-8")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(url)
            page.evaluate("window.kit.ready")
            page.evaluate(f"window.kit.setRunBudget({RUN_BUDGET})")
            page.evaluate("(src) => window.kit.setCode(src)", source)
            report = page.evaluate("window.kit.runTests()")
        finally:
            browser.close()
    tests = report.get("tests") or []
    problems = [
        f"{t['tier']} {t['name']}: {t['status']}: {str(t.get('message', ''))[:200]}" for t in tests if t["status"] != "pass"
    ]
    tiers = sorted({t["tier"] for t in tests})
    if not tests:
        problems.append(f"the page ran no test ({report.get('status')}: {str(report.get('message', ''))[:200]})")
    elif set(tiers) != set(ex.browser_tiers):
        problems.append(f"the page ran the tiers {tiers}, not {sorted(ex.browser_tiers)}")
    problems += [f"the page raised: {error[:200]}" for error in errors]
    return PageRun(problems, len(tests), tiers)
