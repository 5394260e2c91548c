"""`meteor-kit audit`: the exercise's own quality report (grader.authoring.audit runs the checks)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from grader.cli.exercise_option import add_exercise_option
from grader.cli.grade import _positive_float, _positive_int
from grader.core import exercise
from grader.core.safe_text import for_terminal

MUTANT_BUDGET = 10.0  # seconds a mutant may use in all: one that hangs loses points whatever its limit


def register(commands: argparse._SubParsersAction, ex: exercise.Exercise) -> None:
    parser = commands.add_parser(
        "audit",
        help="check the exercise itself: its reference, its tests' strength, cheats, the diagnosis",
        description=f"Audit {ex.title}: the reference passes every test; every mutant of the reference loses points; "
        "constants and a table of the visible answers earn at most 5 %%; every misconception model and catalogue "
        "MISTAKE is named. Exits 1 when a check fails.",
    )
    parser.add_argument("--catalogue", type=Path, metavar="DIR", help="example submissions (MISTAKE / CHEAT lines), graded too")
    parser.add_argument("--browser", action="store_true", help="also run the reference in the built page (headless Chromium)")
    parser.add_argument("--html", type=Path, metavar="FILE", help="write the report as a self-contained HTML page too")
    parser.add_argument("--json", action="store_true", help="print the report as JSON instead")
    parser.add_argument(
        "--jobs", type=_positive_int, default=os.cpu_count() or 1, help="mutants graded at a time (default: the cores)"
    )
    parser.add_argument(
        "--timeout",
        type=_positive_float,
        default=ex.call_timeout,
        help=f"seconds for one call of a mutant (default {ex.call_timeout:g}, the exercise's)",
    )
    parser.add_argument(
        "--budget",
        type=_positive_float,
        default=MUTANT_BUDGET,
        help=f"seconds one mutant may use in all (default {MUTANT_BUDGET:g}); the reference and the catalogue get the exercise's",
    )
    parser.add_argument(
        "--draws", type=_positive_int, default=100, help="examples drawn per property test to tell a survivor apart (default 100)"
    )
    parser.add_argument(
        "--no-sandbox",
        action="store_true",
        help="where no isolation works (not root, no usable bubblewrap), run the mutants anyway, NOT isolated",
    )
    add_exercise_option(parser)
    parser.set_defaults(func=cmd_audit)


def cmd_audit(args: argparse.Namespace) -> int:
    from grader.authoring import audit
    from grader.judging.grade import Interrupted
    from grader.reports.audit import render_html, render_terminal
    from grader.sandbox.host import enter_mode, unhide

    ex = args.exercise
    problems = audit.preflight(ex)
    if args.catalogue is not None and not args.catalogue.is_dir():
        problems.append(f"--catalogue {args.catalogue}: not a folder")
    if problems:
        for problem in problems:
            print(for_terminal(f"meteor-kit audit: {ex.root}: {problem}", one_line=True), file=sys.stderr)
        return 2
    if args.browser:
        from grader.authoring.page import missing

        why = missing()
        if why:
            print(f"meteor-kit audit: --browser: {why}", file=sys.stderr)
            return 2
    hidden = [ex.root, *([args.catalogue] if args.catalogue else [])]
    if enter_mode("meteor-kit audit", args.no_sandbox, hidden) is None:
        return 2
    try:
        with _served(ex, args.browser) as url:
            options = audit.Options(args.jobs, args.timeout, args.budget, args.draws, args.catalogue, url)
            report = audit.run(ex, options, sys.stderr).as_json()
    except Interrupted:
        print("meteor-kit audit: interrupted", file=sys.stderr)
        return 130
    finally:
        unhide()
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        print()
    else:
        print(render_terminal(report, color=sys.stdout.isatty()))
    if args.html:
        try:
            args.html.write_text(render_html(report), encoding="utf-8")
        except OSError as exc:
            print(for_terminal(f"meteor-kit audit: --html {args.html}: {exc}", one_line=True), file=sys.stderr)
            return 2
        print(f"written: {args.html}", file=sys.stderr)
    return 0 if report["passed"] else 1


@contextlib.contextmanager
def _served(ex: exercise.Exercise, browser: bool) -> Iterator[str | None]:
    """The exercise's page, built into the kit's cache folder (never into the exercise) and served here; None without --browser."""
    if not browser:
        yield None
        return
    from grader.cli import serve, web_build

    site = ex.cache / "audit-web"
    if not web_build.is_current(ex, site):
        print(f"audit: building the page into {site}...", file=sys.stderr, flush=True)
        web_build.build(ex, site)
    server, url = serve.serve_in_thread(site)
    try:
        yield url
    finally:
        server.shutdown()
        server.server_close()
