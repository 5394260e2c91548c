"""The engine's test plumbing (the `submission` fixture, tiers, the hypothesis profile) for this exercise.

Outside the page, `pytest hidden_tests --submission F` runs F in the sandbox: the installed kit's
pytest plugin (grader.judging.tests_sandbox) provides it. The exercise imports the core only.
"""

from grader.core.tests_plugin import *  # noqa: F403 - pytest reads the hooks and the fixture from this module
