"""The `meteor-kit` command."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import signal
import stat
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from grader.cli.exercise_option import add_exercise_option
from grader.cli.grade import _positive_float
from grader.core import exercise, runner
from grader.core.safe_text import clean, for_terminal
from grader.reports.terminal import render_report


def _existing_file(text: str) -> Path:
    path = Path(text)
    if not os.path.lexists(text):
        raise argparse.ArgumentTypeError(f"no such file: {for_terminal(text, one_line=True)}")
    if stat.S_ISDIR(os.lstat(text).st_mode):
        raise argparse.ArgumentTypeError(f"{for_terminal(text, one_line=True)} is a directory; give a .py file")
    return path


def cmd_check(args: argparse.Namespace) -> int:
    from grader.judging.discovery import file_spec, prepare
    from grader.sandbox.host import enter_mode

    ex = args.exercise
    mode = enter_mode("meteor-kit check", args.no_sandbox, [args.path, ex.root])
    if mode is None:
        return 2
    tiers = tuple(args.tiers.split(",")) if args.tiers else tuple(ex.tiers)
    unknown = set(tiers) - set(ex.tiers)
    if unknown:
        print(f"meteor-kit check: unknown tier(s): {for_terminal(', '.join(sorted(unknown)), one_line=True)}", file=sys.stderr)
        return 2
    # The file is read and decoded exactly as `grade` reads it: a notebook, a BOM, a coding
    # line and a link all get the same verdict from both.
    spec = file_spec(str(args.path))
    prepared = prepare(spec)
    made: list = []
    make = _sandbox_factory(spec.path, prepared, ex, args.budget, made)
    try:
        report = runner.run(ex, make, name=spec.name, tiers=tiers)
    finally:
        for box in made:
            box.close()
    if report.status == "error" and report.message.startswith(runner.TESTS_BROKEN_PREFIX):
        raise runner.TestsBroken(report.message)
    diagnosis = None
    # The diagnosis runs on what is left of the same budget, if anything is.
    left = args.budget - sum(box.used() for box in made)
    if report.status == "graded" and report.passed < len(report.tests) and left > 0:
        from grader.judging.diagnose import diagnose_made

        diagnosis = diagnose_made(ex, _sandbox_factory(spec.path, prepared, ex, left, []), report, left)
    if args.json:
        # The browser's report shape exactly: the isolation mode goes to stderr above.
        json.dump(clean({**report.as_json(), "diagnosis": diagnosis.as_json() if diagnosis else None}), sys.stdout, indent=2)
        print()
    else:
        color = sys.stdout.isatty()
        print(render_report(report, color=color))
        if diagnosis:
            label = "\033[1;33mDiagnosis:\033[0m" if color else "Diagnosis:"
            print(f"\n{label} {for_terminal(diagnosis.text)}")
    return 0 if report.status == "graded" and report.passed == len(report.tests) else 1


def _sandbox_factory(path: Path | None, prepared, ex: exercise.Exercise, budget: float, made: list) -> Callable[[], object]:
    """Builds the jailed submission from the code as read, or raises LoadError with the reason."""
    from grader.core.submission import LoadError
    from grader.sandbox.host import SandboxedSubmission

    def make() -> object:
        if prepared.problem:
            raise LoadError(prepared.problem)
        try:
            box = SandboxedSubmission(
                path,
                ex.function,
                ex.call_timeout,
                source=prepared.source,
                filename=prepared.filename,
                budget=budget,
                signature=ex.signature,
            )
            made.append(box)
            return box
        except LoadError as exc:
            if prepared.notebook is None:
                raise
            raise LoadError(prepared.notebook.relabel(str(exc))) from None

    return make


# Each of these modules has `register(commands, ex)`, which adds its subcommand to the parser (`ex`: the
# exercise --exercise chose, whose values its help and defaults give).
SUBCOMMAND_MODULES: tuple[str, ...] = (
    "grader.cli.grade",
    "grader.cli.merge",
    "grader.cli.autograder",
    "grader.cli.explain",
    "grader.cli.web_build",
    "grader.cli.serve",
    "grader.cli.new",
    "grader.cli.audit",
)


DESCRIPTION = (
    "A grader kit for a Python programming exercise: check one submission, grade a class in a sandbox, "
    "build the students' practice page, export a Gradescope autograder."
)


def build_parser(ex: exercise.Exercise) -> argparse.ArgumentParser:
    """The command line, its help and defaults taken from `ex`."""
    parser = argparse.ArgumentParser(
        prog="meteor-kit",
        description=DESCRIPTION,
        epilog=f"The exercise: {ex.title} ({ex.root}); --exercise DIR chooses another.",
    )
    add_exercise_option(parser)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    check = commands.add_parser(
        "check",
        help="run every test tier against one submission and print a report",
        description=f"Run every tier of {ex.title}'s tests against one submission, sandboxed, and print a report.",
    )
    check.add_argument("path", type=_existing_file, help="the submission: a .py file or an .ipynb notebook")
    check.add_argument("--tiers", help="comma-separated tiers to run (default: all)")
    check.add_argument("--json", action="store_true", help="print the JSON report instead")
    check.add_argument(
        "--no-sandbox",
        action="store_true",
        help="where no isolation works (not root, no usable bubblewrap), run it anyway, NOT isolated",
    )
    check.add_argument(
        "--budget",
        type=_positive_float,
        default=ex.budget,
        help=f"seconds the submission may use in all (default {ex.budget:g}, as grade); the tests after that are reported not run",
    )
    add_exercise_option(check)
    check.set_defaults(func=cmd_check)

    for module in SUBCOMMAND_MODULES:
        importlib.import_module(module).register(commands, ex)
    return parser


def choose_exercise(argv: list[str]) -> exercise.Exercise:
    """The exercise --exercise DIR names (wherever the option stands), else the kit's own: read before the parser
    is built, whose help and defaults come from it."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--exercise")
    known, _ = pre.parse_known_args(argv)
    if known.exercise is None:
        return exercise.load(exercise.KIT_ROOT)
    folder = Path(known.exercise)
    shown = for_terminal(known.exercise, one_line=True)
    if not (folder / "problem" / "exercise.toml").is_file():
        print(f"meteor-kit: --exercise {shown}: no problem/exercise.toml in that folder", file=sys.stderr)
        raise SystemExit(2)
    try:
        return exercise.load(folder)
    except (OSError, ValueError, KeyError, TypeError, SyntaxError) as exc:
        print(f"meteor-kit: --exercise {shown}: its problem/exercise.toml is not valid ({exc!r})", file=sys.stderr)
        raise SystemExit(2) from None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if sys.pycache_prefix is None and not sys.dont_write_bytecode:
        # The bytecode of what is imported from here on (the exercise's modules and tests) goes to the
        # kit's cache folder: the command writes nothing into the exercise's folder.
        sys.pycache_prefix = str(exercise.CACHE / "pycache")
    ex = choose_exercise(argv)
    args = build_parser(ex).parse_args(argv)
    args.exercise = ex  # every command's: the one the parser was built from
    if (
        signal.getsignal(signal.SIGINT) is not signal.default_int_handler
        and threading.current_thread() is threading.main_thread()
    ):
        signal.signal(signal.SIGINT, signal.default_int_handler)  # the command handles Ctrl+C from here (grade saves its work)
    try:
        code = args.func(args)
        sys.stdout.flush()
    except KeyboardInterrupt:
        print("meteor-kit: interrupted", file=sys.stderr)
        return 130
    except runner.TestsBroken as exc:
        # The author's tests, not a submission: nothing is graded with them (grade writes no results).
        print(
            f"meteor-kit: {for_terminal(str(exc))}\nfix them (pytest {for_terminal(str(ex.tests_dir))} shows the whole error)",
            file=sys.stderr,
        )
        return 2
    except BrokenPipeError:
        # The reader went away (`meteor-kit check --json | head`): what it wanted it has. Python
        # would flush stdout again at exit and print a traceback, so point stdout at nothing first.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # as a shell reports a command ended by SIGPIPE
    return code


if __name__ == "__main__":
    sys.exit(main())
