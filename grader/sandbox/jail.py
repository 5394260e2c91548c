"""The jail: bubblewrap (or a chroot) around the fork server, and the cell it makes for each submission.

A grading worker keeps one jail (bubblewrap costs tens of milliseconds to start) and opens a
cell in it for each submission (a few milliseconds: two forks, its namespaces, its mounts and
its cgroup). What one submission could leave for the next lives in its cell and ends with it.
"""

from __future__ import annotations

import json
import os
import secrets
import select
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from grader.sandbox import cgroups, isolation, seccomp, wire
from grader.sandbox.timing import HUNG_FLOOR
from grader.sandbox.uids import free_uid

if TYPE_CHECKING:
    from grader.core.exercise import Exercise

START_TIMEOUT = 30.0  # seconds for a new jail's server to say it is ready (Python's start, its imports)
CELL_TIMEOUT = 10.0  # seconds for a cell to open or close
LOADED_CLOSE = 0.5  # seconds a cell whose init loaded the file has to end by itself before its cgroup kills it


@dataclass(frozen=True)
class Limits:
    """What one submission may use: its processes each (rlimits), and all of them together (its cgroup)."""

    memory_mb: int = 512
    cpu_seconds: int = 120
    processes: int = 32
    file_size_mb: int = 8
    open_files: int = 64
    tmp_mb: int = 64  # its /tmp; /var/tmp and /dev/shm get a quarter each
    after_timeout: float = HUNG_FLOOR  # CPU seconds each call has at least once one timed out (timing.Pace)

    @classmethod
    def of(cls, ex: Exercise) -> Limits:
        """An exercise's, from its exercise.toml's [limits]; the rest as above."""
        return cls(memory_mb=ex.memory_mb, after_timeout=ex.after_timeout)

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
    ctl_w: int  # the grader's ends of the cell's own pipes: control messages to its init ...
    ctl_r: int  # ... its init's events (the end of this pipe: the init is gone, and all of the cell with it)
    req_w: int  # ... requests to its child
    resp_r: int  # ... and its child's answers
    isolated: bool = False  # its own pid, IPC and mount namespaces: everything of it ends with it
    first_child: int | None = None  # the child it forked when it opened, waiting for the submission's code
    loads: bool = False  # its init loads the file itself and forks each child from itself as loaded
    alone: bool = False  # ... and can fork no fresh child: a new load needs a new cell

    def send(self, message: dict) -> None:
        wire.send(self.ctl_w, message, time.monotonic() + 2.0)

    def event(self, wanted, timeout: float, seen=None) -> dict | None:
        """Read the init's events until one is `wanted` (None if none came in time, or the init is gone)."""
        deadline = time.monotonic() + timeout
        while True:
            event = wire.read_message(self.ctl_r, wire.CONTROL_LIMIT, deadline)
            if event is None:
                return None
            if seen is not None:
                seen(event)
            if wanted(event):
                return event

    def gone(self, timeout: float) -> bool:
        """Wait until the cell's init has ended (it does once all of the submission is dead): its pipe ends."""
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                if not select.select([self.ctl_r], [], [], max(deadline - time.monotonic(), 0))[0]:
                    return False
                if not os.read(self.ctl_r, wire.READ_SIZE):
                    return True
        except OSError:
            return True
        return False

    def close_pipes(self) -> None:
        for fd in (self.ctl_w, self.ctl_r, self.req_w, self.resp_r):
            try:
                os.close(fd)
            except OSError:
                pass


class Jail:
    """The fork server in its jail: the expensive part, reused for one submission after another, each in a cell."""

    def __init__(self, limits: Limits | None = None, mode: str | None = None, namespaces: bool | None = None):
        self.limits = limits or Limits()
        self.how = isolation.get(mode) if mode else isolation.chosen()
        self.mode = self.how.name
        self.allow_namespaces = namespaces  # None: wherever the machine allows them (False: as a container that refuses them)
        self.proc: subprocess.Popen | None = None
        self.fds: list[int] = []
        self.srv_w = self.srv_r = -1  # the server's own pipes: requests for cells, its "ready"
        self.fds_w: socket.socket | None = None  # where each cell's descriptors are sent
        self.namespaces = False  # whether the server can give a cell its own namespaces here
        self.cell: Cell | None = None  # the cell a submission is using
        self.ready: Cell | None = None  # the next cell, asked for ahead: made while the current one is used
        self.closing: list[Cell] = []  # cells asked to close, not yet gone
        self.taken: set[int] = set()  # uids of this jail's cells that may still have processes
        self.group = f"jail-{os.getpid()}-{secrets.token_hex(4)}"  # its cells' cgroup folder: the CPU cap they share

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> None:
        root = os.getuid() == 0
        srv_in_r, self.srv_w = os.pipe()
        self.srv_r, srv_out_w = os.pipe()
        self.fds_w, fds_r = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        inner = [srv_in_r, srv_out_w, fds_r.fileno()]
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
            for fd in inner[:2]:
                os.close(fd)
            fds_r.close()
        self.fds = [self.srv_w, self.srv_r]
        ready = wire.read_message(self.srv_r, wire.CONTROL_LIMIT, time.monotonic() + START_TIMEOUT)
        if ready is None or ready.get("event") != "ready":
            self.close()
            raise JailError("the sandbox did not start")
        self.namespaces = ready.get("namespaces") is True

    # ------------------------------------------------------------ cells

    def open_cell(self) -> Cell:
        """A fresh cell for the next submission: its own uid, cgroup, namespaces and pipes where this machine allows them.

        Usually asked for ahead (prepare) and ready by now, its first child waiting. The last
        submission's cell is gone before this returns, so no process of one ever runs beside the next.
        """
        if self.cell is not None:
            self.close_cell()
        if not self.alive():
            self.close()
            self.start()
        try:
            if self.ready is None:
                self.ready = self._ask_for_cell()
            cell, self.ready = self.ready, None
            self._wait_closing()
            event = cell.event(lambda e: e.get("event") == "opened" and type(e.get("pid")) is int, CELL_TIMEOUT)
            if event is None:
                self._bury(cell)
                raise JailError("the sandbox did not open a cell")
            cell.isolated, cell.first_child = event.get("isolated") is True, event["pid"]
            cell.loads = event.get("loads") is True and cell.cgroup is not None
            self.cell = cell
        except OSError:
            self.close()
            raise
        return cell

    def prepare(self) -> None:
        """Ask for the next cell now, if none is asked for yet: it is made while the current one is used.

        Called while the current submission's child loads its file, when the grader only waits.
        """
        if self.ready is None and self.alive():
            try:
                self.ready = self._ask_for_cell()
            except OSError:
                self.ready = None  # the next open_cell asks again, and fails as it must

    def _wait_closing(self) -> None:
        for cell in self.closing:
            if cell.loads and not cell.gone(0 if cell.alone else LOADED_CLOSE):
                cell.cgroup.kill()  # type: ignore[union-attr]  # its init is the submission: it need not listen
            if not cell.gone(CELL_TIMEOUT):
                raise JailError("the sandbox did not close a cell")
        for cell in self.closing:
            self._bury(cell)
        self.closing = []

    def _ask_for_cell(self) -> Cell:
        """Ask the server for a new cell with pipes of its own; its uid and cgroup are chosen here."""
        uid = free_uid(self.taken) if os.getuid() == 0 else None
        found = cgroups.available()
        cgroup = None
        if found is not None:
            name = f"cell-{uid or os.getpid()}-{time.monotonic_ns()}"
            cgroup = found.cell(self.group, name, self._memory_cap(), self.limits.processes + 4)
        ctl_in_r, ctl_w = os.pipe()
        ctl_r, ctl_out_w = os.pipe()
        req_r, req_w = os.pipe()
        resp_r, resp_w = os.pipe()
        cell = Cell(uid, cgroup, ctl_w, ctl_r, req_w, resp_r)
        inner = [ctl_in_r, ctl_out_w, req_r, resp_w]
        joins = cgroup.join_fds() if cgroup is not None else []
        policy = seccomp.Policy(ipc=self.namespaces, network=self.how.network)
        message = {"op": "open", "uid": uid, "namespaces": self.namespaces, "seccomp": seccomp.bpf(policy).hex()}
        # Its CPU time read from its cgroup, never from the cell: its init may then load the file itself.
        message["loads"] = cgroup is not None and "usage" in cgroup.roles
        message["fds"] = len(inner) + len(joins)
        try:
            wire.send(self.srv_w, message, time.monotonic() + 2.0)
            if self.fds_w is None:
                raise OSError("no socket for the cell's descriptors")
            socket.send_fds(self.fds_w, [b"c"], inner + joins)
        except OSError as exc:
            self._bury(cell)
            raise JailError(f"the sandbox did not take the cell ({exc})") from None
        finally:
            for fd in inner + joins:
                os.close(fd)
        if uid is not None:
            self.taken.add(uid)
        return cell

    def _memory_cap(self) -> int:
        # Each process may map memory_mb (RLIMIT_AS); together they may hold that much, and their tmpfs.
        return (self.limits.memory_mb << 20) + sum(self.limits.tmpfs().values())

    def close_cell(self, next_one: bool = False) -> None:
        """End the cell and every process in it.

        `next_one`: a worker grades on, and the next cell's opening waits for this one's end
        (open_cell); else it is waited for now.
        """
        cell, self.cell = self.cell, None
        if cell is None:
            return
        try:
            cell.send({"op": "close"})
        except OSError:
            pass  # its init is gone already
        self.closing.append(cell)
        if not next_one:
            try:
                self._wait_closing()
            except OSError:
                self.close()  # it did not end as it must: the whole jail goes, and all of it

    def _bury(self, cell: Cell) -> None:
        """After a cell's end: nothing of it may be left, by its cgroup and by its uid."""
        cell.close_pipes()
        if cell.cgroup is not None:
            cell.cgroup.remove()
        if cell.uid is not None:
            if not cell.isolated:  # in a pid namespace of its own, nothing of it outlives the cell
                kill_uid(cell.uid)
            if cell.isolated or not processes_of(cell.uid):
                self.taken.discard(cell.uid)

    def close(self) -> None:
        """End the jail and every process in it (each cell's init ends with the server)."""
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
        found = cgroups.available()
        if found is not None:
            found.remove_group(self.group)
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
