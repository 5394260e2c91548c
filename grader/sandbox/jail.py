"""The jail: bubblewrap (or the fallbacks) around the fork server, its rlimits, and killing what it holds."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.sandbox import wire
from grader.sandbox.interpreter import PYTHON
from grader.sandbox.mounts import bwrap_mounts, bwrap_user
from grader.sandbox.probe import isolation
from grader.sandbox.separate_uid import hide, kit_paths, python_for_others, separate_root

CHILD = Path(__file__).with_name("child.py")
WIRE = Path(__file__).with_name("wire.py")  # bound beside the child in the jail: the one module it imports


_uids = itertools.count()


@dataclass(frozen=True)
class Limits:
    """What one submission's processes may use (each process, except `processes`)."""

    memory_mb: int = 512
    cpu_seconds: int = 120
    processes: int = 32
    file_size_mb: int = 8
    open_files: int = 64
    tmp_mb: int = 64

    def rlimits(self) -> dict[str, int]:
        return {
            "RLIMIT_AS": self.memory_mb << 20,
            "RLIMIT_CPU": self.cpu_seconds,
            "RLIMIT_NPROC": self.processes,
            "RLIMIT_FSIZE": self.file_size_mb << 20,
            "RLIMIT_NOFILE": self.open_files,
            "RLIMIT_CORE": 0,
        }


def jail_uid() -> int:
    """A uid of its own for each live sandbox, so RLIMIT_NPROC counts only its processes."""
    return 1_000_000 + (os.getpid() * 64 + next(_uids) % 64) % 4_000_000


class Jail:
    """The bubblewrap jail and the fork server inside it: the expensive part, reusable.

    One jail can serve many submissions one after another (a grading worker keeps one):
    each load is a fresh child forked from a server that never ran submission code, its
    source arrives on the pipe, and before the next load every process of the last one is
    killed and /tmp is emptied. So a submission never sees another one.
    """

    def __init__(self, limits: Limits | None = None, mode: str | None = None):
        self.limits = limits or Limits()
        self.mode = mode or isolation()
        self.proc: subprocess.Popen | None = None
        self.uid: int | None = None
        self.root = ""  # the separate-uid jail's root directory
        self.fds: list[int] = []
        self.ctl_w = self.ctl_r = self.req_w = self.resp_r = -1
        self.clean = False  # True between a submission's close and the next load: nothing of it is left

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> None:
        self.clean = False
        ctl_in_r, self.ctl_w = os.pipe()
        self.ctl_r, ctl_out_w = os.pipe()
        req_r, self.req_w = os.pipe()
        self.resp_r, resp_w = os.pipe()
        inner = [ctl_in_r, ctl_out_w, req_r, resp_w]
        root = os.getuid() == 0
        self.uid = jail_uid() if root else None
        config = {
            "fds": inner,
            "limits": self.limits.rlimits(),
            "uid": self.uid,
            "pidns": self.mode == "bubblewrap",
            "nice": 0,
        }
        if not root and self.mode != "bubblewrap":
            # Without a uid of its own, RLIMIT_NPROC counts all of the grader user's processes.
            config["limits"]["RLIMIT_NPROC"] = own_process_count() + self.limits.processes
        python = PYTHON if self.mode == "bubblewrap" or not root else python_for_others()
        command = [str(python), "-I", "-S", "/jail/jail_child.py"]
        if self.mode == "separate-uid":
            hide(kit_paths())  # unless the command already hid them (and more)
            self.root = config["root"] = str(separate_root(python))
        if self.mode == "bubblewrap":
            argv = [
                shutil.which("bwrap"),
                *bwrap_mounts(),
                *bwrap_user(root),
                "--ro-bind",
                str(CHILD),
                "/jail/jail_child.py",
                "--ro-bind",
                str(WIRE),
                "/jail/wire.py",
                "--size",
                str(self.limits.tmp_mb << 20),
                "--perms",
                "1777",
                "--tmpfs",
                "/tmp",
                "--chdir",
                "/tmp",
                "--",
                *command,
            ]
            popen_extra: dict[str, Any] = {}
        else:
            command[3] = str(CHILD)
            argv = command
            popen_extra = {"cwd": "/tmp"}
            if root:
                # The server drops to the jail's uid itself, as under bubblewrap.
                config["own_uid"] = True
        stdin = config_pipe(config)
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=stdin,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=inner,
                start_new_session=True,
                env={"PATH": "/usr/bin:/bin"},
                **popen_extra,
            )
        finally:
            os.close(stdin)
        for fd in inner:
            os.close(fd)
        self.fds = [self.ctl_w, self.ctl_r, self.req_w, self.resp_r]

    def submission_processes(self) -> list[int]:
        """Host pids of the submission's processes: the fork server's descendants, not the server."""
        if self.proc is None:
            return []
        children = wire.children_of(wire.processes())
        # Breadth first from bubblewrap: the first process running the server's script is the
        # server. The submission's processes are everything else below bubblewrap: the server's
        # child, its children, and strays that bubblewrap's init adopted.
        level, server, keep = [self.proc.pid], None, {self.proc.pid}
        parent_of = {c: pid for pid, kids in children.items() for c in kids}
        while level and server is None:
            for pid in level:
                try:
                    argv = wire.proc_read(f"{pid}/cmdline", size=1 << 16).split(b"\0")
                except OSError:
                    continue
                if b"bwrap" not in argv[0] and any(a.endswith(b"jail_child.py") for a in argv):
                    server = pid
                    break
            level = [c for pid in level for c in children.get(pid, [])]
        if server is None:
            return []
        while server not in keep:
            keep.add(server)
            server = parent_of.get(server, self.proc.pid)
        found, stack = [], [self.proc.pid]
        while stack:
            pid = stack.pop()
            if pid not in keep:
                found.append(pid)
            stack += children.get(pid, [])
        return found

    def close(self) -> None:
        """End the jail and every process in it."""
        if self.alive() and self.mode != "bubblewrap":
            # Without a pid namespace the server must kill the strays before it goes.
            try:
                wire.send(self.ctl_w, {"op": "quit"}, time.monotonic() + 2.0)
                self.proc.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired):
                pass
        if self.proc is not None:
            if self.proc.poll() is None:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self.proc.wait()
            self.proc = None
        if self.uid is not None:
            kill_uid(self.uid)
            if self.mode != "bubblewrap":
                # Outside a jail of its own its files and IPC objects outlive it: the server
                # removes them after each submission, and this makes sure of it (it may be dead).
                from grader.sandbox.child import remove_leftovers

                remove_leftovers(self.uid)
                if self.root:
                    remove_leftovers(self.uid, self.root)
        for fd in self.fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds = []


def config_pipe(config: dict) -> int:
    """A pipe holding the jail server's configuration, to be its standard input.

    Not on its command line: every process can read a command line, in the jail and out.
    """
    read, write = os.pipe()
    try:
        wire.write_all(write, json.dumps(config).encode(), time.monotonic() + 2.0)  # a few hundred bytes: never waits
    finally:
        os.close(write)
    return read


def processes_of(uid: int) -> list[int]:
    """Live processes running as `uid`."""
    return [p.pid for p in wire.processes() if p.uid == uid and not p.zombie]


def kill_uid(uid: int) -> None:
    """Kill every process running as `uid` (a jail's own uid) and wait until none is left."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        alive = processes_of(uid)
        if not alive:
            return
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.002)


def own_process_count() -> int:
    """Processes of our real uid, which RLIMIT_NPROC counts (zombies too)."""
    uid = os.getuid()
    return sum(p.uid == uid for p in wire.processes())
