"""Gradescope's autograder: this same grader, run for each upload on Gradescope's fleet; and the zip that carries it.

`run` is what the zip's run_autograder calls (`python -m grader.cli.autograder run`): it grades
the upload under /autograder/submission through the class pipeline (grader/judging/pipeline.py),
a class of one, and writes /autograder/results/results.json whatever happens. The zip is made
by grader/export/gradescope.py (`meteor-kit export-gradescope`). See docs/gradescope.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from pathlib import Path
from typing import Any

from grader.cli.exercise_option import add_exercise_option
from grader.core import exercise
from grader.export.gradescope import ExportError, export
from grader.judging.upload import pick, shown
from grader.reports.gradescope import GRADER_FAILED, clean, to_gradescope


def run(root: Path, exercise_dir: Path) -> int:
    """Grade the submission Gradescope put under `root` on the exercise in `exercise_dir`, and write its results.json
    there, whatever happens."""
    results_dir = root / "results"
    results_dir.mkdir(parents=True, exist_ok=True)
    try:
        document = _grade(root, exercise.load(exercise_dir))
    except Exception:  # a grader bug: the student gets a sentence, the instructor the traceback on stdout
        traceback.print_exc(file=sys.stdout)
        document = _zero(GRADER_FAILED)
    (results_dir / "results.json").write_text(json.dumps(document, indent=2), encoding="utf-8")
    return 0


def _grade(root: Path, ex: exercise.Exercise) -> dict[str, Any]:
    from grader.sandbox.host import enter_mode, unhide

    # Entered here, in the process that lives the whole run, so the permissions the
    # separate-uid mode takes are given back when it ends.
    mode = enter_mode("the autograder", False, [root / "submission", root / "results", ex.root])
    print(f"isolation: {mode}")  # stdout is for the instructor only (stdout_visibility)
    if mode is None:
        return _zero(GRADER_FAILED)
    try:
        return _grade_upload(root, ex, mode)
    finally:
        unhide()


def _grade_upload(root: Path, ex: exercise.Exercise, mode: str) -> dict[str, Any]:
    from grader.judging.discovery import UsageError, discover
    from grader.judging.pipeline import ClassRequest, grade_class

    try:
        specs = discover([str(root / "submission")])
    except UsageError as exc:
        return _zero(f"No submission to grade: {exc}. Upload one .py or .ipynb file.")
    spec, problem, notes = pick(specs, ex.function, root / "submission")
    if spec is None:
        return _zero("\n".join([problem, *notes]))
    # A class of one: nothing kept from an earlier run, no similar code to look for, nothing written but Gradescope's file.
    request = ClassRequest(ex, specs=[spec], isolation=mode, similar=False, tell=lambda _: None, progress=False)
    result = grade_class(request).submissions[0]
    # repr: a file name that is not UTF-8 holds lone surrogates, which stdout cannot encode.
    print(f"graded {spec.name!r}: {result.status} {result.score}/{result.max_score} {result.message!r}")
    document = to_gradescope(result, ex)
    if len(specs) > 1:
        said = [f"Graded {shown(spec.path, root / 'submission')}.", *notes] if spec.path else notes
        document["output"] = clean("\n".join(said)) + "\n" + document["output"]
    return document


def _zero(output: str) -> dict[str, Any]:
    return {"score": 0.0, "execution_time": 0, "output": clean(output), "stdout_visibility": "hidden", "tests": []}


def cmd_export(args: argparse.Namespace) -> int:
    try:
        export(args.out, args.exercise)
    except ExportError as exc:
        print(f"meteor-kit export-gradescope: {exc}", file=sys.stderr)
        return 2
    print(
        f"wrote {args.out}: upload it as the autograder of a Gradescope programming assignment "
        "(Ubuntu 22.04 base image); see docs/gradescope.md"
    )
    return 0


def register(commands: argparse._SubParsersAction, ex: exercise.Exercise) -> None:
    parser = commands.add_parser(
        "export-gradescope",
        help="write a Gradescope autograder zip that runs this grader",
        description=f"Write a Gradescope autograder zip that grades {ex.title} with this grader: the engine and the exercise.",
    )
    parser.add_argument("--out", type=Path, default=Path("autograder.zip"), help="the zip to write (default autograder.zip)")
    add_exercise_option(parser)
    parser.set_defaults(func=cmd_export)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader.cli.autograder")
    commands = parser.add_subparsers(dest="command", required=True)
    runner = commands.add_parser("run", help="grade /autograder/submission (inside Gradescope)")
    runner.add_argument("--root", type=Path, default=Path("/autograder"))
    runner.add_argument(
        "--exercise", type=Path, default=exercise.KIT_ROOT, help="the exercise folder (default: the one beside this grader)"
    )
    args = parser.parse_args(argv)
    return run(args.root, args.exercise)


if __name__ == "__main__":
    sys.exit(main())
