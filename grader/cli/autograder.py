"""Gradescope's autograder: a zip that runs this same grader on its fleet.

Gradescope unzips the autograder into /autograder/source, runs setup.sh there once as root
when it builds the image, then runs /autograder/run_autograder for each submission, with the
student's files in /autograder/submission, and reads /autograder/results/results.json.
The kit runs from /autograder/source itself, the exported exercise's problem/, hidden_tests/ and
solutions/ beside the grader's package (the exercise of `run --exercise`, by default that folder),
with pytest and hypothesis pinned in a venv of the system's Python. See docs/gradescope.md.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import stat
import sys
import tomllib
import traceback
import zipfile
from pathlib import Path
from typing import Any, NamedTuple

from grader.cli.exercise_option import add_exercise_option
from grader.core import exercise
from grader.reports.gradescope import GRADER_FAILED, clean, to_gradescope

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, as root, in /autograder/source, when it builds the autograder image.
set -euo pipefail
cd /autograder/source
export DEBIAN_FRONTEND=noninteractive
# Ubuntu 22.04's python3 is 3.10; the kit needs 3.11 (tomllib), which 22.04 ships in universe.
# bubblewrap is used when the container lets it create namespaces (Gradescope's usually does not).
apt-get update -qq
apt-get install -y -qq --no-install-recommends python3.11 python3.11-venv bubblewrap
/usr/bin/python3.11 -m venv /autograder/venv
/autograder/venv/bin/pip install --quiet --no-input --disable-pip-version-check -r requirements.txt
# Fail the build, not every submission, if the kit cannot start; build the diagnosis table now,
# not once per submission (each runs in a fresh copy of this image).
/autograder/venv/bin/python -c "from grader.core import exercise; from grader.judging import diagnose, grade; diagnose.browser_table(exercise.load('/autograder/source'))"
# Submissions run as an unprivileged uid. The kit holds the reference and the private tests
# (and the misconception models, which compute the score too): only root may read it, and what
# was written in it above. That uid may only reach the jail's own script, whose path it must open,
# and the one module the script imports.
chmod -R go= /autograder/source
chmod go=x /autograder/source /autograder/source/grader /autograder/source/grader/sandbox
chmod go=r /autograder/source/grader/sandbox/child.py /autograder/source/grader/sandbox/wire.py
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for each submission, as root; it writes /autograder/results/results.json.
set -euo pipefail
cd /autograder/source
# Hypothesis caches the constants of the modules it sees (the tests' among them) on disk:
# somewhere only root can read, not a .hypothesis/ in the kit.
mkdir -p -m 0700 /autograder/hypothesis
export HYPOTHESIS_STORAGE_DIRECTORY=/autograder/hypothesis
exec /autograder/venv/bin/python -m grader.cli.autograder run --root /autograder --exercise /autograder/source
"""

# What the zip carries besides the scripts: the engine's package and the exercise's folders, which the grader reads at run time.
ENGINE_PACKAGED = ("grader",)
EXERCISE_PACKAGED = ("hidden_tests", "problem", "solutions")  # solutions/: the reference and the seam's trusted modules
MAX_READ = 1_000_000  # bytes read of an upload to see whether it defines the function


class ExportError(Exception):
    """The zip cannot be made as the kit was tested."""


# Class-level tools the autograder never runs (it grades one upload): not installed on Gradescope.
NOT_IN_AUTOGRADER = {"copydetect", "pyyaml"}  # pyyaml: LMS downloads only (grader/judging/lms.py)


def requirements() -> str:
    """The runtime dependencies, pinned with everything they pull in, at the versions installed here."""
    from importlib import metadata

    from packaging.markers import default_environment
    from packaging.requirements import Requirement

    environment = {**default_environment(), "extra": ""}
    pins: dict[str, str] = {}
    with open(exercise.KIT_ROOT / "pyproject.toml", "rb") as f:
        todo = [Requirement(r) for r in tomllib.load(f)["project"]["dependencies"]]
    todo = [r for r in todo if r.name.lower() not in NOT_IN_AUTOGRADER]
    while todo:
        requirement = todo.pop()
        if requirement.marker and not requirement.marker.evaluate(environment):
            continue
        name = metadata.metadata(requirement.name)["Name"]
        if name.lower() in pins:
            continue
        version = metadata.version(name)
        if not requirement.specifier.contains(version, prereleases=True):
            raise ExportError(f"{name} {version} is installed, but the kit needs {requirement}: reinstall the kit's dependencies")
        pins[name.lower()] = f"{name}=={version}"
        todo += [Requirement(r) for r in metadata.requires(name) or []]
    return "".join(f"{pin}\n" for _, pin in sorted(pins.items()))


def export(out: Path, ex: exercise.Exercise) -> None:
    """Write the autograder zip of `ex`: setup.sh, run_autograder, the engine and the exercise, all at the zip's root."""
    pins = requirements()  # before the zip is opened: a refusal leaves no half-written file
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, text, mode in (
            ("setup.sh", SETUP_SH, 0o755),
            ("run_autograder", RUN_AUTOGRADER, 0o755),
            ("requirements.txt", pins, 0o644),
        ):
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFREG | mode) << 16
            zf.writestr(info, text)
        for root, items in ((exercise.ENGINE_ROOT, ENGINE_PACKAGED), (ex.root, EXERCISE_PACKAGED)):
            for item in items:
                _add(zf, root, item)


def _add(zf: zipfile.ZipFile, root: Path, item: str) -> None:
    """`root / item` (a folder, whole, or a file) into the zip, at its path in `root`."""
    path = root / item
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for file in files:
        if "__pycache__" in file.parts or file.suffix == ".pyc":
            continue
        zf.write(file, str(file.relative_to(root)))


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


def _grade(root: Path, ex: exercise.Exercise) -> dict:
    from grader.sandbox.host import enter_mode, unhide

    # Entered here, in the process that lives the whole run, so the permissions the
    # separate-uid mode takes are given back when it ends.
    mode = enter_mode("the autograder", False, [root / "submission", root / "results", ex.root])
    print(f"isolation: {mode}")  # stdout is for the instructor only (stdout_visibility)
    if mode is None:
        return _zero(GRADER_FAILED)
    try:
        return _grade_upload(root, ex)
    finally:
        unhide()


def _grade_upload(root: Path, ex: exercise.Exercise) -> dict:
    from grader.judging.grade import Settings, UsageError, discover, grade_all

    try:
        specs = discover([str(root / "submission")])
    except UsageError as exc:
        return _zero(f"No submission to grade: {exc}. Upload one .py or .ipynb file.")
    spec, problem, notes = pick(specs, ex.function, root / "submission")
    if spec is None:
        return _zero("\n".join([problem, *notes]))
    result = grade_all([spec], Settings(ex, ex.call_timeout, ex.budget), jobs=1)[0]
    # repr: a file name that is not UTF-8 holds lone surrogates, which stdout cannot encode.
    print(f"graded {spec.name!r}: {result['status']} {result['score']}/{result['max_score']} {result['message']!r}")
    document = to_gradescope(result, ex)
    if len(specs) > 1:
        said = [f"Graded {_shown(spec.path, root / 'submission')}.", *notes]
        document["output"] = clean("\n".join(said)) + "\n" + document["output"]
    return document


def _zero(output: str) -> dict:
    return {"score": 0.0, "execution_time": 0, "output": clean(output), "stdout_visibility": "hidden", "tests": []}


class Choice(NamedTuple):
    """The upload to grade (None: nothing), why there is none, and a sentence about each upload Python cannot read."""

    spec: Any
    problem: str
    notes: list[str]


def pick(specs: list, function: str, folder: Path) -> Choice:
    """The upload to grade: the one file that defines `function`, or why there is none."""
    files = [s for s in specs if s.path is not None and not s.problem]
    if len(specs) == 1:
        return Choice(specs[0], "", [])  # the grader explains what is wrong with a lone file
    defining, notes = [], []
    for s in files:
        found, unreadable = examine(s.path, function)
        if found:
            defining.append(s)
        if unreadable:
            name = _shown(s.path, folder)
            # What the student sees must name the file and say why, never "the autograder failed".
            notes.append(
                f"{name}: {unreadable}, though it seems to define {function}."
                if found
                else f"{name} was not considered: {unreadable}."
            )
    if len(defining) == 1:
        return Choice(defining[0], "", notes)
    names = ", ".join(_shown(s.path, folder) for s in (defining or files)) or "no readable file"
    if defining:
        return Choice(
            None,
            f"Several of your files define {function}: {names}. "
            f"Upload only the one to grade, or rename the function in the others.",
            notes,
        )
    return Choice(
        None,
        f"None of your files defines {function} (found: {names}). Upload the .py or .ipynb file with `def {function}(...)`.",
        notes,
    )


def _shown(path: Path, folder: Path) -> str:
    try:
        return clean(str(path.relative_to(folder)))
    except ValueError:
        return clean(path.name)


def defines(path: Path, function: str) -> bool:
    """Whether the file defines `function` at its top level (see `examine`)."""
    return examine(path, function)[0]


def examine(path: Path, function: str) -> tuple[bool, str]:
    """Whether the file defines `function` at its top level, and why Python cannot read it ("" if it can).

    Reads the file (never follows a link), never runs it. An import does not count: a student's
    own test file imports the function too. A file Python cannot parse counts when a line
    starts `def <function>`, as the student meant it to.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False, ""
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return False, ""
        data = f.read(MAX_READ)
    if path.suffix == ".ipynb":
        from grader.core.notebook import NotebookError, extract

        try:
            data = extract(data.decode("utf-8", "replace")).source.encode("utf-8")
        except NotebookError as exc:
            return False, str(exc)
    try:
        # bytes: decoded as CPython does, BOM and coding cookie included
        return function in _top_level_names(ast.parse(data).body), ""
    except Exception as exc:  # any failure to parse (MemoryError, RecursionError, ...) is said about the file
        text = data.decode("utf-8", "replace")
        found = re.search(rf"^\s*(?:async\s+)?def\s+{re.escape(function)}\b", text, re.MULTILINE) is not None
        return found, f"Python cannot read it ({_parse_failure(exc)})"


def _parse_failure(exc: Exception) -> str:
    """Why `ast.parse` failed, in a few words a student can act on."""
    # A deep expression overflows the parser's stack (MemoryError) or the tree's builder (RecursionError).
    if isinstance(exc, (MemoryError, RecursionError)) or "too many nested" in str(exc):
        return "its code is nested too deeply"
    if isinstance(exc, SyntaxError):
        return f"line {exc.lineno}: {exc.msg}"[:200]
    return (str(exc) or type(exc).__name__)[:200]


def _top_level_names(body: list[ast.stmt]) -> set[str]:
    names: set[str] = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
            for block in ("body", "orelse", "finalbody"):
                names |= _top_level_names(getattr(node, block, []))
            for handler in getattr(node, "handlers", []):
                names |= _top_level_names(handler.body)
    return names


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
