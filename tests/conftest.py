"""Shared fixtures of the kit's own tests."""

from __future__ import annotations

import importlib.util
import os
import shlex
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


# A test that only root can run says so: `@pytest.mark.needs_root("why")`. Anyone else sees it
# skipped, with the reason (pytest_collection_modifyitems); root runs every test, and a run as
# root that skipped any test fails (pytest_sessionfinish): CI runs as root, with everything
# installed, and skips none.
def pytest_configure(config):
    config.addinivalue_line("markers", "needs_root(reason): runs only as root; skipped, with the reason, for anyone else")


# The mode for root without a usable bubblewrap: each submission runs as a uid of its own.
SEPARATE_UID = pytest.param(
    "separate-uid", marks=pytest.mark.needs_root("separate-uid mode runs submissions as uids only root can give")
)


def pytest_sessionfinish(session):
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if os.geteuid() != 0 or reporter is None or hasattr(session.config, "workerinput"):
        return
    skipped = reporter.stats.get("skipped", [])
    if skipped:
        reporter.write_sep("=", f"as root every test runs, and {len(skipped)} were skipped", red=True)
        for report in skipped:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
            reporter.write_line(f"{report.nodeid}: {reason.removeprefix('Skipped: ')}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# Folders a command run as another uid must see: the kit (a clone under /root, mode 700 on
# Debian, is one) and the Python that runs the tests, its venv and the prefix it was made from.
NEEDED_BY_THE_KIT = (KIT_ROOT, Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).resolve().parent)


def as_nobody(command: list[str], sees: tuple[Path, ...] = ()) -> list[str]:
    """`command` run as uid 65534 in a mount namespace of its own, where the kit can be read.

    Every folder of NEEDED_BY_THE_KIT and `sees` whose ancestor others cannot enter (such as /root)
    is bound back, as it is, inside a tmpfs of mode 0711 laid over that ancestor: nothing of the
    real tree changes, and nothing else of the ancestor shows. Root only (`needs_root`).
    """
    assert os.geteuid() == 0, "as_nobody needs root: mark the test @pytest.mark.needs_root"
    wanted = sorted({p.resolve() for p in (*NEEDED_BY_THE_KIT, *sees) if p.exists()})
    wanted = [p for p in wanted if not any(p != q and p.is_relative_to(q) for q in wanted)]
    covers = {}
    for path in wanted:
        closed = next((a for a in reversed(path.parents) if not a.stat().st_mode & 0o001), None)
        if closed is not None:
            covers.setdefault(closed, []).append(path)
    script = ["set -e", 'stage="$(mktemp -d)"']
    shown = [p for paths in covers.values() for p in paths]
    for i, path in enumerate(shown):  # held before the tmpfs hides them
        script += [f'mkdir "$stage/{i}"', f'mount --bind {shlex.quote(str(path))} "$stage/{i}"']
    script += [f"mount -t tmpfs -o mode=0711 tmpfs {shlex.quote(str(closed))}" for closed in covers]
    for i, path in enumerate(shown):
        where = shlex.quote(str(path))
        script += [f"mkdir -p {where}", f'mount --bind "$stage/{i}" {where}', f'umount "$stage/{i}"', f'rmdir "$stage/{i}"']
    script += ['rmdir "$stage"', 'exec setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"']
    return ["unshare", "-m", "--propagation", "private", "sh", "-c", "\n".join(script), "as_nobody", *command]


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
    "test_cells": "the jail's time limits, spinners on one core",
    "test_neighbours": "a correct file beside a CPU hog, graded for real in every mode",
    "test_wire": "the jail's time limits",
    "test_total_budget": "a submission's whole budget",
    "test_grade_speed": "speeds measured against each other",
    "test_memo_walk": "the memo's batches counted, and a full run's whole budget",
    "test_direct_run": "two runs of each submission compared, each under the jail's time limits",
    "test_grade_survives": "a Ctrl+C sent after a fixed sleep, in a class whose students sleep",
}


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects: it reads the marks added here
def pytest_collection_modifyitems(items):
    for item in items:
        needs_root = item.get_closest_marker("needs_root")
        if needs_root is not None and os.geteuid() != 0:
            item.add_marker(pytest.mark.skip(reason=f"needs root: {needs_root.args[0]}"))
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
