"""A submission running in a separate, jailed process: arguments go in, plain data comes out.

The jail is bubblewrap where it works: no network, no view of the grader's files or
environment, its own pid namespace, an unprivileged uid, rlimits. Inside it a fork server
(jail_child.py) loads the submission in a child, so a restart costs a fork. Where bubblewrap
is missing, the same server runs with rlimits in a fresh process group only, and
`isolation()` says so.
"""

from __future__ import annotations

import atexit
import hashlib
import itertools
import json
import os
import secrets
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from grader.core import exercise
from grader.core.checks import Opaque
from grader.core.submission import CallsByName, LoadError, SubmissionError, missing_function_message
from grader.sandbox import wire
from grader.sandbox.wire import CONTROL_LIMIT, READ_SIZE, ProtocolError

CHILD = Path(__file__).with_name("child.py")
WIRE = Path(__file__).with_name("wire.py")  # bound beside the child in the jail: the one module it imports
PYTHON_PREFIX = Path(sys.base_prefix).resolve()
LOAD_TIMEOUT = 10.0
SLOW_CALL = 0.25  # seconds after which a call counts as stalled (it probably hangs)
YIELDING_NICE = 19  # the niceness of a stalled call's processes
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


@dataclass
class Answer:
    """What came back from one call: a plain value, or how the call ended."""

    ok: bool
    value: Any = None  # as encoded on the wire (JSON); `decode` turns it into a Python value
    kind: str = ""
    error: str = ""
    traceback: str = ""
    output: str = ""
    _key: str = field(default="", repr=False, compare=False)  # key(), when known in advance

    def key(self) -> str:
        """Everything a verdict can depend on (not the printed output). Distinct answers, distinct keys.

        A long key is kept as its hash: the memo holds one per call it remembers.
        """
        if self._key:
            return self._key
        if self.ok:
            value = self.value
            if type(value) is dict:  # {"float": text} or {"opaque": name}: the common case, made cheap
                ((tag, text),) = value.items()
                return f"{tag[0]}:{text}"
            key = "v:" + json.dumps(value)
        else:
            key = json.dumps(["e", self.kind, self.error, self.traceback])
        return key if len(key) <= 200 else "#" + hashlib.sha256(key.encode()).hexdigest()

    def result(self) -> Any:
        if self.ok:
            return decode(self.value)
        raise SubmissionError(self.kind, self.error, self.traceback)


@dataclass(frozen=True)
class Interpreter:
    """What the jail must show of this Python (read-only) and what it must hide under that."""

    executable: Path
    roots: tuple[Path, ...]  # trees the interpreter runs from: its prefix and any stdlib entry outside it
    hidden: tuple[Path, ...]  # existing directories inside those trees: site-packages, the kit, the venv


def _interpreter_executable(base_prefix: Path) -> Path:
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    candidates = [base_prefix / "bin" / version, Path(getattr(sys, "_base_executable", "") or sys.executable)]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    return candidates[0]


PYTHON = _interpreter_executable(PYTHON_PREFIX).resolve()  # the interpreter the jail runs


def _under(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def describe_interpreter(
    prefix: str = sys.prefix,
    base_prefix: str = sys.base_prefix,
    base_exec_prefix: str = sys.base_exec_prefix,
    path: list[str] | None = None,
    stdlib: list[str] | None = None,
    executable: Path | None = None,
) -> Interpreter:
    """The trees this interpreter really uses, from sys.prefix, sys.base_prefix and sys.path.

    Nothing is assumed to exist: Debian's Python has dist-packages and no site-packages, and
    bubblewrap cannot bind or cover a missing path under a read-only /usr ("Can't mkdir").
    """
    import site
    import sysconfig

    def real(text: str) -> Path | None:
        try:
            found = Path(text).resolve()
        except (OSError, RuntimeError):
            return None
        return found if text and found.exists() else None

    base = real(base_prefix) or Path(base_prefix)
    executable = (executable or _interpreter_executable(base)).resolve()
    if stdlib is None:  # the base interpreter's: in a venv, sysconfig's platstdlib is under the venv
        bases = {
            "base": base_prefix,
            "platbase": base_exec_prefix,
            "installed_base": base_prefix,
            "installed_platbase": base_exec_prefix,
        }
        stdlib = [sysconfig.get_path(name, vars=bases) for name in ("stdlib", "platstdlib")]
    stdlib_dirs = [p for p in map(real, stdlib) if p]
    entries = [p for p in map(real, path if path is not None else sys.path) if p]
    is_stdlib = lambda p: any(_under(p, s) for s in stdlib_dirs)  # noqa: E731
    roots = [Path("/usr")]
    for candidate in [base, real(base_exec_prefix), executable.parent.parent, *stdlib_dirs, *filter(is_stdlib, entries)]:
        if candidate is not None and candidate != Path("/") and not any(_under(candidate, r) for r in roots):
            roots = [r for r in roots if not _under(r, candidate)] + [candidate]
    # What the jail must not see although it lies in a tree it gets: every import location
    # that is not the standard library (pytest, the grader, its dependencies), the venv, the kit.
    import grader

    package = Path(grader.__file__).resolve().parent
    others = [e for e in entries if not is_stdlib(e) and e.is_dir()]
    others += [p for p in map(real, site.getsitepackages([base_prefix, base_exec_prefix])) if p]
    others += [p for p in (real(prefix), package, package.parent) if p]
    keep = [executable, *stdlib_dirs, *roots]
    hidden = sorted(
        {h for h in others if h.is_dir() and any(_under(h, r) for r in roots) and not any(_under(k, h) for k in keep)}
    )
    return Interpreter(executable, tuple(sorted(roots)), tuple(hidden))


@cache
def interpreter() -> Interpreter:
    return describe_interpreter(executable=PYTHON)


def _bwrap_mounts(described: Interpreter | None = None) -> list[str]:
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
        "--unshare-cgroup-try",
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
def _bwrap_supports(option: str) -> bool:
    bwrap = shutil.which("bwrap")
    if not bwrap:
        return False
    try:
        text = subprocess.run([bwrap, "--help"], capture_output=True, text=True, timeout=10, env={})
    except (OSError, subprocess.SubprocessError):
        return False
    return option in text.stdout + text.stderr


def _bwrap_user(root: bool) -> list[str]:
    """As root the server drops to its own uid inside; otherwise a user namespace maps one uid."""
    if root:
        return []
    # --disable-userns: no namespace of its own inside, so nothing can rearrange its mounts.
    return [
        "--unshare-user",
        "--uid",
        "65534",
        "--gid",
        "65534",
        *(["--disable-userns"] if _bwrap_supports("--disable-userns") else []),
    ]


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
                _with_journal(lambda journal: None, place)  # give back what a killed run could not
            except OSError:
                pass  # a place this run cannot write to (state_dir() then takes the next)
    fallback = "separate-uid" if root else "none"
    bwrap = shutil.which("bwrap")
    if not bwrap:
        return Probe(fallback, "bubblewrap is not installed (no bwrap command on PATH)")
    try:
        run = subprocess.run(
            [bwrap, *_bwrap_mounts(), *_bwrap_user(root), "--", str(PYTHON), "-I", "-S", "-c", "pass"],
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


ISOLATION_NOTES = {
    "bubblewrap": "",
    "separate-uid": "isolation: separate-uid (root without a usable bubblewrap). Each submission runs as "
    "an unprivileged uid of its own, with rlimits, in a fresh session, chrooted into a copy of the standard "
    "library (no /proc, no kit, no other file of this machine); the kit, the class folder and the output "
    "folder are also unreadable to it during the run, and nothing it leaves (processes, files in /tmp, "
    "/var/tmp, /dev/shm, System V IPC) survives it. This mode cannot hide the network, nor what the shared "
    "kernel shows: other processes' pids and System V IPC objects of submissions running at the same time.",
    "none": "NOT ISOLATED (--no-sandbox): submissions ran as you, with rlimits only. They could read the "
    "hidden tests, the reference solution, other submissions and your files, and use the network.",
}


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
    """What a submission must never read: the kit and the exercise (reference, tests), the installed grader, its venv."""
    paths = [exercise.KIT_ROOT, exercise.load().root, Path(__file__).resolve().parents[1]]
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


def _with_journal(change: Callable[[dict], None], place: Path | None = None) -> None:
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
    needed = [PYTHON, _python_for_others().resolve()]
    return len(path.parts) > 2 and not any(_under(n, path) for n in needed)


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

    _with_journal(add)
    _hidden.update(by=os.getpid(), paths=found)
    atexit.register(unhide)
    for number in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(number) is signal.SIG_DFL:  # end by an exception: `finally` and atexit run
            signal.signal(number, _exit_on_signal)
    return found


def enter_mode(command: str, allow_none: bool, hidden: list[Path], create: tuple[Path, ...] = ()) -> str | None:
    """The isolation mode of this run, said on stderr when it is less than bubblewrap; None when it must refuse.

    In separate-uid mode, the kit and `hidden` are made unreadable to the jails first (`create`:
    folders to make before that, such as --out).
    """
    mode = isolation()
    if mode == "none" and not allow_none:
        print(refusal(command), file=sys.stderr)
        return None
    if ISOLATION_NOTES[mode]:
        print(ISOLATION_NOTES[mode], file=sys.stderr)
    if mode == "separate-uid":
        for folder in create:
            folder.mkdir(parents=True, exist_ok=True)
        prepare_separate_uid([*kit_paths(), *hidden])
    return mode


def prepare_separate_uid(paths: list[Path]) -> None:
    """Before the separate-uid mode runs anything: `paths` hidden, the jail's root directory made."""
    hide(paths)
    separate_root(_python_for_others())


def unhide() -> None:
    """Give back the permissions hide() took (once no other run holds them)."""
    if _hidden["by"] != os.getpid():
        return  # a forked worker: the command that hid them restores them
    me = _holder(os.getpid())

    def drop(journal: dict) -> None:
        for entry in journal.values():
            entry["holders"] = [h for h in entry["holders"] if h != me]

    _with_journal(drop)
    _hidden.update(by=None, paths=[])


def _exit_on_signal(number: int, frame: Any) -> None:
    raise SystemExit(128 + number)


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
    paths = [p for p in paths if not any(q != p and _under(p, q) for q in paths)]  # lib-dynload is in the stdlib
    built = python.resolve().stat()  # an upgraded interpreter gets a new root, not the old library
    key = [str(python), built.st_size, built.st_mtime_ns, *map(str, paths), ROOT_SKIPS]
    digest = hashlib.sha256(json.dumps(key).encode()).hexdigest()[:16]
    home = state_dir()
    root = home / f"root-{digest}"
    if (root / ".complete").exists():
        return root
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
        for place in ("tmp", "var/tmp", "dev/shm"):
            (building / place).mkdir(parents=True, exist_ok=True)
            (building / place).chmod(0o1777)
        building.chmod(0o755)
        (building / ".complete").touch()
        os.rename(building, root)
    except OSError:
        if not (root / ".complete").exists():
            raise
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return root


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _python_for_others() -> Path:
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


def _jail_uid() -> int:
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
        self.uid = _jail_uid() if root else None
        config = {
            "fds": inner,
            "limits": self.limits.rlimits(),
            "uid": self.uid,
            "pidns": self.mode == "bubblewrap",
            "nice": 0,
        }
        if not root and self.mode != "bubblewrap":
            # Without a uid of its own, RLIMIT_NPROC counts all of the grader user's processes.
            config["limits"]["RLIMIT_NPROC"] = _own_process_count() + self.limits.processes
        python = PYTHON if self.mode == "bubblewrap" or not root else _python_for_others()
        command = [str(python), "-I", "-S", "/jail/jail_child.py"]
        if self.mode == "separate-uid":
            hide(kit_paths())  # unless the command already hid them (and more)
            self.root = config["root"] = str(separate_root(python))
        if self.mode == "bubblewrap":
            argv = [
                shutil.which("bwrap"),
                *_bwrap_mounts(),
                *_bwrap_user(root),
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
        stdin = _config_pipe(config)
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
            _kill_uid(self.uid)
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


class SandboxedSubmission(CallsByName):
    """One jail per submission; the judge only ever sees plain values."""

    def __init__(
        self,
        path: str | os.PathLike,
        function: str | None = None,
        timeout: float = 2.0,
        *,
        source: str | None = None,
        filename: str | None = None,
        budget: float | None = None,
        limits: Limits | None = None,
        mode: str | None = None,
        signature: str | None = None,
        jail: Jail | None = None,
        modules: dict[str, str] | None = None,
    ):
        self.path = Path(path)
        self.modules = dict(modules or {})  # helper modules the submission may import, by name
        self.function = function or exercise.load().function
        self.timeout = timeout
        self.budget = budget
        self.limits = limits or Limits()
        self.mode = mode or isolation()
        self.filename = filename or self.path.name
        self.signature = signature or exercise.load().signature
        if source is None:  # the trusted side reads files (judging.discovery.read_source); the sandbox only runs code
            raise TypeError("SandboxedSubmission needs the submission's source")
        self.source = source
        self.load_output = ""
        self._used = 0.0  # seconds spent waiting on the submission: its loads and calls
        self._yielded = False  # its processes were reniced during a slow call
        self._answers = wire.AnswerLines()  # read from the answer pipe, not yet taken
        self._closed = False
        # Called once, the first time a call keeps us waiting: the grader can start other work.
        self.on_slow: Callable[[], None] | None = None
        self._own_jail = jail is None
        self._jail = jail or Jail(self.limits, self.mode)
        self._seq = 0
        self._child: int | None = None
        self._exit: dict | None = None
        try:
            self._spawn()
        except BaseException:
            self.close()  # now, not whenever the garbage collector gets to it
            raise

    # ------------------------------------------------------------ jail and child

    # The jail's pipes, under the names the protocol code uses.
    _ctl_w = property(lambda self: self._jail.ctl_w)
    _ctl_r = property(lambda self: self._jail.ctl_r)
    _req_w = property(lambda self: self._jail.req_w)
    _resp_r = property(lambda self: self._jail.resp_r)
    _proc = property(lambda self: self._jail.proc)
    _uid = property(lambda self: self._jail.uid)

    def _spawn(self) -> None:
        """A fresh child that has loaded the submission; raises LoadError if it cannot."""
        spawning = time.monotonic()  # a restart the submission caused counts in its budget
        event = None
        for _ in range(2):
            if not self._jail.alive():
                self._jail.close()
                self._jail.start()
            try:
                if self._jail.clean:
                    event = {"event": "killed"}  # the last submission's close killed all of it
                else:
                    self._send(self._ctl_w, {"op": "kill"})
                    event = self._control(lambda e: e.get("event") == "killed", LOAD_TIMEOUT)
                self._jail.clean = False
                if event is not None:
                    _drain(self._resp_r)
                    self._answers.clear()
                    self._send(self._ctl_w, {"op": "spawn"})
                    event = self._control(lambda e: e.get("event") == "spawned" and type(e.get("pid")) is int, LOAD_TIMEOUT)
            except (OSError, ProtocolError):
                event = None
            if event is not None:
                break
            # The server is gone (the submission may have killed it): a new jail, once.
            self._jail.close()
        if event is None:
            raise LoadError("the sandbox did not start")
        self._child, self._exit = event["pid"], None
        # Every request has a number nobody can guess, so an answer written ahead is refused.
        self._seq = secrets.randbits(62)
        positional, keywords = _parameters(self.signature)
        limit, by_budget = self._load_time_limit()
        load: Any = None
        try:
            # The code goes to the child alone: the server never holds a submission.
            self._send(
                self._req_w,
                {
                    "source": self.source,
                    "filename": self.filename,
                    "function": self.function,
                    "positional": positional,
                    "keywords": keywords,
                    "seq": self._seq,
                    "modules": self.modules,
                },
                deadline=spawning + limit,
            )
            payload = self._read_answer(self._seq, max(spawning + limit - time.monotonic(), 0.0))
            if payload is not None:
                load = wire.check_load(payload)
        except TimeoutError:
            pass  # it did not even read its code in time
        except OSError:
            raise LoadError("the sandbox did not start") from None
        except ProtocolError:
            load = "malformed"
        self._used += time.monotonic() - spawning
        if load is None:
            if self._exit:
                raise LoadError(f"loading the file crashed the process ({_exit_text(self._exit)})")
            if by_budget:
                raise LoadError(f"loading the file used up the time budget of {self.budget:g} s")
            raise LoadError(f"loading the file took longer than {limit:g} s")
        if not isinstance(load, dict):
            raise LoadError("the sandbox sent a malformed answer while loading the file")
        self.load_output = load["output"]
        if not load.get("ok"):
            if isinstance(load.get("signature"), str):
                raise LoadError(f"{self.function} takes {load['signature'][:200]}, but the tests call {self.signature}")
            if isinstance(load.get("error"), str):
                raise LoadError(load["error"][:2000])
            if not load.get("defined"):
                raise LoadError(missing_function_message(load["names"], self.function))
            raise LoadError(f"{self.function!r} is defined but is not a function")

    def _load_time_limit(self) -> tuple[float, bool]:
        """Seconds a load may take, and whether the submission's budget is what sets them."""
        limit = max(self.timeout * 5, 5.0)
        remaining = self._remaining()
        if remaining is not None and remaining < limit:
            return max(remaining, 0.0), True
        return limit, False

    def restart(self) -> None:
        """A fresh child (the state the last one built up is gone); strays are killed."""
        try:
            self._spawn()
        except LoadError:
            if not self.spent():
                raise  # else the next call says the budget is spent

    def sweep(self) -> None:
        """Kill any process the submission left running, keeping the child that answers calls."""
        try:
            self._send(self._ctl_w, {"op": "sweep"})
            self._control(lambda e: e.get("event") == "swept", 5.0)
        except (OSError, ProtocolError):
            pass

    # ------------------------------------------------------------ calls

    def call(self, *args: Any, **kwargs: Any) -> Any:
        answer = next(self.evaluate([(list(args), kwargs)]))
        if answer.output:
            sys.stdout.write(answer.output)
        return answer.result()

    def evaluate(self, calls: list[tuple[list, dict]]) -> Iterator[Answer]:
        """Answers to `calls`, made in order in the current child, as they arrive.

        A call that times out, crashes or runs past the budget yields that answer, and the
        rest of the batch is not made; the next call goes to a fresh child. So does an answer
        that is malformed: too long, or to a call that was never made.
        """
        if not calls:
            return
        remaining = self._remaining()
        if remaining is not None and remaining <= 0:
            yield self._budget_answer()
            return
        self._seq = secrets.randbits(62)
        limit, by_budget = self._call_limit()
        started = time.monotonic()
        try:
            # Writing the request is part of the first call: a child that stops reading hangs it.
            self._send(self._req_w, {"seq": self._seq, "calls": calls}, deadline=started + limit)
        except TimeoutError:
            yield self._late(by_budget)
            return
        except OSError:
            yield self._crashed()
            return
        finally:
            self._used += time.monotonic() - started
        first = started + limit  # the first answer's deadline, which the request's writing used a part of
        done = 0
        while done < len(calls):
            try:
                # Fast path: an answer already read (the child runs ahead of us in a batch).
                payload = self._answers.next(self._seq)
                if payload is None:
                    if done == 0:
                        limit = max(first - time.monotonic(), 0.0)
                    else:
                        limit, by_budget = self._call_limit()
                    waited = time.monotonic()
                    try:
                        payload = self._read_answer(self._seq, limit)
                    finally:
                        self._used += time.monotonic() - waited
                    if payload is None:
                        yield self._crashed() if self._exit is not None else self._late(by_budget)
                        return
                answer = _answer_from(payload)
            except ProtocolError as exc:
                yield self._failed("crash", f"the submission's process sent a malformed answer ({exc})")
                return
            done += 1
            yield answer

    def _call_limit(self) -> tuple[float, bool]:
        """Seconds the next call may take, and whether the submission's budget is what sets them."""
        remaining = self._remaining()
        if remaining is not None and remaining < self.timeout:
            return max(remaining, 0.0), True
        return self.timeout, False

    def _late(self, by_budget: bool) -> Answer:
        if by_budget:
            return self._failed("not_run", self._budget_text())
        return self._failed("timeout", f"the call took longer than {self.timeout:g} s")

    @contextmanager
    def uncharged(self) -> Iterator[None]:
        """Calls the grader makes for its own sake (to check the memo): no budget, and not paid from it."""
        used, budget = self._used, self.budget
        self.budget = None
        try:
            yield
        finally:
            self._used, self.budget = used, budget

    def _remaining(self) -> float | None:
        # The budget counts the submission's own time (loads and calls), not the tests' work on
        # the trusted side, so a busy grading machine does not eat into a student's budget.
        return None if not self.budget else self.budget - self._used

    def used(self) -> float:
        """Seconds the submission has used so far: its loads and calls."""
        return self._used

    def spent(self) -> str | None:
        """Why no further call can be made: the submission used up its time budget (None while it has some)."""
        remaining = self._remaining()
        return self._budget_text() if remaining is not None and remaining <= 0 else None

    def _budget_text(self) -> str:
        return f"not run: the submission used up its time budget of {self.budget:g} s"

    def _budget_answer(self) -> Answer:
        return Answer(False, kind="not_run", error=self._budget_text())

    def _failed(self, kind: str, message: str) -> Answer:
        try:
            self._spawn()
        except LoadError:
            pass  # the next call will report it
        return Answer(False, kind=kind, error=message)

    def _crashed(self) -> Answer:
        if self._exit is None:
            self._control(lambda e: False, 0.2)
        how = _exit_text(self._exit) if self._exit else "it stopped answering"
        return self._failed("crash", f"the submission's process ended during the call ({how})")

    # ------------------------------------------------------------ wire

    def _send(self, fd: int, message: dict, deadline: float | None = None) -> None:
        wire.send(fd, message, time.monotonic() + 2.0 if deadline is None else deadline)

    def _control(self, wanted, timeout: float) -> dict | None:
        """Read control events until one is `wanted`; remembers the child's exit on the way."""
        deadline = time.monotonic() + timeout
        while True:
            event = self._read_message(self._ctl_r, deadline)
            if event is None:
                return None
            self._note_exit(event)
            if wanted(event):
                return event

    def _note_exit(self, event: dict) -> None:
        if event.get("event") == "exit" and event.get("pid") == self._child:
            self._exit = event.get("status") if isinstance(event.get("status"), dict) else {}

    def _read_answer(self, seq: int, timeout: float) -> bytes | None:
        """The next answer line of request `seq` from the child (after "SEQ "), or None if it timed out or died."""
        deadline = time.monotonic() + timeout
        slow_at = time.monotonic() + SLOW_CALL
        try:
            return self._wait_answer(seq, deadline, slow_at)
        finally:
            if self._yielded:
                self._yielded = False
                _renice(self._jail.submission_processes(), 0)

    def _wait_answer(self, seq: int, deadline: float, slow_at: float | None) -> bytes | None:
        while True:
            payload = self._answers.next(seq)
            if payload is not None:
                return payload
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            if slow_at is not None:
                left = min(left, max(slow_at - time.monotonic(), 0.0))
            ready = select.select([self._resp_r, self._ctl_r], [], [], left)[0]
            if not ready and slow_at is not None and time.monotonic() >= slow_at:
                slow_at = None
                # A call this slow probably hangs: while it spins, it must not slow the grading of
                # others. Its processes get only the CPU nobody else wants until it answers.
                self._yielded = _renice(self._jail.submission_processes(), YIELDING_NICE)
                if self.on_slow is not None:
                    hook, self.on_slow = self.on_slow, None
                    hook()
                continue
            if self._resp_r in ready:
                # Read only while no whole line is buffered (AnswerLines keeps what it holds bounded).
                part = os.read(self._resp_r, READ_SIZE)
                if not part:
                    return None
                self._answers.feed(part)
                continue
            if self._ctl_r in ready:
                event = self._read_message(self._ctl_r, deadline)
                if event is None:
                    self._exit = self._exit or {"text": "the sandbox ended"}
                    return None
                self._note_exit(event)
                if self._exit is not None:
                    # The child is gone; an answer it wrote before dying may still be waiting.
                    if select.select([self._resp_r], [], [], 0)[0] or self._answers.has_line():
                        continue
                    return None

    def _read_message(self, fd: int, deadline: float) -> dict | None:
        return wire.read_message(fd, CONTROL_LIMIT, deadline)

    # ------------------------------------------------------------ end

    def close(self) -> None:
        """End every process of this submission (and the jail, unless it was lent)."""
        if self._closed:
            return  # a lent jail may serve another submission by now: leave it alone
        self._closed = True
        if not self._own_jail and self._jail.alive():
            try:
                self._send(self._ctl_w, {"op": "kill"})
                if self._control(lambda e: e.get("event") == "killed", 5.0) is not None:
                    self._jail.clean = True
                    return
            except (OSError, ProtocolError):
                pass
        self._jail.close()

    def __enter__(self) -> SandboxedSubmission:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


# ---------------------------------------------------------------- helpers


def _config_pipe(config: dict) -> int:
    """A pipe holding the jail server's configuration, to be its standard input.

    Not on its command line: every process can read a command line, in the jail and out.
    """
    read, write = os.pipe()
    try:
        wire.write_all(write, json.dumps(config).encode(), time.monotonic() + 2.0)  # a few hundred bytes: never waits
    finally:
        os.close(write)
    return read


def _renice(pids: list[int], nice: int) -> bool:
    """Set the niceness of `pids`; True if any changed. Lowering it again needs root: else it stays.

    Yielding (a positive `nice`) also moves them to SCHED_IDLE: a nice process still takes the
    idle moments between a worker's calls and its answers, an idle-class one gives them up.
    """
    changed = False
    policy = os.SCHED_IDLE if nice > 0 else os.SCHED_OTHER
    for pid in pids:
        try:
            os.sched_setscheduler(pid, policy, os.sched_param(0))
        except OSError:
            pass
        try:
            os.setpriority(os.PRIO_PROCESS, pid, nice)
            changed = True
        except OSError:
            pass
    return changed


def _parameters(signature: str) -> tuple[int, list[str]]:
    """From "f(a, b, c=1)": how many positional arguments the tests pass, and the keyword names."""
    inside = signature[signature.index("(") + 1 : signature.rindex(")")]
    params = [p.strip() for p in inside.split(",") if p.strip()]
    return sum("=" not in p for p in params), [p.split("=")[0].strip() for p in params if "=" in p]


def _drain(fd: int) -> None:
    """Drop what a dead child left in a pipe: a bounded amount, in case something still writes."""
    for _ in range(1024):
        if not select.select([fd], [], [], 0)[0] or not os.read(fd, READ_SIZE):
            return


def _exit_text(status: dict) -> str:
    if "signal" in status:
        return f"killed by {status.get('name')}: {status.get('text')}"[:200]
    if "exit" in status:
        return f"exit status {status['exit']}"[:200]
    return str(status.get("text", "it ended"))[:200]


_FLOATS: dict[bytes, Answer] = {}  # "f:REPR" payloads already checked: a class repeats a few thousand


def _answer_from(payload: bytes) -> Answer:
    """An answer line's payload: "f:REPR" (a float returned, nothing printed: most answers) or "j:JSON".

    Answers of the first kind are shared, checked once: nobody changes an Answer.
    """
    answer = _FLOATS.get(payload)
    if answer is not None:
        return answer
    text = wire.float_text(payload)
    if text is None:
        raw = wire.check_answer(wire.json_payload(payload))
        if raw["ok"]:
            return Answer(True, value=raw["value"], output=raw["output"])
        return Answer(False, kind="exception", error=raw["error"], traceback=raw["traceback"], output=raw["output"])
    if len(_FLOATS) > 100_000:
        _FLOATS.clear()
    answer = _FLOATS[payload] = Answer(True, value={"float": text}, _key=f"f:{text}")
    return answer


def decode(value: Any) -> Any:
    """Plain data from a checked answer: floats, tuples and dicts as the child tagged them, Opaque for objects."""
    return wire.decode(value, Opaque)


def processes_of(uid: int) -> list[int]:
    """Live processes running as `uid`."""
    return [p.pid for p in wire.processes() if p.uid == uid and not p.zombie]


def _kill_uid(uid: int) -> None:
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


def _own_process_count() -> int:
    """Processes of our real uid, which RLIMIT_NPROC counts (zombies too)."""
    uid = os.getuid()
    return sum(p.uid == uid for p in wire.processes())
