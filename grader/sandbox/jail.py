"""The jail: bubblewrap (or a chroot) around the fork server, and the cell it makes for each submission.

A grading worker keeps one jail (bubblewrap costs tens of milliseconds to start) and opens a
cell in it for each submission (a few milliseconds: two forks, its namespaces, its mounts and
its cgroup). What one submission could leave for the next lives in its cell and ends with it.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from typing import Any

from grader.sandbox import cgroups, isolation, seccomp, wire
from grader.sandbox.uids import free_uid

START_TIMEOUT = 30.0  # seconds for a new jail's server to say it is ready (Python's start, its imports)
CELL_TIMEOUT = 10.0  # seconds for a cell to open or close


@dataclass(frozen=True)
class Limits:
    """What one submission may use: its processes each (rlimits), and all of them together (its cgroup)."""

    memory_mb: int = 512
    cpu_seconds: int = 120
    processes: int = 32
    file_size_mb: int = 8
    open_files: int = 64
    tmp_mb: int = 64  # its /tmp; /var/tmp and /dev/shm get a quarter each

    def rlimits(self) -> dict[str, int]:
        return {
            "RLIMIT_AS": self.memory_mb << 20,
            "RLIMIT_CPU": self.cpu_seconds,
            "RLIMIT_NPROC": self.processes,
            "RLIMIT_FSIZE": self.file_size_mb << 20,
            "RLIMIT_NOFILE": self.open_files,
            "RLIMIT_CORE": 0,
        }

    def tmpfs(self) -> dict[str, int]:
        quarter = max(self.tmp_mb << 18, 1 << 20)
        return {"/tmp": self.tmp_mb << 20, "/var/tmp": quarter, "/dev/shm": quarter}


class JailError(OSError):
    """The jail's server or a cell did not answer as it must: the caller starts a fresh jail."""


@dataclass
class Cell:
    """One submission's cell, as the grader knows it."""

    uid: int | None  # its own uid (as root), or None (a user namespace, or no privilege at all)
    cgroup: cgroups.CellCgroup | None
    isolated: bool = False  # its own pid, IPC and mount namespaces: everything of it ends with it
    first_child: int | None = None  # the child it forked when it opened, waiting for the submission's code


class Jail:
    """The fork server in its jail: the expensive part, reused for one submission after another, each in a cell."""

    def __init__(self, limits: Limits | None = None, mode: str | None = None, namespaces: bool | None = None):
        self.limits = limits or Limits()
        self.how = isolation.get(mode) if mode else isolation.chosen()
        self.mode = self.how.name
        self.allow_namespaces = namespaces  # None: wherever the machine allows them (False: as a container that refuses them)
        self.proc: subprocess.Popen | None = None
        self.fds: list[int] = []
        self.ctl_w = self.ctl_r = self.req_w = self.resp_r = -1
        self.fds_w: socket.socket | None = None  # where the cells' cgroup descriptors are sent
        self.namespaces = False  # whether the server can give a cell its own namespaces here
        self.cell: Cell | None = None  # the cell a submission is using
        self.ready: Cell | None = None  # the next cell, asked for when the last one closed (not yet confirmed)
        self.closing: list[Cell] = []  # cells asked to close, not yet confirmed closed
        self.taken: set[int] = set()  # uids of this jail's cells that may still have processes

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> None:
        root = os.getuid() == 0
        ctl_in_r, self.ctl_w = os.pipe()
        self.ctl_r, ctl_out_w = os.pipe()
        req_r, self.req_w = os.pipe()
        self.resp_r, resp_w = os.pipe()
        self.fds_w, fds_r = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        inner = [ctl_in_r, ctl_out_w, req_r, resp_w, fds_r.fileno()]
        config: dict[str, Any] = {
            "fds": inner,
            "limits": self.limits.rlimits(),
            "cell": {
                "namespaces": root,  # the server tries them (see Cell): a container may refuse them
                "proc": False,  # a /proc of the cell's own (the mode says)
                "tmpfs": self.limits.tmpfs(),
                "inodes": 4096,
                "read_only": [],  # what the cell remounts read-only (the mode says)
            },
        }
        argv, popen_extra = self.how.server(config, root)
        if self.allow_namespaces is not None:
            config["cell"]["namespaces"] = self.allow_namespaces
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
            for fd in inner[:4]:
                os.close(fd)
            fds_r.close()
        self.fds = [self.ctl_w, self.ctl_r, self.req_w, self.resp_r]
        ready = self.event(lambda e: e.get("event") == "ready", START_TIMEOUT)
        if ready is None:
            self.close()
            raise JailError("the sandbox did not start")
        self.namespaces = ready.get("namespaces") is True

    # ------------------------------------------------------------ the control pipe

    def send(self, message: dict) -> None:
        wire.send(self.ctl_w, message, time.monotonic() + 2.0)

    def event(self, wanted, timeout: float, seen=None) -> dict | None:
        """Read control events until one is `wanted` (None if none came in time); `seen` gets each on the way."""
        deadline = time.monotonic() + timeout
        while True:
            event = wire.read_message(self.ctl_r, wire.CONTROL_LIMIT, deadline)
            if event is None:
                return None
            if seen is not None:
                seen(event)
            if wanted(event):
                return event

    # ------------------------------------------------------------ cells

    def open_cell(self) -> Cell:
        """A fresh cell for the next submission: its own uid, cgroup and namespaces where this machine allows them.

        Usually asked for already, when the last cell closed: by now it is ready, with its first child.
        """
        if self.cell is not None:
            self.close_cell()
        if not self.alive():
            self.close()
            self.start()
        if self.ready is None:
            self._ask_for_cell()
        cell, self.ready = self.ready, None
        assert cell is not None
        while True:
            # The server makes one cell at a time: a closing one is gone (and all its events read) before the next opens.
            event = self.event(lambda e: e.get("event") in ("closed", "opened"), CELL_TIMEOUT)
            if event is None:
                self.close()
                raise JailError("the sandbox did not open a cell")
            if event["event"] == "closed" and self.closing:
                self._bury(self.closing.pop(0))
            elif event["event"] == "opened" and not self.closing and type(event.get("pid")) is int:
                break
            else:
                self.close()
                raise JailError("the sandbox answered out of turn")
        cell.isolated, cell.first_child = event.get("isolated") is True, event["pid"]
        self.cell = cell
        return cell

    def _ask_for_cell(self) -> None:
        """Ask the server for a new cell (it makes it once the last one is gone): its uid and cgroup are chosen here."""
        uid = free_uid(self.taken) if os.getuid() == 0 else None
        found = cgroups.available()
        cgroup = None
        if found is not None:
            name = f"cell-{uid or os.getpid()}-{time.monotonic_ns()}"
            cgroup = found.cell(name, self._memory_cap(), self.limits.processes + 4)
        policy = seccomp.Policy(ipc=self.namespaces, network=self.how.network)
        joins = cgroup.join_fds() if cgroup is not None else []
        message = {"op": "open", "uid": uid, "namespaces": self.namespaces, "seccomp": seccomp.bpf(policy).hex()}
        try:
            message["fds"] = len(joins)
            self.send(message)
            if joins and self.fds_w is not None:
                socket.send_fds(self.fds_w, [b"c"], joins)
        except OSError as exc:
            if cgroup is not None:
                cgroup.remove()
            raise JailError(f"the sandbox did not take the cell ({exc})") from None
        finally:
            for fd in joins:
                os.close(fd)
        if uid is not None:
            self.taken.add(uid)
        self.ready = Cell(uid, cgroup)

    def _memory_cap(self) -> int:
        # Each process may map memory_mb (RLIMIT_AS); together they may hold that much, and their tmpfs.
        return (self.limits.memory_mb << 20) + sum(self.limits.tmpfs().values())

    def close_cell(self, next_one: bool = False) -> None:
        """End the cell and every process in it; `next_one`: and ask for the next cell at once (a worker grades on).

        The end is confirmed when the next cell opens (open_cell), or now when no next one is wanted.
        """
        cell, self.cell = self.cell, None
        if cell is None:
            return
        if not self.alive():
            self._bury(cell)
            return
        try:
            self.send({"op": "close"})
            self.closing.append(cell)
            if next_one:
                self._ask_for_cell()
                return
            while self.closing:
                if self.event(lambda e: e.get("event") == "closed", CELL_TIMEOUT) is None:
                    raise JailError("the sandbox did not close a cell")
                self._bury(self.closing.pop(0))
        except OSError:
            self.close()  # it did not end as it must: the whole jail goes, and all of it

    def _bury(self, cell: Cell) -> None:
        """After a cell's end: nothing of it may be left, by its cgroup and by its uid."""
        if cell.cgroup is not None:
            cell.cgroup.remove()
        if cell.uid is not None:
            if not cell.isolated:  # in a pid namespace of its own, nothing of it outlives the cell
                kill_uid(cell.uid)
            if cell.isolated or not processes_of(cell.uid):
                self.taken.discard(cell.uid)

    def close(self) -> None:
        """End the jail and every process in it."""
        cells = [c for c in (self.cell, self.ready, *self.closing) if c is not None]
        self.cell, self.ready, self.closing = None, None, []
        if self.proc is not None:
            if self.proc.poll() is None:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self.proc.wait()
            self.proc = None
        for cell in cells:
            self._bury(cell)
        cgroups.drain()  # the cells' cgroups, removed in the background, are gone when the jail is
        for uid in list(self.taken):
            kill_uid(uid)
            self.taken.discard(uid)
        for fd in self.fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds = []
        if self.fds_w is not None:
            self.fds_w.close()
            self.fds_w = None


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
    """Kill every process running as `uid` (a cell's own uid, which nobody else holds) and wait until none is left."""
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
