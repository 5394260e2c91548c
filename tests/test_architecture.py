"""The code's boundaries, held by tools: import-linter's contracts (pyproject.toml) and ruff."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

from conftest import BIN, KIT_ROOT


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "lint-imports"), "--no-cache"], cwd=root, capture_output=True, text=True, timeout=300)


def test_the_import_contracts_are_kept():
    done = lint_imports(KIT_ROOT)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_a_function_level_import_against_the_direction_breaks_a_contract(tmp_path):
    """The contracts are not vacuous: the core reaching up to judging, inside a function, is caught."""
    kit = tmp_path / "kit"
    (kit / "grader").mkdir(parents=True)
    subprocess.run(["cp", "-r", str(KIT_ROOT / "grader"), str(kit)], check=True)
    (kit / "pyproject.toml").write_text((KIT_ROOT / "pyproject.toml").read_text())
    sneaky = kit / "grader" / "core" / "sneaky.py"
    sneaky.write_text(
        textwrap.dedent("""
        def later():
            from grader.judging import grade
            return grade
    """)
    )
    done = subprocess.run(
        [str(BIN / "lint-imports"), "--no-cache"],
        cwd=kit,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(kit), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode != 0
    assert "grader.core.sneaky -> grader.judging.grade" in done.stdout


PATH_OF_ONE_SUBMISSION = (
    "grader/cli/grade.py",
    "grader/judging/pipeline.py",
    "grader/judging/grade.py",
    "grader/reports/files.py",
)


def test_the_path_of_one_submission_reads_in_four_files_and_under_800_lines():
    """From `grade` to a submission's line in results.json, as docs/architecture.md names the files."""
    named = (KIT_ROOT / "docs" / "architecture.md").read_text()
    assert all(f"`{path.removeprefix('grader/')}`" in named for path in PATH_OF_ONE_SUBMISSION)
    texts = {path: (KIT_ROOT / path).read_text() for path in PATH_OF_ONE_SUBMISSION}
    command, pipeline, pool, files = texts.values()
    # Each file hands the submission to the next: the command to the pipeline, the pipeline to the
    # pool and then to the writers, the pool to each worker's Grader.
    assert "grade_class(" in command and "def grade_class(" in pipeline
    assert "grade_all(" in pipeline and "def grade_all(" in pool and "class Grader:" in pool
    assert "write_outputs(" in pipeline and "def write_outputs(" in files and "results_json(" in files
    lines = {path: text.count("\n") for path, text in texts.items()}
    assert sum(lines.values()) <= 800, lines


def test_ruff_finds_nothing_and_the_code_is_formatted():
    for command in (["check", "--no-cache", "."], ["format", "--check", "--no-cache", "."]):
        done = subprocess.run([str(BIN / "ruff"), *command], cwd=KIT_ROOT, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"ruff {command[0]}:\n{done.stdout[-4000:]}"


def test_the_exercise_reaches_the_engine_only_through_the_core():
    """problem/, solutions/ and hidden_tests/, of both exercises, import nothing from grader/ but grader.core.

    No exception: the sandboxed provider of `pytest hidden_tests` is the installed kit's pytest
    plugin. A module named in a string (pytest_plugins, importlib) counts as an import.
    """
    import ast
    import re

    by_name = re.compile(r"grader\.[\w.]+")
    offenders = []
    for exercise_root in (KIT_ROOT, KIT_ROOT / "tests" / "exercises" / "wer"):
        for folder in ("problem", "solutions", "hidden_tests"):
            for path in sorted((exercise_root / folder).rglob("*.py")):
                for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                    names = []
                    if isinstance(node, ast.ImportFrom) and node.module:
                        names = [node.module] if node.module != "grader" else [f"grader.{a.name}" for a in node.names]
                    elif isinstance(node, ast.Import):
                        names = [a.name for a in node.names]
                    elif isinstance(node, ast.Constant) and isinstance(node.value, str) and by_name.fullmatch(node.value):
                        names = [node.value]
                    offenders += [
                        f"{path.relative_to(KIT_ROOT)}: {n}"
                        for n in names
                        if n.startswith("grader") and not n.startswith("grader.core")
                    ]
    assert not offenders, offenders


def test_the_installed_sandbox_plugin_is_loaded_everywhere_and_inert_outside_an_exercises_tests(tmp_path):
    """The pytest11 entry point loads grader.judging.tests_sandbox in every session: it must touch nothing there."""
    (tmp_path / "test_other.py").write_text(
        "import sys\n"
        "def test_nothing_of_the_kit_is_loaded():\n"
        "    assert 'grader.judging.tests_sandbox' in sys.modules  # the entry point is registered\n"
        "    loaded = [m for m in ('grader.core.tests_plugin', 'grader.sandbox.host', 'hypothesis') if m in sys.modules]\n"
        "    assert not loaded, loaded\n"
    )
    done = subprocess.run(
        [str(BIN / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
