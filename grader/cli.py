"""The `meteor-kit` command."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path

from grader import exercise, runner
from grader.terminal import render_report


def _existing_file(text: str) -> Path:
    path = Path(text)
    if not path.exists():
        raise argparse.ArgumentTypeError(f"no such file: {text}")
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a directory; give a .py file")
    return path


def cmd_check(args: argparse.Namespace) -> int:
    from grader.sandbox import ISOLATION_NOTES, SandboxedSubmission, isolation, kit_paths, prepare_separate_uid, refusal

    mode = isolation()
    if mode == "none" and not args.no_sandbox:
        print(refusal("meteor-kit check"), file=sys.stderr)
        return 2
    if ISOLATION_NOTES[mode]:
        print(ISOLATION_NOTES[mode], file=sys.stderr)
    if mode == "separate-uid":
        prepare_separate_uid([*kit_paths(), args.path])
    ex = exercise.load()
    tiers = tuple(args.tiers.split(",")) if args.tiers else tuple(ex.tiers)
    unknown = set(tiers) - set(ex.tiers)
    if unknown:
        print(f"meteor-kit check: unknown tier(s): {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    report = runner.run(
        lambda: SandboxedSubmission(args.path, ex.function, ex.call_timeout),
        name=args.path.name,
        tiers=tiers,
    )
    diagnosis = None
    if report.status == "graded" and report.passed < len(report.tests):
        from grader.diagnose import diagnose_path

        diagnosis = diagnose_path(args.path, report)
    if args.json:
        json.dump({**report.as_json(), "diagnosis": diagnosis.as_json() if diagnosis else None}, sys.stdout, indent=2)
        print()
    else:
        print(render_report(report, color=sys.stdout.isatty()))
        if diagnosis:
            print(diagnosis.render(color=sys.stdout.isatty()))
    return 0 if report.status == "graded" and report.passed == len(report.tests) else 1


# Each of these modules has `register(commands)`, which adds its subcommand to the parser.
SUBCOMMAND_MODULES: tuple[str, ...] = (
    "grader.grade",
    "grader.gradescope",
    "grader.explain_cli",
    "grader.web_build",
    "grader.serve",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="meteor-kit", description=exercise.load().title + " grader kit")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    check = commands.add_parser("check", help="run every test tier against one submission and print a report")
    check.add_argument("path", type=_existing_file, help="the submission's .py file")
    check.add_argument("--tiers", help="comma-separated tiers to run (default: all)")
    check.add_argument("--json", action="store_true", help="print the JSON report instead")
    check.add_argument("--no-sandbox", action="store_true",
                       help="where no isolation works (not root, no usable bubblewrap), run it anyway, NOT isolated")
    check.set_defaults(func=cmd_check)

    for module in SUBCOMMAND_MODULES:
        importlib.import_module(module).register(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
