"""The engine's test plumbing (the `submission` fixture, tiers, the hypothesis profile) for this exercise."""

import sys

from grader.core.tests_plugin import *  # noqa: F403 - pytest reads the hooks and the fixture from this module

if sys.platform != "emscripten":  # outside the page, `pytest hidden_tests --submission F` runs F in the sandbox
    from grader.judging.tests_sandbox import pytest_configure  # noqa: F401
