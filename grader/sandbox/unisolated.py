"""The none mode: no privilege and no usable bubblewrap, run only when asked (--no-sandbox), and said loudly everywhere.

The fork server runs as the grader's own user, a child subreaper that kills only its own
descendants. Each submission still gets rlimits and the seccomp filter, and nothing else.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from grader.sandbox import wire
from grader.sandbox.interpreter import PYTHON
from grader.sandbox.modes import Facts, Mode

CHILD = Path(__file__).with_name("child.py")


class Unisolated(Mode):
    name = "none"
    level = "none"
    network = False  # the machine's own network: no socket is allowed at all

    def problem(self) -> str | None:
        return None

    def server(self, config: dict[str, Any], root: bool) -> tuple[list[str], dict[str, Any]]:
        config["cell"]["namespaces"] = False
        config["parent"] = os.getpid()
        # Without a uid of its own, RLIMIT_NPROC counts all of the grader user's processes.
        config["limits"]["RLIMIT_NPROC"] += own_process_count()
        return [str(PYTHON), "-I", "-S", str(CHILD)], {"cwd": "/"}

    def describe(self, facts: Facts) -> str:
        return (
            "NOT ISOLATED (--no-sandbox): submissions ran as you, with rlimits and a seccomp filter only. They could "
            "read the hidden tests, the reference solution, other submissions and your files."
        )


def own_process_count() -> int:
    """Processes of our real uid, which RLIMIT_NPROC counts (zombies too)."""
    uid = os.getuid()
    return sum(p.uid == uid for p in wire.processes())
