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


# `make test` runs these modules alone (`-m serial`), after the others have run two at a time
# (`-n 2 -m "not serial"`): each drives Chromium, or asserts a time limit, a budget or a speed, and
# would fail or slow down under the other worker's load. A module not named here must pass next to
# any other one.
SERIAL = {
    "test_web_e2e": "Chromium; the page's own budgets and timeouts",
    "test_web_warm_up": "Chromium; a run that must outlast a slow warm-up within its budget",
    "test_second_exercise": "Chromium runs the second exercise's page",
    "test_class_report": "Chromium; a class of 1000 opens in under 2 s",
    "test_feedback": "Chromium",
    "test_grade_hostile": "--timeout 1 --budget 5 on the hostile corpus (make test-debian too)",
    "test_hostile_class": "the hostile corpus under time limits",
    "test_sandbox": "the jail's time limits",
    "test_wire": "the jail's time limits",
    "test_total_budget": "a submission's whole budget",
    "test_grade_speed": "speeds measured against each other",
    "test_direct_run": "two runs of each submission compared, each under the jail's time limits",
    "test_grade_survives": "a Ctrl+C sent after a fixed sleep, in a class whose students sleep",
}


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects: it reads the marks added here
def pytest_collection_modifyitems(items):
    for item in items:
        module = item.path.stem
        if module in SERIAL:
            item.add_marker(pytest.mark.serial)
        elif _shares_a_module_fixture(item):
            # Under xdist a module-scoped fixture is made once per worker: a module whose tests share
            # one (a class graded once) stays on one worker, while other tests spread one by one.
            item.add_marker(pytest.mark.xdist_group(module))


def _shares_a_module_fixture(item) -> bool:
    definitions = item._fixtureinfo.name2fixturedefs.values()
    return any(d.scope in ("module", "class", "package") for defs in definitions for d in defs)
