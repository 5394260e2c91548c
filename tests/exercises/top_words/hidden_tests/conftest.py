"""The engine's test plumbing (the `submission` fixture, tiers, the hypothesis profile). Keep it as it is."""

from grader.core.tests_plugin import *  # noqa: F403 - pytest reads the hooks and the fixture from this module
