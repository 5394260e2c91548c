"""Benchmark of the class report: how big it is, how long it takes to write, and to open in Chromium.

    .venv/bin/python bench/bench_report.py [--size 1000] [--rounds 3]

A made-up class (tests/big_class.py) goes through the same writer as `meteor-kit grade`; headless
Chromium (Debian's, through Playwright) opens report.html in a fresh page each round at 390,
768 and 1440 px. "Open" is the navigation's load event (the page laid out, the sorting
script run) and its first contentful paint, both from the browser's own timing. Prints a
table and writes bench/out/bench_report.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader.core import exercise
from grader.core.results import ClassRun
from grader.reports.files import write_outputs
from tests.big_class import big_class

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
TIMING = """() => {
  const nav = performance.getEntriesByType("navigation")[0];
  const paint = performance.getEntriesByName("first-contentful-paint")[0];
  return {load: nav.loadEventEnd, paint: paint ? paint.startTime : null};
}"""


def open_times(report: Path, rounds: int) -> dict:
    from playwright.sync_api import sync_playwright

    figures: dict[int, dict] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        try:
            for width in (390, 768, 1440):
                loads, paints, sorts = [], [], []
                for _ in range(rounds):
                    page = browser.new_page(viewport={"width": width, "height": 900})
                    page.goto(report.as_uri())
                    page.wait_for_load_state("load")
                    timing = page.evaluate(TIMING)
                    loads.append(timing["load"] / 1000)
                    paints.append((timing["paint"] or 0) / 1000)
                    started = time.monotonic()
                    page.click("#class button[data-key=score]")
                    page.evaluate("() => new Promise(requestAnimationFrame)")
                    sorts.append(time.monotonic() - started)
                    page.close()
                figures[width] = {
                    "load_s": statistics.median(loads),
                    "first_paint_s": statistics.median(paints),
                    "sort_by_score_s": statistics.median(sorts),
                }
        finally:
            browser.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    document = big_class(args.size)
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder)
        started = time.monotonic()
        write_outputs(out, ClassRun.from_json(document), exercise.load(ROOT))
        written = time.monotonic() - started
        report = out / "report.html"
        pages = list((out / "report").iterdir())
        result = {
            "size": args.size,
            "write_outputs_s": round(written, 2),
            "report_html_bytes": report.stat().st_size,
            "student_pages": len(pages),
            "largest_student_page_bytes": max(p.stat().st_size for p in pages),
            "open": open_times(report, args.rounds),
        }
    print(
        f"class of {args.size}: report.html {result['report_html_bytes'] / 1e3:.0f} kB, {len(pages)} student pages "
        f"(largest {result['largest_student_page_bytes'] / 1e3:.0f} kB); all outputs written in {written:.1f} s"
    )
    print("width  load   first paint  sort by score")
    for width, f in result["open"].items():
        print(f"{width:>5}  {f['load_s']:.2f} s  {f['first_paint_s']:.2f} s       {f['sort_by_score_s']:.2f} s")
    (ROOT / "bench" / "out").mkdir(exist_ok=True)
    (ROOT / "bench" / "out" / "bench_report.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
