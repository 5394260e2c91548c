"""Which isolation works here, what each mode means, and refusing to run submissions without one."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from grader.sandbox.interpreter import PYTHON
from grader.sandbox.mounts import bwrap_mounts, bwrap_user
from grader.sandbox.separate_uid import STATE_DIRS, kit_paths, prepare_separate_uid, with_journal


@dataclass(frozen=True)
class Probe:
    mode: str  # "bubblewrap", "separate-uid" (root without a usable bubblewrap) or "none"
    problem: str = ""  # why bubblewrap is not used: its own error, as it printed it


@cache
def probe() -> Probe:
    """Which isolation works here, trying bubblewrap exactly as the jail runs it."""
    root = os.getuid() == 0
    for place in STATE_DIRS if root else ():
        if (place / "hidden.json").is_file() and not (place / "hidden.json").is_symlink():
            try:
                with_journal(lambda journal: None, place)  # give back what a killed run could not
            except OSError:
                pass  # a place this run cannot write to (state_dir() then takes the next)
    fallback = "separate-uid" if root else "none"
    bwrap = shutil.which("bwrap")
    if not bwrap:
        return Probe(fallback, "bubblewrap is not installed (no bwrap command on PATH)")
    try:
        run = subprocess.run(
            [bwrap, *bwrap_mounts(), *bwrap_user(root), "--", str(PYTHON), "-I", "-S", "-c", "pass"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={},
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return Probe(fallback, f"{bwrap} could not run: {exc}")
    if run.returncode == 0:
        return Probe("bubblewrap")
    said = " ".join(run.stderr.decode("utf-8", "replace").split())[:300]
    return Probe(fallback, f"{bwrap} is installed but fails here: {said or f'exit status {run.returncode}, no message'}")


def isolation() -> str:
    """ "bubblewrap" when the real jail works here; else "separate-uid" as root, "none" otherwise."""
    return probe().mode


@cache
def namespaces_here() -> bool:
    """Whether this process may make the namespaces a cell needs (root outside a container that forbids them)."""
    import ctypes

    pid = os.fork()
    if pid == 0:
        flags = 0x20000000 | 0x8000000 | 0x20000 | 0x4000000  # CLONE_NEWPID | NEWIPC | NEWNS | NEWUTS
        os._exit(0 if ctypes.CDLL(None, use_errno=True).unshare(flags) == 0 else 1)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0


def isolation_note(mode: str | None = None) -> str:
    """What each submission gets in this mode on this machine, in one paragraph (empty: the full jail, nothing to say)."""
    from grader.sandbox import cgroups

    mode = mode or isolation()
    found = cgroups.available()
    roles = found.roles if found is not None else set()
    capped = [what for role, what in (("cpu", "CPU"), ("memory", "memory"), ("pids", "processes")) if role in roles]
    if capped:
        cgroup = f"a cgroup of its own capping its {', '.join(capped)} in all"
    else:
        cgroup = "no cgroup (none can be made here: its CPU, memory and processes are capped per process, by rlimits)"
    if mode == "bubblewrap":
        return "" if len(capped) == 3 else f"isolation: bubblewrap, with {cgroup}."
    if mode == "separate-uid" and namespaces_here():
        return (
            "isolation: separate-uid (root without a usable bubblewrap). Each submission runs in a cell of its own: "
            "a uid nobody else holds, its own pid, IPC and mount namespaces, a size-capped tmpfs for /tmp, /var/tmp "
            f"and /dev/shm, a root directory holding only the standard library, a seccomp filter and {cgroup}; the kit, "
            "the class folder and the output folder are also unreadable to it during the run. Without a network "
            "namespace, it refuses every socket."
        )
    if mode == "separate-uid":
        return (
            "isolation: separate-uid in a container that allows no namespace (as on Gradescope). Each submission runs "
            "as a uid nobody else holds, in a root directory holding only the standard library with no writable "
            "folder, under a seccomp filter that also refuses sockets, System V and POSIX IPC and the kernel's "
            f"keyrings, with {cgroup}; every process of its uid is killed when it ends. The kit, the class folder and "
            "the output folder are unreadable to it during the run."
        )
    return (
        "NOT ISOLATED (--no-sandbox): submissions ran as you, with rlimits and a seccomp filter only. They could read "
        "the hidden tests, the reference solution, other submissions and your files, and use the network."
    )


def refusal(command: str) -> str:
    """Why `command` will not run submissions here, and what would fix it (not root, no usable bubblewrap)."""
    problem = probe().problem
    if shutil.which("bwrap"):
        fix = (
            "allow unprivileged user namespaces, e.g. `sudo sysctl kernel.unprivileged_userns_clone=1` "
            "(Debian) or `sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0` (Ubuntu 23.10 and "
            "later); in a container, allow user namespaces (or run the grader as root)"
        )
    else:
        fix = "install bubblewrap (`sudo apt-get install bubblewrap`)"
    return (
        f"{command}: refusing to run submissions without isolation: {problem}.\n"
        f"To fix it, {fix}.\n"
        f"To run anyway, NOT isolated (a submission can then read the hidden tests and your files), "
        f"pass --no-sandbox."
    )


def enter_mode(command: str, allow_none: bool, hidden: list[Path], create: tuple[Path, ...] = ()) -> str | None:
    """The isolation mode of this run, said on stderr when it is less than bubblewrap; None when it must refuse.

    In separate-uid mode, the kit and `hidden` are made unreadable to the jails first (`create`:
    folders to make before that, such as --out).
    """
    mode = isolation()
    if mode == "none" and not allow_none:
        print(refusal(command), file=sys.stderr)
        return None
    if isolation_note(mode):
        print(isolation_note(mode), file=sys.stderr)
    if mode == "separate-uid":
        for folder in create:
            folder.mkdir(parents=True, exist_ok=True)
        prepare_separate_uid([*kit_paths(), *hidden])
    return mode
