"""The bubblewrap mode, the full jail: the interpreter's trees read-only, the rest of the machine left out.

Its own network, pid, IPC and UTS namespaces, no environment of the grader, no view of the kit,
the class or any other file. As root the fork server is root inside it and each child takes a
uid of its own; unprivileged, a user namespace maps our one uid to its root (see bwrap_user).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from grader.sandbox.interpreter import PYTHON, Interpreter, interpreter
from grader.sandbox.modes import Facts, Mode, cgroup_text

CHILD = Path(__file__).with_name("child.py")
WIRE = Path(__file__).with_name("wire.py")  # bound beside the child in the jail: the one module it imports


class Bubblewrap(Mode):
    name = "bubblewrap"
    level = "full"
    network = True  # the jail's own network namespace: loopback only

    def problem(self) -> str | None:
        """None if bubblewrap runs here exactly as the jail runs it; else its own error."""
        bwrap = shutil.which("bwrap")
        if not bwrap:
            return "bubblewrap is not installed (no bwrap command on PATH)"
        root = os.getuid() == 0
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
            return f"{bwrap} could not run: {exc}"
        if run.returncode == 0:
            return None
        said = " ".join(run.stderr.decode("utf-8", "replace").split())[:300]
        return f"{bwrap} is installed but fails here: {said or f'exit status {run.returncode}, no message'}"

    def server(self, config: dict[str, Any], root: bool) -> tuple[list[str], dict[str, Any]]:
        # Its cells get namespaces as the user namespace's root, a /proc of their own, the rest read-only.
        config["cell"].update(namespaces=True, proc=True, read_only=["/", "/dev"])
        argv = [
            shutil.which("bwrap") or "bwrap",
            *bwrap_mounts(),
            *bwrap_user(root),
            "--ro-bind",
            str(CHILD),
            "/jail/jail_child.py",
            "--ro-bind",
            str(WIRE),
            "/jail/wire.py",
            "--perms",
            "1777",
            "--dir",
            "/tmp",
            "--perms",
            "1777",
            "--dir",
            "/var/tmp",
            "--chdir",
            "/tmp",
            "--",
            str(PYTHON),
            "-I",
            "-S",
            "/jail/jail_child.py",
        ]
        return argv, {}

    def describe(self, facts: Facts) -> str:
        return (
            "isolation: bubblewrap. Each submission runs in a cell of its own: its own pid, IPC, mount and UTS "
            "namespaces and /proc, a size-capped tmpfs for /tmp, /var/tmp and /dev/shm, the rest of the file system "
            f"read-only, {'a uid nobody else holds' if os.getuid() == 0 else 'no capability'}, a seccomp filter and "
            f"{cgroup_text(facts)}, in a jail with no network and no view of the grader's files."
        )


def fix() -> str:
    """What would make bubblewrap work here, for the refusal's message."""
    if shutil.which("bwrap"):
        return (
            "allow unprivileged user namespaces, e.g. `sudo sysctl kernel.unprivileged_userns_clone=1` "
            "(Debian) or `sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0` (Ubuntu 23.10 and "
            "later); in a container, allow user namespaces (or run the grader as root)"
        )
    return "install bubblewrap (`sudo apt-get install bubblewrap`)"


def bwrap_mounts(described: Interpreter | None = None) -> list[str]:
    described = described or interpreter()
    args = []
    for root in described.roots:
        # bubblewrap creates the parents of a bind as root-only directories; an unprivileged uid
        # must be able to walk to the interpreter (pyenv keeps it under /root).
        for parent in reversed(root.parents[:-1]):
            args += ["--perms", "0755", "--dir", str(parent)]
        args += ["--ro-bind", str(root), str(root)]
    for name in ("bin", "lib", "lib32", "lib64", "libx32"):
        top = Path("/") / name
        if top.is_symlink():  # merged /usr (Debian 12, Ubuntu 22.04): /lib -> usr/lib
            args += ["--symlink", os.readlink(top), str(top)]
        elif top.is_dir():
            args += ["--ro-bind", str(top), str(top)]
    for path in described.hidden:
        args += ["--tmpfs", str(path)]
    return [
        *args,
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--unshare-ipc",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-uts",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
        "--setenv",
        "PATH",
        "/usr/bin:/bin",
        "--setenv",
        "HOME",
        "/tmp",
        "--setenv",
        "LANG",
        "C.UTF-8",
    ]


def bwrap_user(root: bool) -> list[str]:
    """As root the server is root inside, and each child takes a uid of its own; otherwise a user namespace
    maps our one uid to its root, with the capabilities the server needs to make each cell's namespaces
    (capabilities of that namespace only: a child drops them all before it runs anything).

    Not --disable-userns: the server makes each cell's pid namespace from its own again (setns), which
    that option's nested user namespace forbids. A submission still makes none: the seccomp filter
    refuses unshare, setns and clone with any namespace flag, and its child has no capability.
    """
    if root:
        return []
    return ["--unshare-user", "--uid", "0", "--gid", "0", "--cap-add", "ALL"]
