"""The `meteor-kit` command."""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
from pathlib import Path

from grader.cli.exercise_option import add_exercise_option
from grader.core import exercise, runner
from grader.core.safe_text import for_terminal

# Each of these modules has `register(commands, ex)`, which adds its subcommand to the parser (`ex`: the
# exercise --exercise chose, whose values its help and defaults give).
SUBCOMMAND_MODULES: tuple[str, ...] = (
    "grader.cli.check",
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
