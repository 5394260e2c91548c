"""Speed of the student's page in headless Chromium: cold start, first run, warm runs, second visit.

usage: .venv/bin/python bench/bench_web.py [--rounds N] [--baseline SITE_DIR] [--after-warm-up]
       (writes bench/out/web.json)

Each round opens a fresh browser context (empty HTTP cache, empty localStorage, no service
worker), so "ready" is a cold start of Pyodide as a student's first visit would be; then it
reloads the page, served by the service worker, for "second_visit_ready". Times are seconds,
from the navigation. With `--baseline`, another build (e.g. one from `git worktree add`) runs
in the same browser, its rounds interleaved with this build's, and the medians are compared
as ratios: the machine is shared and noisy, so only figures taken side by side compare.
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

from playwright.sync_api import sync_playwright

from grader.cli import serve
from grader.core import exercise
from grader.export import web as web_build

FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
REFERENCE = (ROOT / "solutions" / "reference.py").read_text(encoding="utf-8")
STARTER = (ROOT / "problem" / "starter.py").read_text(encoding="utf-8")
# The steps of a start, in order, as the worker reports them (older builds report fewer).
# "pyodide" is Python loaded (restored from the snapshot, or started); "imports" and "session" are
# the long way's steps; "warm" ends the work after "ready" (a first collection, or a restored
# Python's warm-up run, cut short when a run is asked for).
PHASES = ("workerStart", "snapshotBytes", "createModule", "moduleMade", "pyodide", "files", "imports", "session", "warm")
TARGETS = {"ready": 3.0, "first_run": 2.0, "warm_run": 1.0}
# The parts of one run, as the page reports them (window.kit.runTimings(); older builds report
# none): "waited" is the call's way into the worker (and a warm-up still unwinding), "python" the
# worker's call into page_session, made of pytest's phases ("configure", "collect", "tests",
# "session_end"), "diagnosis" and "report" (advice, JSON), plus "bridge" (the worker's calls into
# Python, JSON.parse); "back" is the report's way back, "render" the page drawing it.
RUN_PARTS = (
    "waited",
    "python",
    "configure",
    "collect",
    "tests",
    "session_end",
    "diagnosis",
    "report",
    "bridge",
    "back",
    "render",
)


def timed_run(page) -> tuple[float, dict, dict]:
    started = time.perf_counter()
    report = page.evaluate("window.kit.runTests()")
    took = time.perf_counter() - started
    parts = page.evaluate("window.kit.runTimings ? window.kit.runTimings() : null") or {}
    return took, report, parts


def parts_median(runs: list[dict], prefix: str) -> dict[str, float]:
    return {f"{prefix}.{k}": statistics.median(r[k] for r in runs) for k in RUN_PARTS if runs and all(k in r for r in runs)}


def first_run_after_warm_up(browser, url: str) -> dict:
    """A first visit whose first run is clicked once the warm-up run has ended, not at ready."""
    context = browser.new_context()
    page = context.new_page()
    page.goto(url)
    page.evaluate("window.kit.ready")
    page.wait_for_function("window.kit.timings().warm !== undefined", timeout=120_000)
    page.evaluate("(src) => window.kit.setCode(src)", REFERENCE)
    took, report, parts = timed_run(page)
    assert report["passed"] == len(report["tests"]), "the reference must pass"
    context.close()
    return {"first_run_after_warm_up": took, **parts_median([parts] if parts else [], "after_warm_up")}


def one_round(browser, url: str, warm_runs: int, after_warm_up: bool = False) -> dict:
    context = browser.new_context()
    page = context.new_page()
    page.goto(url)
    # The page's own clock when Python became ready: no round trip of the driver in it.
    ready = page.evaluate("window.kit.ready.then(() => performance.now())") / 1000
    page.evaluate("(src) => window.kit.setCode(src)", REFERENCE)
    first, report, first_parts = timed_run(page)
    assert report["passed"] == len(report["tests"]), "the reference must pass"
    # After the first run, so the warm-up's time (sent once it ends) is in.
    timings = page.evaluate("window.kit.timings()")
    warm = [timed_run(page) for _ in range(warm_runs)]
    page.evaluate("(src) => window.kit.setCode(src)", STARTER)
    failing, _, failing_parts = timed_run(page)
    result = {
        "ready": ready,
        "first_run": first,
        "ready_and_first_run": ready + first,
        "warm_run": statistics.median(w[0] for w in warm),
        "warm_run_all_failing": failing,
        **{f"at_{name}": timings[name] for name in PHASES if timings.get(name) is not None},
        # How long the warm-up took to give way to the first run, once asked (older builds: absent).
        **({"warm_up_unwound": timings["warmUnwound"]} if timings.get("warmUnwound") is not None else {}),
        **parts_median([first_parts] if first_parts else [], "first"),
        **parts_median([w[2] for w in warm if w[2]], "warm"),
        **parts_median([failing_parts] if failing_parts else [], "failing"),
        "tests": len(report["tests"]),
        "from_snapshot": bool(timings.get("snapshot")),
    }
    if after_warm_up:
        result.update(first_run_after_warm_up(browser, url))
    # A second visit: the service worker has cached the site by now, so nothing comes from the network.
    if page.evaluate("window.kit.offline === undefined ? null : window.kit.offline"):
        page.reload()
        result["second_visit_ready"] = page.evaluate("window.kit.ready.then(() => performance.now())") / 1000
    context.close()
    return result


def medians(rounds: list[dict]) -> dict[str, float]:
    keys = [k for k in rounds[0] if k not in ("tests", "from_snapshot") and all(k in r for r in rounds)]
    return {k: round(statistics.median(r[k] for r in rounds), 3) for k in keys}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--warm-runs", type=int, default=3)
    parser.add_argument(
        "--after-warm-up", action="store_true", help="also a fresh page whose first run is clicked once the warm-up has ended"
    )
    parser.add_argument("--site", type=Path, help="the build to measure (default: build/web, built if needed)")
    parser.add_argument("--baseline", type=Path, help="another build, measured in the same run for ratios")
    args = parser.parse_args()
    site = args.site.resolve() if args.site else web_build.ensure_built(exercise.load(ROOT))
    sites = {"this": site}
    if args.baseline:
        if not (args.baseline / "index.html").is_file():
            parser.exit(2, f"bench_web: {args.baseline} holds no built site (no index.html)\n")
        sites["baseline"] = args.baseline.resolve()
    servers = {name: serve.serve_in_thread(path) for name, path in sites.items()}
    rounds: dict[str, list[dict]] = {name: [] for name in sites}
    load_before = os.getloadavg()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=FLAGS, headless=True)
        for i in range(args.rounds):
            # Alternate which build goes first, so neither always meets a busier moment.
            order = list(sites) if i % 2 == 0 else list(reversed(sites))
            for name in order:
                load = os.getloadavg()[0]
                rounds[name].append({**one_round(browser, servers[name][1], args.warm_runs, args.after_warm_up), "load": load})
        browser.close()
    for server, _ in servers.values():
        server.shutdown()
    load_after = os.getloadavg()
    summary = {name: medians(r) for name, r in rounds.items()}
    result = {
        "cpus": os.cpu_count(),
        "load_average_before": load_before,
        "load_average_after": load_after,
        "rounds_each": args.rounds,
        "sites": {name: str(path) for name, path in sites.items()},
        "tests": rounds["this"][0]["tests"],
        "from_snapshot": {name: [r["from_snapshot"] for r in rs] for name, rs in rounds.items()},
        "median": summary,
        "rounds": rounds,
    }
    out = ROOT / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / "web.json").write_text(json.dumps(result, indent=2))
    print(
        f"{args.rounds} rounds each, {os.cpu_count()} CPUs, load average {load_before[0]:.2f} before, "
        f"{load_after[0]:.2f} after ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})"
    )
    this, base = summary["this"], summary.get("baseline")
    # "paired": the median of each round's ratio to the baseline round run next to it, which a
    # load that changes during the run (other work on the machine) moves much less than the
    # ratio of the medians.
    header = f"  {'median (s)':28}{'this':>8}" + (f"{'baseline':>10}{'ratio':>8}{'paired':>8}" if base else "") + f"{'target':>8}"
    print(header)
    for key, value in this.items():
        line = f"  {key:28}{value:8.2f}"
        if base:
            old = base.get(key)
            pairs = [a[key] / b[key] for a, b in zip(rounds["this"], rounds["baseline"]) if a.get(key) and b.get(key)]
            paired = f"{statistics.median(pairs):8.2f}" if pairs else f"{'':8}"
            line += f"{old:10.2f}{value / old:8.2f}{paired}" if old else f"{'':10}{'':8}{'':8}"
        if key in TARGETS:
            line += f"{'≤ ' + str(TARGETS[key]):>8}"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
