"""A cgroup of its own for each submission, where the host lets us make one: CPU, memory and process caps the
kernel enforces, the CPU time of all its processes, and all of them killed at once.

Both hierarchies are supported, and both at once (a "hybrid" host): cgroup v2 (`cpu.max`,
`memory.max`, `pids.max`, `cpu.stat`, `cgroup.kill`), as current distributions have it, and
cgroup v1 (`cpu`, `cpuacct`, `memory`, `pids` mounted apart), as many containers do. Cells are
made under the grader's own cgroup (v1), or under the nearest ancestor of it that we may write
and that holds no process (v2, whose controllers may only be handed down by a cgroup without
processes), so the limits the grader itself runs under still bind its submissions. Where no
cgroup can be had (not root and nothing delegated, or a container that forbids it), `available()`
is None and the jail keeps its rlimits: the isolation's description says so.
"""

from __future__ import annotations

import atexit
import errno
import multiprocessing.util
import os
import queue
import re
import secrets
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

CPU_PERIOD_US = 100_000
STALE = 60.0  # seconds since a dead grader's folder last changed before another grader removes it (_sweep)
OURS = re.compile(r"meteor-kit-(\d+)-[0-9a-f]{6}")
CPUS = 1  # a submission's processes together use at most one CPU's time
CPU_V1 = ("cpu.cfs_quota_us", str(CPUS * CPU_PERIOD_US))  # the period is 100 ms by default


@dataclass(frozen=True)
class Hierarchy:
    """One mounted hierarchy we can make cells in: where, which version, which of our roles it plays."""

    base: Path  # the folder our cells go in (made on first use)
    version: int
    roles: frozenset[str]  # of "cpu" (a cap), "memory", "pids", "usage" (CPU time), "kill"


def _mounts() -> list[tuple[str, str, set[str]]]:
    """(mount point, fstype, super options) of every cgroup hierarchy mounted here."""
    found = []
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return []
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, more = left.split(), right.split()
        if len(fields) >= 5 and more and more[0] in ("cgroup", "cgroup2"):
            options = set(more[2].split(",")) if len(more) > 2 else set()
            found.append((fields[4].replace("\\040", " "), more[0], options))
    return found


def _own_paths() -> dict[str, str]:
    """Our cgroup in each hierarchy, by its controllers ("" for v2), from /proc/self/cgroup."""
    own = {}
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            own[controllers] = path
    except (OSError, ValueError):
        pass
    return own


def _writable(path: Path) -> bool:
    return os.access(path, os.W_OK | os.X_OK)


def _v2_base(mount: Path, own: str) -> Path | None:
    """The deepest cgroup on our path that we may write and that holds no process (the root may hold some)."""
    node = mount / own.lstrip("/")
    while True:
        procs = node / "cgroup.procs"
        try:
            empty = node == mount or not procs.read_text().strip()
        except OSError:
            empty = False
        if empty and _writable(node) and os.access(node / "cgroup.subtree_control", os.W_OK):
            return node
        if node == mount:
            return None
        node = node.parent


def _sweep(folder: Path) -> None:
    """Remove what graders that are gone left in `folder` (one killed with SIGKILL cannot clean up after itself).

    Only empty folders go (rmdir refuses the rest), each of a dead process and unchanged for STALE seconds:
    an empty cgroup costs the kernel at every CPU cap it sets (it walks them all), and they add up.
    """
    try:
        entries = [e for e in os.scandir(folder) if e.is_dir(follow_symlinks=False) and OURS.fullmatch(e.name)]
    except OSError:
        return
    now = time.time()
    for entry in entries:
        try:
            os.kill(int(OURS.fullmatch(entry.name).group(1)), 0)  # type: ignore[union-attr]
            continue  # alive (or not ours to signal): left alone
        except ProcessLookupError:
            pass
        except OSError:
            continue
        try:
            if now - entry.stat(follow_symlinks=False).st_mtime < STALE:
                continue
            for path in sorted(Path(entry.path).glob("**/"), key=lambda p: -len(p.parts)):
                path.rmdir()
        except OSError:
            continue


def hierarchies() -> list[Hierarchy]:
    """Every hierarchy where this process may make cells, with what each can do; [] where none."""
    own = _own_paths()
    tag = f"meteor-kit-{os.getpid()}-{secrets.token_hex(3)}"
    found: list[Hierarchy] = []
    for point, fstype, options in _mounts():
        mount = Path(point)
        if fstype == "cgroup2":
            base = _v2_base(mount, own.get("", "/"))
            if base is None:
                continue
            try:
                available = set((base / "cgroup.controllers").read_text().split())
            except OSError:
                continue
            roles = {"usage", "kill"} | (available & {"cpu", "memory", "pids"})
            _sweep(base)
            found.append(Hierarchy(base / tag, 2, frozenset(roles)))
            continue
        controllers = options & {"cpu", "cpuacct", "memory", "pids"}
        key = next((k for k in own if k and set(k.split(",")) & controllers), None)
        if not controllers or key is None:
            continue
        parent = mount / own[key].lstrip("/")
        if not _writable(parent):
            continue
        roles = (controllers - {"cpuacct"}) | ({"usage"} if "cpuacct" in controllers else set())
        _sweep(parent)
        found.append(Hierarchy(parent / tag, 1, frozenset(roles)))
    return found


class Cgroups:
    """The cells of one grading process: a folder per hierarchy, a cgroup per submission in each."""

    def __init__(self, found: list[Hierarchy]):
        # Each role from one hierarchy: v2's where it has it (cgroup.kill, one file for usage).
        self.found = sorted(found, key=lambda h: -h.version)
        self.made: list[Path] = []
        self.groups: list[Path] = []  # the jails' folders, each holding its cells
        atexit.register(self.close)
        # A grading worker (multiprocessing) ends with os._exit, where atexit runs nothing: this runs there too.
        multiprocessing.util.Finalize(self, self.close, exitpriority=0)

    @property
    def roles(self) -> set[str]:
        return {role for h in self.found for role in h.roles}

    def _ready(self, hierarchy: Hierarchy) -> None:
        if hierarchy.base in self.made:
            return
        hierarchy.base.mkdir(mode=0o755)
        self.made.append(hierarchy.base)
        if hierarchy.version == 2:
            wanted = sorted(hierarchy.roles & {"cpu", "memory", "pids"})
            if wanted:
                (hierarchy.base / "cgroup.subtree_control").write_text(" ".join("+" + c for c in wanted))

    def _group(self, hierarchy: Hierarchy, group: str, roles: set[str]) -> Path:
        """A jail's folder (made on first use), and on it the CPU cap its cells share.

        One jail runs one submission at a time (the next cell, made ahead, waits idle), so a cap
        on the jail's folder binds each submission as one of its own would. Set once a jail, not
        once a cell: on this host, writing a CPU cap took 1.4 ms of the grader's CPU a cell
        (tg_set_bandwidth, under load), 1.8 % of a class's CPU in all (bench/log.md).
        """
        path = hierarchy.base / group
        if path in self.groups:
            return path
        path.mkdir(mode=0o755)
        try:
            if "cpu" in roles:
                name, value = ("cpu.max", f"{CPUS * CPU_PERIOD_US} {CPU_PERIOD_US}") if hierarchy.version == 2 else CPU_V1
                (path / name).write_text(value)
            if hierarchy.version == 2:
                wanted = sorted(roles & {"memory", "pids"})  # the cells' own caps
                if wanted:
                    (path / "cgroup.subtree_control").write_text(" ".join("+" + c for c in wanted))
        except OSError:
            _remove(path)  # never a folder without its cap: the next cell tries again, and fails as this one does
            raise
        self.groups.append(path)
        return path

    def cell(self, group: str, name: str, memory_bytes: int, processes: int) -> CellCgroup:
        """A cgroup of its own in every hierarchy, in its jail's `group`, with the caps set: the submission joins it
        before it runs."""
        dirs: list[tuple[Hierarchy, Path]] = []
        taken: set[str] = set()
        try:
            for hierarchy in self.found:
                mine = hierarchy.roles - taken
                if not mine:
                    continue
                path = self._make(hierarchy, group, mine, name)
                dirs.append((hierarchy, path))
                taken |= mine
                _limit(hierarchy.version, path, mine, memory_bytes, processes)
            return CellCgroup(dirs, taken)
        except OSError:
            for _, path in reversed(dirs):
                _remove(path)
            raise

    def _make(self, hierarchy: Hierarchy, group: str, roles: set[str], name: str) -> Path:
        """The cell's folder in `hierarchy`, in its jail's (made first where missing)."""

        def make() -> Path:
            self._ready(hierarchy)
            path = self._group(hierarchy, group, roles) / name
            path.mkdir(mode=0o755)
            return path

        try:
            return make()
        except FileNotFoundError:
            # Our folders were removed under us (by another grader that took us for gone): made again, once.
            self.made = [p for p in self.made if p != hierarchy.base]
            self.groups = [p for p in self.groups if p.parent != hierarchy.base]
            return make()

    def remove_group(self, group: str) -> None:
        """A jail's folders, once its cells' are removed (drain)."""
        for path in [p for p in self.groups if p.name == group]:
            _remove(path)
            self.groups.remove(path)

    def close(self) -> None:
        drain()
        for base in reversed(self.made):
            for cell in base.glob("*/cell-*"):
                _remove(cell)
            for group in base.glob("jail-*"):
                _remove(group)
            _remove(base)
        self.made, self.groups = [], []


def _limit(version: int, path: Path, roles: set[str], memory_bytes: int, processes: int) -> None:
    writes = {
        "memory": ("memory.max" if version == 2 else "memory.limit_in_bytes", str(memory_bytes)),
        "pids": ("pids.max", str(processes)),
    }
    for role, (name, value) in writes.items():
        if role in roles:
            (path / name).write_text(value)
    if version == 2 and "memory" in roles and (path / "memory.swap.max").exists():
        (path / "memory.swap.max").write_text("0")  # the cap holds: no swapping past it


class CellCgroup:
    """One submission's cgroups: the descriptors it joins through, its CPU time, its end."""

    def __init__(self, dirs: list[tuple[Hierarchy, Path]], roles: set[str]):
        self.dirs = dirs
        self.roles = roles
        self._usage: tuple[int, int] | None = None  # (descriptor, version)
        self._pressure: int | None = None  # cpu.pressure's descriptor, where the kernel keeps one (v2 with PSI)
        for hierarchy, path in dirs:
            if "usage" in hierarchy.roles and self._usage is None:
                name = "cpu.stat" if hierarchy.version == 2 else "cpuacct.usage"
                self._usage = (os.open(path / name, os.O_RDONLY | os.O_CLOEXEC), hierarchy.version)
            if hierarchy.version == 2 and self._pressure is None:
                try:
                    self._pressure = os.open(path / "cpu.pressure", os.O_RDONLY | os.O_CLOEXEC)
                    os.pread(self._pressure, 4096, 0)  # a kernel without PSI lists the file but refuses to read it
                except OSError:
                    if self._pressure is not None:
                        os.close(self._pressure)
                    self._pressure = None

    def join_fds(self) -> list[int]:
        """Descriptors of each cgroup.procs, opened for writing here (the jail cannot see /sys): the cell writes
        "0" on each to join. The caller closes them once sent."""
        return [os.open(path / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC) for _, path in self.dirs]

    def cpu_seconds(self) -> float | None:
        """CPU time every process of the cell used so far, the dead ones too; None without that role."""
        if self._usage is None:
            return None
        fd, version = self._usage
        text = os.pread(fd, 4096, 0)
        if version == 1:
            return int(text) / 1e9
        start = text.index(b"usage_usec ") + 11
        return int(text[start : text.index(b"\n", start)]) / 1e6

    def stall_seconds(self) -> float:
        """Seconds some process of the cell was ready to run while others held the CPU: its cpu.pressure (cgroup v2,
        the kernel's own count), else the run delay of its live processes (/proc/PID/schedstat)."""
        if self._pressure is not None:
            text = os.pread(self._pressure, 4096, 0)
            start = text.index(b"total=") + 6
            return int(text[start : text.index(b"\n", start)]) / 1e6
        return run_delay(self.processes())

    def processes(self) -> list[int]:
        pids: set[int] = set()
        for _, path in self.dirs:
            try:
                pids |= {int(p) for p in (path / "cgroup.procs").read_text().split()}
            except (OSError, ValueError):
                continue
        return sorted(pids)

    def kill(self) -> None:
        """Kill every process in the cell (they are gone already, unless the jail could not give it a pid namespace)."""
        for hierarchy, path in self.dirs:
            if hierarchy.version == 2 and (path / "cgroup.kill").exists():
                try:
                    (path / "cgroup.kill").write_text("1")
                except OSError:
                    pass
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            left = self.processes()
            if not left:
                return
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.002)

    def remove(self) -> None:
        if self._usage is not None:
            os.close(self._usage[0])
            self._usage = None
        if self._pressure is not None:
            os.close(self._pressure)
            self._pressure = None
        if self.processes():
            self.kill()
        # Empty now: the folders go in the background (each rmdir waits on the kernel for a millisecond or more).
        for _, path in reversed(self.dirs):
            _later(path)


def run_delay(pids: list[int]) -> float:
    """Seconds these processes spent ready to run but waiting for a CPU (their schedstat's second field)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/schedstat", "rb") as f:
                total += int(f.read().split()[1])
        except (OSError, IndexError, ValueError):
            continue
    return total / 1e9


_removals: dict[str, object] = {"pid": None, "queue": None, "thread": None}


def _later(path: Path) -> None:
    """Remove the empty cgroup `path` in this process's background thread (started at first use, after any fork)."""
    if _removals["pid"] != os.getpid():
        work: queue.Queue[Path] = queue.Queue()
        thread = threading.Thread(target=_remover, args=(work,), name="cgroup-removal", daemon=True)
        _removals.update(pid=os.getpid(), queue=work, thread=thread)
        thread.start()
    _removals["queue"].put(path)  # type: ignore[union-attr]


def _remover(work: queue.Queue[Path]) -> None:
    while True:
        path = work.get()
        try:
            _remove(path)
        finally:
            work.task_done()


def drain() -> None:
    """Wait until every removal asked for by this process is done.

    As Python shuts down (a jail closed by its finalizer) the daemon thread is gone or about to
    be: what it has not removed is removed here, never waited for."""
    if _removals["pid"] != os.getpid():
        return
    work: queue.Queue[Path] = _removals["queue"]  # type: ignore[assignment]
    thread: threading.Thread = _removals["thread"]  # type: ignore[assignment]
    if thread.is_alive() and not sys.is_finalizing():
        work.join()
        return
    while True:
        try:
            path = work.get_nowait()
        except queue.Empty:
            return
        _remove(path)


def _remove(path: Path) -> None:
    # rmdir of a cgroup whose last process has just been reaped can fail for a moment (EBUSY).
    for _ in range(100):
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError as exc:
            if exc.errno not in (errno.EBUSY, errno.ENOTEMPTY):
                return
            time.sleep(0.001)


_found: dict[int, Cgroups | None] = {}


def available() -> Cgroups | None:
    """This process's cells' cgroups (one set per process: forked workers make their own), None where none can be had."""
    pid = os.getpid()
    if pid not in _found:
        found = hierarchies()
        _found.clear()
        _found[pid] = Cgroups(found) if found else None
    return _found[pid]
