"""The code's boundaries, held by tools: import-linter's contracts (pyproject.toml) and ruff."""

from __future__ import annotations

import subprocess
import sys
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
    sneaky.write_text(textwrap.dedent("""
        def later():
            from grader.judging import grade
            return grade
    """))
    done = subprocess.run([str(BIN / "lint-imports"), "--no-cache"], cwd=kit, capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(kit), "PATH": "/usr/bin:/bin"})
    assert done.returncode != 0
    assert "grader.core.sneaky -> grader.judging.grade" in done.stdout

