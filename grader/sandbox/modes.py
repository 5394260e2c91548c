"""An isolation mode's interface: whether it works here, how it starts the jail, what it says a submission gets.

A mode is one module: bubblewrap.py (the full jail), separate_uid.py (root without a usable
bubblewrap: a chroot and uids of their own), unisolated.py (no privilege at all: --no-sandbox).
Each says whether it works here (`problem`), starts the fork server (`server`), gets ready
before any submission runs (`prepare`), and describes what a submission gets (`describe`).
isolation.py tries them in order and takes the first that works: a new mode is a module with a
subclass of Mode, and its place in isolation.order().
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Facts:
    """What this machine gives a cell, beyond the mode: the outputs describe a run with them."""

    namespaces: bool  # a cell can have its own pid, IPC and mount namespaces
    capped: tuple[str, ...]  # what its cgroup caps ("CPU", "memory", "processes"); () without a cgroup


class Mode(ABC):
    """One way of running the jail's fork server."""

    name: str  # as results.json and every output call it
    level: str  # "full" (the real jail), "reduced" (less than it: said loudly) or "none" (NOT ISOLATED)
    network: bool  # the jail has a network namespace of its own: its cells may open (loopback) sockets

    @abstractmethod
    def problem(self) -> str | None:
        """Why this mode cannot run here (None: it can), in the words of what failed."""

    @abstractmethod
    def server(self, config: dict[str, Any], root: bool) -> tuple[list[str], dict[str, Any]]:
        """The command that starts the fork server, and Popen's extra arguments; adds to the server's `config`."""

    def prepare(self, hidden: list[Path], create: tuple[Path, ...] = ()) -> None:  # noqa: B027 - most modes need nothing
        """Before any submission runs: make `create`'s folders, hide `hidden` where the mode has to."""

    @abstractmethod
    def describe(self, facts: Facts) -> str:
        """What each submission gets, in one paragraph."""


def facts() -> Facts:
    from grader.sandbox import cgroups

    found = cgroups.available()
    roles = found.roles if found is not None else set()
    capped = tuple(what for role, what in (("cpu", "CPU"), ("memory", "memory"), ("pids", "processes")) if role in roles)
    return Facts(namespaces=os.getuid() == 0 and namespaces_here(), capped=capped)


def cgroup_text(facts: Facts) -> str:
    if facts.capped:
        return f"a cgroup of its own capping its {', '.join(facts.capped)} in all"
    return "no cgroup (none can be made here: its CPU, memory and processes are capped per process, by rlimits)"


@cache
def namespaces_here() -> bool:
    """Whether this process may make the namespaces a cell needs (root outside a container that forbids them)."""
    import ctypes

    pid = os.fork()
    if pid == 0:
        flags = 0x20000000 | 0x8000000 | 0x20000 | 0x4000000  # CLONE_NEWPID | NEWIPC | NEWNS | NEWUTS
        os._exit(0 if ctypes.CDLL(None, use_errno=True).unshare(flags) == 0 else 1)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
