"""tests/conftest.py's rule: a test that needs root is skipped for anyone else, with its reason;
as root every test runs, and a run that skipped one fails. Checked on a suite of two tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import KIT_ROOT, as_nobody

SUITE = """
import pytest

@pytest.mark.needs_root("it binds a file over bwrap")
def test_that_needs_root():
    pass

@pytest.mark.skip(reason="skipped on purpose")
def test_that_is_skipped():
    pass

def test_plain():
    pass
"""
# The rule's hooks, taken from the kit's conftest by a suite that lives outside tests/.
CONFTEST = "from tests.conftest import pytest_collection_modifyitems, pytest_configure, pytest_sessionfinish  # noqa: F401\n"


@pytest.fixture
def suite(tmp_path):
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_suite.py").write_text(SUITE)
    tmp_path.chmod(0o755)  # its own: pytest's parents of it stay closed, and as_nobody shows it
    return tmp_path


def _pytest(folder: Path, *options: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-p", "no:xdist", *options, str(folder)]


@pytest.mark.needs_root("it runs pytest as uid 65534")
def test_a_test_that_needs_root_is_skipped_with_its_reason_for_anyone_else(suite):
    run = subprocess.run(
        as_nobody(_pytest(suite, "-k", "not is_skipped"), sees=(suite,)), capture_output=True, text=True, cwd=KIT_ROOT
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "needs root: it binds a file over bwrap" in run.stdout
    assert "1 passed, 1 skipped" in run.stdout
    assert "as root every test runs" not in run.stdout


@pytest.mark.needs_root("the rule it checks holds for root only")
def test_as_root_a_run_that_skipped_a_test_fails_and_names_it(suite):
    run = subprocess.run(_pytest(suite), capture_output=True, text=True, cwd=KIT_ROOT)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "2 passed, 1 skipped" in run.stdout
    assert "as root every test runs, and 1 were skipped" in run.stdout
    assert "test_suite.py::test_that_is_skipped: skipped on purpose" in run.stdout
    everything_ran = subprocess.run(_pytest(suite, "-k", "not is_skipped"), capture_output=True, text=True, cwd=KIT_ROOT)
    assert everything_ran.returncode == 0, everything_ran.stdout
