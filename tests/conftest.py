"""Shared fixtures of the kit's own tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

KIT_ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def load_module(path: Path, name: str | None = None):
    """Import a .py file as a fresh module (for trusted code: the reference, the catalogue)."""
    spec = importlib.util.spec_from_file_location(name or path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def kit_root() -> Path:
    return KIT_ROOT


@pytest.fixture(scope="session")
def reference():
    return load_module(KIT_ROOT / "solutions" / "reference.py", "meteor_reference")


@pytest.fixture(scope="session")
def meteor_kit() -> Path:
    """The installed `meteor-kit` command of the environment running these tests."""
    return BIN / "meteor-kit"
