"""Gradescope: its results format, and an autograder zip that runs this same grader on its fleet.

`run` is what the zip's run_autograder calls inside Gradescope's container: it grades the
one submission in /autograder/submission (or $AUTOGRADER_ROOT/submission, for testing)
and writes /autograder/results/results.json.
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys
import zipfile
from pathlib import Path

from grader import exercise

# Students see examples, hidden and properties tests (their names and messages) at once;
# private tests only once the instructor publishes the grades.
VISIBILITY = {"examples": "visible", "hidden": "visible", "properties": "visible", "private": "after_published"}

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once when it builds the autograder image.
set -euo pipefail
cd /autograder/source
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq bubblewrap python3-venv python3-pip >/dev/null || apt-get install -y -qq bubblewrap
PYTHON=""
for candidate in python3.13 python3.12 python3.11; do
  if command -v "$candidate" >/dev/null; then PYTHON="$candidate"; break; fi
done
if [ -z "$PYTHON" ]; then
  apt-get install -y -qq software-properties-common >/dev/null
  add-apt-repository -y ppa:deadsnakes/ppa
  apt-get update -qq
  apt-get install -y -qq python3.11 python3.11-venv >/dev/null
  PYTHON=python3.11
fi
"$PYTHON" -m venv /autograder/venv
/autograder/venv/bin/pip install -q /autograder/source
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for each submission. AUTOGRADER_ROOT and AUTOGRADER_PYTHON exist for tests.
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
PYTHON="${AUTOGRADER_PYTHON:-$ROOT/venv/bin/python}"
cd "$ROOT/source"
exec "$PYTHON" -m grader.gradescope run --root "$ROOT"
"""

# What the zip carries: the kit itself, so Gradescope runs the same grader and tests.
PACKAGED = ("grader", "hidden_tests", "problem", "solutions/reference.py", "pyproject.toml", "README.md")


def to_gradescope(result: dict) -> dict:
    """One submission's result in Gradescope's results.json format."""
    tests = []
    for number, test in enumerate(result["tests"], start=1):
        lines = [test["message"]] if test["message"] else []
        if test["output"]:
            lines.append("printed:\n" + test["output"])
        tests.append({
            "name": f"{test['tier']}: {test['name']}",
            "number": str(number),
            "score": test["score"],
            "max_score": test["max_score"],
            "status": "passed" if test["status"] == "pass" else "failed",
            "output": "\n".join(lines),
            "visibility": VISIBILITY.get(test["tier"], "hidden"),
        })
    return {
        "score": result["score"],
        "execution_time": round(result.get("duration", 0.0)),
        "output": result["message"] or f"{result['passed']}/{len(result['tests'])} tests passed",
        "tests": tests,
    }


def export(out: Path) -> None:
    """Write the autograder zip: setup.sh, run_autograder, and the kit's source."""
    root = exercise.KIT_ROOT
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, text in (("setup.sh", SETUP_SH), ("run_autograder", RUN_AUTOGRADER)):
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFREG | 0o755) << 16
            zf.writestr(info, text)
        for item in PACKAGED:
            path = root / item
            files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
            for file in files:
                if "__pycache__" in file.parts or file.suffix == ".pyc":
                    continue
                zf.write(file, f"source/{file.relative_to(root)}")


def run(root: Path) -> int:
    """Grade the submission Gradescope put under `root` and write its results.json there."""
    from grader.grade import Settings, discover, grade_all, UsageError

    results_dir = root / "results"
    results_dir.mkdir(parents=True, exist_ok=True)
    ex = exercise.load()
    try:
        specs = discover([str(root / "submission")])
    except UsageError as exc:
        document = {"score": 0, "output": f"No submission to grade: {exc}. Upload one .py or .ipynb file.", "tests": []}
    else:
        spec = _pick(specs)
        result = grade_all([spec], Settings(ex.call_timeout, ex.budget), jobs=1)[0]
        document = to_gradescope(result)
        if len(specs) > 1:
            document["output"] = f"graded {spec.path.name if spec.path else spec.name} (of {len(specs)} files)\n" + document["output"]
    (results_dir / "results.json").write_text(json.dumps(document, indent=2), encoding="utf-8")
    return 0


def _pick(specs):
    """With several files uploaded, the one that looks like the solution."""
    for spec in specs:
        if spec.path is not None and spec.path.suffix == ".py" and "meteor" in spec.path.name.lower():
            return spec
    return specs[0]


def cmd_export(args: argparse.Namespace) -> int:
    export(args.out)
    print(f"wrote {args.out}: upload it as the autograder of a Gradescope programming assignment")
    return 0


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("export-gradescope", help="write a Gradescope autograder zip that runs this grader")
    parser.add_argument("--out", type=Path, default=Path("autograder.zip"), help="the zip to write (default autograder.zip)")
    parser.set_defaults(func=cmd_export)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader.gradescope")
    commands = parser.add_subparsers(dest="command", required=True)
    runner = commands.add_parser("run", help="grade /autograder/submission (inside Gradescope)")
    runner.add_argument("--root", type=Path, default=Path(os.environ.get("AUTOGRADER_ROOT", "/autograder")))
    args = parser.parse_args(argv)
    return run(args.root)


if __name__ == "__main__":
    sys.exit(main())
