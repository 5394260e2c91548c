"""bubblewrap's arguments: the interpreter's trees read-only, the rest of the machine left out."""

from __future__ import annotations

import os
import shutil
import subprocess
from functools import cache
from pathlib import Path

from grader.sandbox.interpreter import Interpreter, interpreter


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


@cache
def bwrap_supports(option: str) -> bool:
    bwrap = shutil.which("bwrap")
    if not bwrap:
        return False
    try:
        text = subprocess.run([bwrap, "--help"], capture_output=True, text=True, timeout=10, env={})
    except (OSError, subprocess.SubprocessError):
        return False
    return option in text.stdout + text.stderr


def bwrap_user(root: bool) -> list[str]:
    """As root the server is root inside, and each child takes a uid of its own; otherwise a user namespace
    maps our one uid to its root, with the capabilities the server needs to make each cell's namespaces
    (capabilities of that namespace only: a child drops them all before it runs anything)."""
    if root:
        return []
    # --disable-userns: no user namespace of its own inside, so nothing can map itself more power.
    return [
        "--unshare-user",
        "--uid",
        "0",
        "--gid",
        "0",
        "--cap-add",
        "ALL",
        *(["--disable-userns"] if bwrap_supports("--disable-userns") else []),
    ]
