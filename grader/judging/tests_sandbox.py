"""`pytest hidden_tests --submission F`: F runs in the sandbox. The trusted side's part of grader.core.tests_plugin.

The page brings its own provider and never imports this (it has no sandbox); `meteor-kit check`
and `grade` bring theirs too.
"""

from __future__ import annotations

import sys

import pytest

from grader.core import tests_plugin
from grader.core.runner import PROVIDER_KEY, SubmissionProvider
from grader.judging.discovery import read_source
from grader.sandbox.host import ISOLATION_NOTES, SandboxedSubmission, isolation, refusal


def pytest_configure(config: pytest.Config) -> None:
    tests_plugin.pytest_configure(config)
    if PROVIDER_KEY not in config.stash:
        config.stash[PROVIDER_KEY] = SubmissionProvider(lambda: _sandboxed(config))
        config.stash[tests_plugin.SANDBOXED_KEY] = True


def _require_isolation(config: pytest.Config) -> None:
    """Refuse (exit 2) where submissions could not be isolated, as `meteor-kit check` does."""
    mode = isolation()
    if mode == "none" and not config.getoption("--no-sandbox"):
        pytest.exit(refusal("pytest hidden_tests"), returncode=2)
    if ISOLATION_NOTES[mode]:
        print(ISOLATION_NOTES[mode], file=sys.stderr)


def _sandboxed(config: pytest.Config):
    _require_isolation(config)
    ex = tests_plugin.EXERCISE
    path = config.getoption("--submission") or tests_plugin.DEFAULT_SUBMISSION
    submission = SandboxedSubmission(
        path, ex.function, ex.call_timeout, source=read_source(path), budget=config.getoption("--budget")
    )
    config.add_cleanup(submission.close)
    return submission
