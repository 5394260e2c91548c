"""`pytest hidden_tests --submission F`: F runs in the sandbox. The trusted side's part of grader.core.tests_plugin.

A pytest plugin the installed kit registers (the `pytest11` entry point in pyproject.toml), so
an exercise's conftest imports the core alone. It acts only in a session where an exercise's
plugin is active and nothing else brought a submission: the page has no sandbox and no entry
points, and `meteor-kit check` and `grade` bring their own provider. In any other pytest
session (the kit's own tests) it does nothing, and imports nothing until it must. The tests
run public tiers first, then the secret ones, a tier with `fresh_child` from a fresh child of
the same sandbox (runner.SubmissionProvider, Exercise.stages). The exercise is the one whose folder holds the
conftest (tests_plugin.exercise_of), wherever it is.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest


@pytest.hookimpl(trylast=True)  # after the exercise's own pytest_configure, and any provider's
def pytest_configure(config: pytest.Config) -> None:
    tests_plugin = sys.modules.get("grader.core.tests_plugin")
    if tests_plugin is None or not any(
        getattr(p, "submission", None) is tests_plugin.submission for p in config.pluginmanager.get_plugins()
    ):
        return  # not an exercise's hidden tests
    from grader.core.runner import PROVIDER_KEY, SubmissionProvider

    if PROVIDER_KEY not in config.stash:
        config.stash[PROVIDER_KEY] = SubmissionProvider(lambda: _sandboxed(config))
        config.stash[tests_plugin.SANDBOXED_KEY] = True


def _require_isolation(config: pytest.Config, hidden: list[Path]) -> None:
    """Refuse (exit 2) where submissions could not be isolated, as `meteor-kit check` does; `hidden`: what the
    jails must not read besides the kit (the exercise, the submission)."""
    from grader.sandbox.host import enter_mode, isolation, refusal

    if isolation() == "none" and not config.getoption("--no-sandbox"):
        pytest.exit(refusal("pytest hidden_tests"), returncode=2)
    enter_mode("pytest hidden_tests", True, hidden)


def _sandboxed(config: pytest.Config):
    from grader.core import tests_plugin
    from grader.judging.discovery import read_source
    from grader.sandbox.host import SandboxedSubmission

    ex = tests_plugin.exercise_of(config)
    path = config.getoption("--submission") or ex.root / tests_plugin.DEFAULT_SUBMISSION
    _require_isolation(config, [ex.root, Path(path)])
    submission = SandboxedSubmission.of(ex, path, read_source(path), tests_plugin.budget(config))
    config.add_cleanup(submission.close)
    return submission
