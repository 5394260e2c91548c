"""Speed of the student's page in headless Chromium: cold start, first run, warm runs.

usage: .venv/bin/python bench/bench_web.py [--rounds N]    (writes bench/out/web.json)

Each round opens a fresh browser context (empty HTTP cache, empty localStorage, no service
worker), so "ready" is a cold start of Pyodide as a student's first visit would be; then it
reloads the page, served by the service worker, for "second_visit_ready". Times are seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402

from grader.cli import serve
from grader.cli import web_build  # noqa: E402

FLAGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
]
REFERENCE = (ROOT / "solutions" / "reference.py").read_text(encoding="utf-8")
STARTER = (ROOT / "problem" / "starter.py").read_text(encoding="utf-8")


def one_round(browser, url: str, warm_runs: int) -> dict:
    context = browser.new_context()
    page = context.new_page()
    page.goto(url)
    page.evaluate("window.kit.ready")
    ready = page.evaluate("performance.now()") / 1000
    timings = page.evaluate("window.kit.timings()")
    page.evaluate("(src) => window.kit.setCode(src)", REFERENCE)
    started = time.perf_counter()
    report = page.evaluate("window.kit.runTests()")
    first = time.perf_counter() - started
    assert report["passed"] == len(report["tests"]), "the reference must pass"
    warm = []
    for _ in range(warm_runs):
        started = time.perf_counter()
        page.evaluate("window.kit.runTests()")
        warm.append(time.perf_counter() - started)
    page.evaluate("(src) => window.kit.setCode(src)", STARTER)
    started = time.perf_counter()
    page.evaluate("window.kit.runTests()")
    failing = time.perf_counter() - started
    # A second visit: the service worker has cached the site by now, so nothing comes from the network.
    assert page.evaluate("window.kit.offline"), "the service worker did not install"
    page.reload()
    page.evaluate("window.kit.ready")
    second = page.evaluate("performance.now()") / 1000
    context.close()
    return {
        "ready": ready,
        "pyodide_loaded": timings.get("pyodide"),
        "pytest_imported": timings.get("imports"),
        "first_run": first,
        "warm_run": statistics.median(warm),
        "warm_run_all_failing": failing,
        "second_visit_ready": second,
        "tests": len(report["tests"]),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warm-runs", type=int, default=3)
    args = parser.parse_args()
    site = web_build.ensure_built()
    server, url = serve.serve_in_thread(site)
    rounds = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=FLAGS, headless=True)
        for _ in range(args.rounds):
            rounds.append(one_round(browser, url, args.warm_runs))
        browser.close()
    server.shutdown()
    keys = [k for k in rounds[0] if k != "tests"]
    summary = {k: round(statistics.median(r[k] for r in rounds), 2) for k in keys}
    result = {
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
        "tests": rounds[0]["tests"],
        "median": summary,
        "rounds": rounds,
    }
    out = ROOT / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / "web.json").write_text(json.dumps(result, indent=2))
    print(f"{args.rounds} rounds, {os.cpu_count()} CPUs, load average {result['load_average'][0]:.1f}")
    for k, v in summary.items():
        print(f"  {k:24} {v:6.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
