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


def test_ruff_finds_nothing_and_the_code_is_formatted():
    for command in (["check", "--no-cache", "."], ["format", "--check", "--no-cache", "."]):
        done = subprocess.run([str(BIN / "ruff"), *command], cwd=KIT_ROOT, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"ruff {command[0]}:\n{done.stdout[-4000:]}"


ALLOWED = {"grader.judging.tests_sandbox"}


def test_the_exercise_reaches_the_engine_only_through_the_core():
    """problem/, solutions/ and hidden_tests/ import nothing from grader/ but grader.core (the seam's side).

    One exception, named here: the conftest's sandboxed plugin, imported outside the page only.
    """
    import ast

    offenders = []
    for folder in ("problem", "solutions", "hidden_tests"):
        for path in sorted((KIT_ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = []
                if isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module] if node.module != "grader" else [f"grader.{a.name}" for a in node.names]
                elif isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                offenders += [
                    f"{path.relative_to(KIT_ROOT)}: {n}"
                    for n in names
                    if n.startswith("grader") and not n.startswith("grader.core") and n not in ALLOWED
                ]
    assert not offenders, offenders
