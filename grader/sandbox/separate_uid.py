"""The separate-uid mode, root without a usable bubblewrap: a root directory of only the standard library, a uid of its
own for each submission, and the kit made unreadable to those uids while they run.

Docker, and Gradescope's containers, run as root but block the namespaces bubblewrap needs. The
fork server starts as root; each cell is chrooted into a directory holding only the standard
library of the interpreter it runs and the libraries its C modules load (no kit, no class folder,
nothing of the grader's; a /proc only where the cell has a pid namespace, showing its own processes),
and has its namespaces where the container allows them.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from grader.core import exercise
from grader.sandbox import wire
from grader.sandbox.interpreter import PYTHON, under
from grader.sandbox.modes import Facts, Mode, cgroup_text

CHILD = Path(__file__).with_name("child.py")


class SeparateUid(Mode):
    name = "separate-uid"
    level = "reduced"
    network = False  # no network namespace of its own: a cell may open no socket at all

    def problem(self) -> str | None:
        return None if os.getuid() == 0 else "the separate-uid mode needs root (each submission gets a uid of its own)"

    def server(self, config: dict[str, Any], root: bool) -> tuple[list[str], dict[str, Any]]:
        hide(kit_paths())  # unless the command already hid them (and more)
        python = python_for_others()
        config["root"] = str(separate_root(python))
        config["cell"]["proc"] = True  # mounted only in a cell with its own pid namespace: its processes alone
        config["parent"] = os.getpid()  # the server ends with the grading worker (bubblewrap does this itself)
        return [str(python), "-I", "-S", str(CHILD)], {"cwd": "/"}

    def prepare(self, hidden: list[Path], create: tuple[Path, ...] = ()) -> None:
        for folder in create:
            folder.mkdir(parents=True, exist_ok=True)
        prepare_separate_uid([*kit_paths(), *hidden])

    def describe(self, facts: Facts) -> str:
        if facts.namespaces:
            return (
                "isolation: separate-uid (root without a usable bubblewrap). Each submission runs in a cell of its own: "
                "a uid nobody else holds, its own pid, IPC and mount namespaces, a size-capped tmpfs for /tmp, /var/tmp "
                f"and /dev/shm, a root directory holding only the standard library, a seccomp filter and "
                f"{cgroup_text(facts)}; the kit, the class folder and the output folder are also unreadable to it during "
                "the run. Without a network namespace, it refuses every socket."
            )
        return (
            "isolation: separate-uid in a container that allows no namespace (as on Gradescope). Each submission runs "
            "as a uid nobody else holds, in a root directory holding only the standard library with no writable "
            "folder, under a seccomp filter that also refuses sockets, System V and POSIX IPC and the kernel's "
            f"keyrings, with {cgroup_text(facts)}; every process of its uid is killed when it ends. The kit, the class "
            "folder and the output folder are unreadable to it during the run."
        )


# ---------------------------------------------------------------- separate-uid: hiding the kit

# Without bubblewrap nothing can be left out of a submission's view: what it must not read is
# made unreadable to it instead. The group and other permissions of the kit, the grader's venv,
# the class folder and the output folder are removed while submissions run (the jail's uid is
# in no group) and restored afterwards. The journal records the original modes and who holds
# them, so concurrent runs share them and a crashed run's are restored by the next one.
# Root's own places for the journal and the jails' root directories: the first that works
# (a container may have a read-only /var/lib).
STATE_DIRS = (Path("/var/lib/meteor-kit"), Path("/tmp/meteor-kit-state"))
_hidden: dict[str, Any] = {"by": None, "paths": []}


@cache
def state_dir() -> Path:
    for place in STATE_DIRS:
        try:
            place.mkdir(mode=0o700, parents=True, exist_ok=True)
            info = os.lstat(place)
            # Ours alone: in /tmp another user could have made it first, or left a link there.
            if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077:
                (place / ".writable").touch()
                return place
        except OSError:
            continue
    raise OSError(f"the separate-uid mode needs a folder of its own: none of {', '.join(map(str, STATE_DIRS))} works")


def kit_paths() -> list[Path]:
    """What a submission must never read: the kit (and its own exercise), the installed grader, its venv (a command adds its exercise)."""
    paths = [exercise.KIT_ROOT, Path(__file__).resolve().parents[1]]
    if sys.prefix != sys.base_prefix:
        paths.append(Path(sys.prefix))
    return paths


def _holder(pid: int) -> str:
    """A process, named so that a later process with the same pid is not taken for it."""
    return f"{pid}:{wire.proc_read(f'{pid}/stat').rsplit(b')', 1)[1].split()[19].decode()}"


def _holds(holder: str) -> bool:
    try:
        return _holder(int(holder.split(":")[0])) == holder
    except (OSError, ValueError, IndexError):
        return False


def with_journal(change: Callable[[dict], None], place: Path | None = None) -> None:
    journal_path = (place or state_dir()) / "hidden.json"
    import fcntl

    lock = os.open(journal_path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            journal = json.loads(journal_path.read_text())
        except (OSError, ValueError):
            journal = {}
        change(journal)
        for path, entry in list(journal.items()):  # restore what nobody living holds (a crashed run's)
            entry["holders"] = [h for h in entry["holders"] if _holds(h)]
            if not entry["holders"]:
                try:
                    os.chmod(path, entry["mode"])
                except OSError:
                    pass
                del journal[path]
        temporary = journal_path.with_suffix(".tmp")
        temporary.write_text(json.dumps(journal))
        os.replace(temporary, journal_path)
    finally:
        os.close(lock)


def _hideable(path: Path) -> bool:
    # Never a top-level directory (/, /home, /tmp) nor anything the jail's interpreter lives in.
    needed = [PYTHON, python_for_others().resolve()]
    return len(path.parts) > 2 and not any(under(n, path) for n in needed)


def hide(paths: list[Path]) -> list[Path]:
    """Make `paths` unreadable to the jails' uids until unhide() or this process ends; returns them."""
    if _hidden["by"] is not None:
        return _hidden["paths"]  # this process, or the command that forked it, did it already
    found = []
    for path in paths:
        if path.is_symlink():
            continue  # a student's link (eve -> /etc/ssh) must not get a system folder chmodded
        try:
            real = path.resolve(strict=True)
        except (OSError, RuntimeError):
            continue
        if _hideable(real) and real not in found:
            found.append(real)
    me = _holder(os.getpid())

    def add(journal: dict) -> None:
        for path in found:
            entry = journal.setdefault(str(path), {"mode": stat.S_IMODE(os.stat(path).st_mode), "holders": []})
            entry["holders"].append(me)
            os.chmod(path, entry["mode"] & ~0o077)

    with_journal(add)
    _hidden.update(by=os.getpid(), paths=found)
    atexit.register(unhide)
    for number in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(number) is signal.SIG_DFL:  # end by an exception: `finally` and atexit run
            signal.signal(number, _exit_on_signal)
    return found


def prepare_separate_uid(paths: list[Path]) -> None:
    """Before the separate-uid mode runs anything: `paths` hidden, the jail's root directory made."""
    hide(paths)
    separate_root(python_for_others())


def unhide() -> None:
    """Give back the permissions hide() took (once no other run holds them)."""
    if _hidden["by"] != os.getpid():
        return  # a forked worker: the command that hid them restores them
    me = _holder(os.getpid())

    def drop(journal: dict) -> None:
        for entry in journal.values():
            entry["holders"] = [h for h in entry["holders"] if h != me]

    with_journal(drop)
    _hidden.update(by=None, paths=[])


def _exit_on_signal(number: int, frame: Any) -> None:
    raise SystemExit(128 + number)


ROOT_LAYOUT = 3  # the roots' own folders changed: 2, its tmp folders are no longer writable; 3, an empty /proc
ROOT_SKIPS = ("site-packages", "dist-packages", "test", "idlelib", "tkinter", "turtledemo", "ensurepip")


@cache
def separate_root(python: Path) -> Path:
    """A root directory for the separate-uid jail: `python`'s standard library and the libraries
    its C modules load, nothing else. Made once per machine (hard links where it can).

    The server chroots into it, so a submission has no path to the kit, the class, the other
    kits on the machine, nor to /proc (where the grader's command line names them).
    """
    query = "import sys, json; print(json.dumps(sys.path[1:]))"
    found = subprocess.run([str(python), "-I", "-S", "-c", query], capture_output=True, text=True, env={}, check=True)
    paths = sorted({Path(p).resolve() for p in json.loads(found.stdout) if Path(p).is_dir()})
    paths = [p for p in paths if not any(q != p and under(p, q) for q in paths)]  # lib-dynload is in the stdlib
    built = python.resolve().stat()  # an upgraded interpreter gets a new root, not the old library
    key = [str(python), built.st_size, built.st_mtime_ns, *map(str, paths), ROOT_SKIPS, ROOT_LAYOUT]
    digest = hashlib.sha256(json.dumps(key).encode()).hexdigest()[:16]
    home = state_dir()
    root = home / f"root-{digest}"
    if (root / ".complete").exists():
        (root / ".complete").touch()  # in use: `prune` keeps it
        return root
    prune(home)
    building = Path(tempfile.mkdtemp(prefix="building-", dir=home))
    try:
        for path in paths:
            shutil.copytree(
                path,
                building / path.relative_to("/"),
                symlinks=True,
                ignore=shutil.ignore_patterns(*ROOT_SKIPS),
                copy_function=_link_or_copy,
            )
        libraries = set()
        for module in building.rglob("*.so"):
            listed = subprocess.run(["ldd", str(module)], capture_output=True, text=True, env={})
            libraries |= {w for line in listed.stdout.splitlines() for w in line.split() if w.startswith("/")}
        for library in [*libraries, "/etc/ld.so.cache"]:
            if os.path.isfile(library):
                (building / library.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(library, building / library.lstrip("/"))  # the file, not the link
        for place in ("tmp", "var/tmp", "dev/shm", "proc"):
            # Writable only where a cell mounts a tmpfs of its own there: never a folder of the host's disk.
            # /proc stays empty unless the cell has a pid namespace, whose own processes it then shows.
            (building / place).mkdir(parents=True, exist_ok=True)
            (building / place).chmod(0o755)
        building.chmod(0o755)
        (building / ".complete").touch()
        os.rename(building, root)
    except OSError:
        if not (root / ".complete").exists():
            raise
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return root


# A root no run has used for this long was made for an interpreter since upgraded or removed;
# a half-built one this old was left by a run that was killed while it built.
UNUSED_ROOT_S = 30 * 24 * 3600
ABANDONED_BUILD_S = 24 * 3600


def prune(home: Path, now: float | None = None) -> list[Path]:
    """Removes the jails' root directories nobody used for a month, and builds abandoned a day ago; what it removed.

    Each root is the standard library of one interpreter build (about 40 MB), and a new one is
    made whenever that interpreter changes, so old ones would pile up. Another run may be using
    a root made for another interpreter right now: a root counts as used as long as its
    `.complete` was touched (every run that uses it touches it) within the month.
    """
    now = time.time() if now is None else now
    removed = []
    for entry in home.iterdir():
        try:
            if entry.is_symlink() or not entry.is_dir():
                continue
            if entry.name.startswith("root-"):
                marker = entry / ".complete"
                age = now - (marker.stat().st_mtime if marker.exists() else entry.stat().st_mtime)
                stale = age > UNUSED_ROOT_S
            elif entry.name.startswith("building-"):
                stale = now - entry.stat().st_mtime > ABANDONED_BUILD_S
            else:
                continue
        except OSError:
            continue
        if stale:
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def python_for_others() -> Path:
    """An interpreter of our version that an unprivileged uid can run and import from.

    Without bubblewrap there is no bind mount to make pyenv's Python (under /root) reachable,
    so take the system's interpreter of the same version when ours is out of reach.
    """

    def reachable(path: Path) -> bool:
        return all(p.stat().st_mode & 0o001 for p in [*path.parents[:-1]]) and bool(path.stat().st_mode & 0o005)

    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    for candidate in (PYTHON, Path("/usr/bin") / version, Path("/usr/local/bin") / version):
        try:
            if candidate.exists() and reachable(candidate.resolve()):
                return candidate
        except OSError:
            continue
    return PYTHON
