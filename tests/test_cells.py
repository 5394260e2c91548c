"""Each submission's cell: its own namespaces, tmpfs, uid, cgroup and seccomp filter, and nothing of it outliving it."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import KIT_ROOT, SEPARATE_UID, as_nobody

from grader.core.submission import SubmissionError
from grader.sandbox import cgroups, seccomp, uids
from grader.sandbox import host as sandbox
from grader.sandbox.host import Jail, Limits, SandboxedSubmission
from grader.sandbox.lifecycle import CgroupClock

MODES = ["bubblewrap", SEPARATE_UID]
AS_ROOT = "a uid of its own for each submission, and a cgroup, are root's to give"


@pytest.fixture
def restores_the_kit():
    yield
    sandbox.unhide()  # the separate-uid jail hid the kit from its uid


def box(source: str, **kwargs) -> SandboxedSubmission:
    return SandboxedSubmission("student.py", source=source, **kwargs)


def one_after_another(mode: str, first: str, second: str, **kwargs) -> object:
    """What `second` answers to its first call when graded right after `first`, in the same jail."""
    jail = Jail(mode=mode, **kwargs)
    try:
        a = SandboxedSubmission("a.py", jail=jail, source=first, mode=mode)
        a.meteor_score("", "")
        a.close()
        b = SandboxedSubmission("b.py", jail=jail, source=second, mode=mode)
        try:
            return b.meteor_score("", "")
        finally:
            b.close()
    finally:
        jail.close()


# ---------------------------------------------------------------- the seccomp filter

# (name, x86_64 number, arguments): calls every submission is refused, with EPERM.
REFUSED = [
    ("keyctl", 250, (0, -4, 0)),
    ("add_key", 248, (b"user", b"k", b"v", 1, -4)),
    ("request_key", 249, (b"user", b"k", 0, 0)),
    ("ptrace", 101, (16, 1, 0, 0)),
    ("mount", 165, (b"none", b"/tmp", b"tmpfs", 0, 0)),
    ("umount2", 166, (b"/tmp", 0)),
    ("pivot_root", 155, (b"/tmp", b"/tmp")),
    ("bpf", 321, (0, 0, 0)),
    ("perf_event_open", 298, (0, 0, -1, -1, 0)),
    ("userfaultfd", 323, (0,)),
    ("kexec_load", 246, (0, 0, 0, 0)),
    ("kexec_file_load", 320, (0, 0, 0, 0, 0)),
    ("init_module", 175, (0, 0, b"")),
    ("finit_module", 313, (0, b"", 0)),
    ("delete_module", 176, (b"x", 0)),
    ("unshare", 272, (0x20000000,)),
    ("setns", 308, (0, 0)),
    ("chroot", 161, (b"/",)),
    ("setsid", 112, ()),
    ("sched_setaffinity", 203, (0, 8, 0)),
    ("io_uring_setup", 425, (1, 0)),
    ("process_vm_readv", 310, (1, 0, 0, 0, 0, 0)),
    ("personality", 135, (0x0040000,)),  # ADDR_NO_RANDOMIZE
]


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the system call numbers above are x86_64's")
@pytest.mark.parametrize("mode", MODES)
def test_the_calls_a_neighbour_could_be_reached_through_fail_with_eperm(mode, restores_the_kit):
    calls = [(name, number, args) for name, number, args in REFUSED]
    source = (
        "import ctypes, os\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "def meteor_score(r, c, **k):\n"
        "    got = {}\n"
        f"    for name, number, args in {calls!r}:\n"
        "        result = libc.syscall(number, *args)\n"
        "        got[name] = 'allowed' if result >= 0 else os.strerror(ctypes.get_errno())\n"
        "    return str(sorted(got.items()))\n"
    )
    with box(source, mode=mode) as jailed:
        got = dict(eval(jailed.meteor_score("", "")))  # our own repr of plain strings
    assert got == {name: os.strerror(errno.EPERM) for name, _, _ in REFUSED}


def test_the_filter_is_built_by_libseccomp_from_dockers_list_less_what_is_taken_out():
    allowed = seccomp.allowed(seccomp.Policy(ipc=True, network=True))
    assert "read" in allowed and "clone" not in allowed and "setsid" not in allowed and "keyctl" not in allowed
    assert "mq_open" in allowed and "mq_open" not in seccomp.allowed(seccomp.Policy(ipc=False, network=True))
    program = seccomp.bpf(seccomp.Policy(ipc=True, network=True))
    assert len(program) % 8 == 0 and len(program) > 8 * len(allowed) // 4  # struct sock_filter, one test per call at least


def test_threads_and_processes_still_work_under_the_filter():
    source = (
        "import os, threading, subprocess\n"
        "def meteor_score(r, c, **k):\n"
        "    out = []\n"
        "    t = threading.Thread(target=lambda: out.append('thread')); t.start(); t.join()\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        os._exit(7)\n"
        "    out.append(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))\n"
        "    out.append(subprocess.run(['echo', 'hi'], capture_output=True, text=True).stdout.strip())\n"
        "    return str(out)\n"
    )
    with box(source) as jailed:
        assert jailed.meteor_score("", "") == "['thread', 7, 'hi']"


# ---------------------------------------------------------------- a cell of its own


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.needs_root(AS_ROOT)
def test_every_submission_gets_a_fresh_uid_cgroup_and_namespaces(mode, restores_the_kit):
    source = "import os\ndef meteor_score(r, c, **k):\n    return f'{os.getuid()}|{os.uname().nodename}'\n"
    jail = Jail(mode=mode)
    seen = []
    try:
        for _ in range(3):
            with SandboxedSubmission("a.py", jail=jail, source=source, mode=mode) as jailed:
                uid, host = jailed.meteor_score("", "").split("|")
                cell = jailed._cell
                seen.append((int(uid), cell.cgroup.dirs[0][1]))
                assert cell.isolated and host == "cell" and int(uid) == cell.uid
                assert uids.LOW <= int(uid) < uids.HIGH
    finally:
        jail.close()
    assert len({uid for uid, _ in seen}) == 3 and len({path for _, path in seen}) == 3
    assert not any(path.exists() for _, path in seen)  # every cgroup removed with its cell


@pytest.mark.parametrize("mode", MODES)
def test_tmp_var_tmp_and_dev_shm_are_a_small_tmpfs_of_the_cells_own(mode, restores_the_kit):
    source = (
        "import os\n"
        "def meteor_score(r, c, **k):\n"
        "    wrote = {}\n"
        "    for place in ('/tmp', '/var/tmp', '/dev/shm'):\n"
        "        total = 0\n"
        "        try:\n"
        "            for i in range(200):\n"
        "                with open(f'{place}/fill{i}', 'wb') as f:\n"
        "                    f.write(b'x' * (4 << 20))\n"
        "                total += 4\n"
        "        except OSError as exc:\n"
        "            wrote[place] = (total, exc.errno)\n"
        "    return str(wrote)\n"
    )
    limits = Limits(tmp_mb=16)
    with box(source, mode=mode, limits=limits, timeout=10) as jailed:
        wrote = eval(jailed.meteor_score("", ""))
    assert wrote == {"/tmp": (wrote["/tmp"][0], errno.ENOSPC), "/var/tmp": (4, errno.ENOSPC), "/dev/shm": (4, errno.ENOSPC)}
    assert 8 <= wrote["/tmp"][0] <= 16  # 16 MB, a few pages of which hold the folder itself


def test_the_rest_of_the_file_system_is_read_only_in_the_cell():
    source = (
        "import os\n"
        "def meteor_score(r, c, **k):\n"
        "    refused = []\n"
        "    for path in ('/x', '/dev/x', '/jail/x'):\n"
        "        try:\n"
        "            open(path, 'w').close()\n"
        "        except OSError as exc:\n"
        "            refused.append(exc.errno in (13, 30))\n"
        "    return str(refused)\n"
    )
    with box(source) as jailed:
        assert jailed.meteor_score("", "") == "[True, True, True]"


@pytest.mark.parametrize("mode", MODES)
def test_a_colluding_pair_shares_nothing_through_the_kernel(mode, kit_root, restores_the_kit):
    reference = (kit_root / "solutions" / "reference.py").read_text()
    leaver = (Path(__file__).parent / "hostile" / "leftovers" / "leaves_ipc_and_files.py").read_text()
    reader = (Path(__file__).parent / "hostile" / "leftovers" / "reads_leftovers.py").read_text()
    first = f"{reference}\n{leaver}\nleave({reference!r})\n"
    second = reader.replace('if reference == "leftovers?"', "if True")
    got = one_after_another(mode, first, second)
    assert got == str({"shm": False, "msg": False, "sem": False, "mq": False, "key": False, "files": 0})


@pytest.mark.needs_root(AS_ROOT)
def test_without_namespaces_ipc_and_sockets_are_refused_and_nothing_is_writable(restores_the_kit):
    """Root in a container that allows no namespace (Gradescope): no tmpfs of its own, so no writable folder at all."""
    source = (
        "import ctypes, os, socket\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "def meteor_score(r, c, **k):\n"
        "    got = [libc.shmget(1, 4096, 0o1000 | 0o600) < 0 and ctypes.get_errno()]\n"
        "    try:\n"
        "        socket.socket(socket.AF_UNIX); got.append('socket')\n"
        "    except OSError as exc:\n"
        "        got.append(exc.errno)\n"
        "    for place in ('/tmp', '/var/tmp', '/dev/shm', '/'):\n"
        "        try:\n"
        "            open(place + '/x', 'w').close(); got.append(place)\n"
        "        except OSError as exc:\n"
        "            got.append(exc.errno)\n"
        "    return str(got)\n"
    )
    jail = Jail(mode="separate-uid", namespaces=False)
    try:
        with SandboxedSubmission("a.py", jail=jail, source=source, mode="separate-uid") as jailed:
            assert not jailed._cell.isolated
            assert jailed.meteor_score("", "") == str([errno.EPERM, errno.EPERM, *[errno.EACCES] * 4])
    finally:
        jail.close()


@pytest.mark.needs_root(AS_ROOT)
@pytest.mark.parametrize("namespaces", [True, False])
def test_every_process_of_a_submission_dies_with_it(namespaces, restores_the_kit):
    source = (
        "import os, time\n"
        "def meteor_score(r, c, **k):\n"
        "    for _ in range(5):\n"
        "        if os.fork() == 0:\n"
        "            os.setpgid(0, 0)\n"
        "            if os.fork() == 0:\n"
        "                while True: pass\n"
        "            os._exit(0)\n"
        "    time.sleep(0.2)\n"
        "    return 0.5\n"
    )
    jail = Jail(mode="separate-uid", namespaces=namespaces)
    try:
        jailed = SandboxedSubmission("a.py", jail=jail, source=source, mode="separate-uid")
        assert jailed.meteor_score("", "") == 0.5
        uid = jailed._uid
        assert len(sandbox.processes_of(uid)) >= 6
        jailed.close()  # a worker's jail closes the cell and asks for the next at once ...
        again = SandboxedSubmission("b.py", jail=jail, source="def meteor_score(r, c, **k):\n    return 1.0\n")
        assert sandbox.processes_of(uid) == []  # ... which opens once all of the last one is gone
        assert again.meteor_score("", "") == 1.0
        again.close()
    finally:
        jail.close()


ABANDONED = """
import json, os, signal, sys, time
from grader.sandbox import wire
from grader.sandbox.child import STASH_LOOK
from grader.sandbox.host import Jail, SandboxedSubmission
mode = sys.argv[1]
jail = Jail(mode=mode)
box = SandboxedSubmission("a.py", jail=jail, source="def meteor_score(r, c, **k):\\n    return 0.5\\n", mode=mode)
assert box.meteor_score("", "") == 0.5
box.restart()  # the copy set aside as loaded, woken: the child now
assert box.meteor_score("", "") == 0.5
children = wire.children_of(wire.processes())
cell, level = [], [jail.proc.pid]
while level:
    level = [c for pid in level for c in children.get(pid, ())]
    cell += level
os.kill(jail.proc.pid, signal.SIGKILL)  # the jail ends abruptly: its server killed, no cell closed
jail.proc.wait()
time.sleep(STASH_LOOK + 1.5)
print(json.dumps({"cell": cell, "alive": [p.pid for p in wire.processes() if p.pid in cell and not p.zombie]}))
"""


def test_nothing_of_a_cell_outlives_a_jail_that_ends_abruptly_even_without_namespaces(tmp_path):
    """The server killed with its cells open (a worker gone, a jail torn down): the cells' inits die with it,
    their children with them, and the copies set aside as loaded see their cell gone. Mode none has no
    pid namespace, no uid of its own and no cgroup that could do it instead (a stash was once left
    waiting for days after CI, adopted by the machine's init)."""
    run = subprocess.run(
        [sys.executable, "-c", ABANDONED, "none"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(KIT_ROOT)},
        cwd=str(tmp_path),
    )
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert len(got["cell"]) >= 3  # two cells' inits (one made ahead), a child, a copy set aside
    assert got["alive"] == []


# ---------------------------------------------------------------- limits the kernel enforces


@pytest.mark.needs_root(AS_ROOT)
def test_the_cell_s_cgroup_caps_memory_and_processes_in_all():
    found = cgroups.available()
    assert found is not None and {"cpu", "memory", "pids", "usage"} <= found.roles, "as root this machine has them"
    source = (
        "import os, time\n"
        "def meteor_score(r, c, **k):\n"
        "    if r == 'pids':\n"
        "        n = 0\n"
        "        try:\n"
        "            while True:\n"
        "                if os.fork() == 0:\n"
        "                    time.sleep(30)\n"
        "                n += 1\n"
        "        except OSError:\n"
        "            return n\n"
        "    children = []\n"
        "    for _ in range(8):\n"  # 8 processes of 100 MB each: each under RLIMIT_AS, 800 MB in all
        "        pid = os.fork()\n"
        "        if pid == 0:\n"
        "            held = bytearray(100 << 20); time.sleep(30); os._exit(0)\n"
        "        children.append(pid)\n"
        "    time.sleep(3)\n"
        "    killed = 0\n"
        "    for pid in children:\n"
        "        done, status = os.waitpid(pid, os.WNOHANG)\n"
        "        killed += bool(done) and os.WIFSIGNALED(status) and os.WTERMSIG(status) == 9\n"
        "    return killed\n"
    )
    limits = Limits(memory_mb=256, processes=16)
    with box(source, limits=limits, timeout=10) as jailed:
        assert jailed.meteor_score("pids", "") < 16 + 4  # the cell's cap, whatever RLIMIT_NPROC says
    with box(source, limits=limits, timeout=10) as jailed:
        try:
            answer = jailed.meteor_score("memory", "")
        except SubmissionError as exc:
            answer = exc.kind
        assert answer != "all held"  # the cap killed some of them (or the child itself)


@pytest.mark.needs_root(AS_ROOT)
def test_a_submission_s_processes_share_one_cpu_whatever_they_fork():
    """Four spinning processes on a machine of two cores or more: the cap on the jail's cgroup folder gives them one CPU."""
    source = (
        "import os, time\n"
        "def meteor_score(r, c, **k):\n"
        "    end = time.monotonic() + 1.5\n"
        "    kids = []\n"
        "    for _ in range(3):\n"
        "        pid = os.fork()\n"
        "        if pid == 0:\n"
        "            break\n"
        "        kids.append(pid)\n"
        "    while time.monotonic() < end:\n"
        "        pass\n"
        "    if len(kids) < 3:\n"
        "        os._exit(0)\n"
        "    for pid in kids:\n"
        "        os.waitpid(pid, 0)\n"
        "    return 1.0\n"
    )
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one core: nothing to cap")
    with box(source, timeout=20) as jailed:
        cgroup = jailed._cell.cgroup
        assert cgroup is not None and cgroup.dirs[0][1].parent.name == jailed._jail.group
        before, started = cgroup.cpu_seconds(), time.monotonic()
        assert jailed.meteor_score("", "") == 1.0
        used, took = cgroup.cpu_seconds() - before, time.monotonic() - started
    assert took >= 1.5 and used / took < 1.3  # without the cap: about 2 (every core)


def test_a_call_s_time_limit_counts_its_cpu_time_not_a_busy_machine_s_wall_clock():
    """Six spinners outside the jail share its CPU: a call needing 0.6 s of CPU still passes with a 1 s limit."""
    source = (
        "import time\n"
        "def meteor_score(r, c, **k):\n"
        "    t = time.process_time()\n"
        "    while time.process_time() - t < float(r):\n"
        "        pass\n"
        "    return 1.0\n"
    )
    # The jail and the spinners on one core: the call gets a share of it, never the whole.
    cores = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(cores)})
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(6)]
    try:
        with box(source, timeout=1.0) as jailed:
            started = time.monotonic()
            assert jailed.meteor_score("0.6", "") == 1.0
            took = time.monotonic() - started
            with pytest.raises(SubmissionError) as caught:
                jailed.meteor_score("5", "")
    finally:
        for spinner in spinners:
            spinner.kill()
        os.sched_setaffinity(0, cores)
    assert took > 1.0  # it did wait longer than its limit, for the CPU
    assert caught.value.kind == "timeout" and caught.value.message == "the call took longer than 1 s"


def test_a_call_that_sleeps_is_capped_on_its_own_time():
    with box("import time\ndef meteor_score(r, c, **k):\n    time.sleep(60)\n", timeout=0.5) as jailed:
        started = time.monotonic()
        with pytest.raises(SubmissionError) as caught:
            jailed.meteor_score("", "")
    assert caught.value.kind == "timeout" and "did not return within 1.5 s" in caught.value.message
    assert 1.5 <= time.monotonic() - started < 5


# ---------------------------------------------------------------- uids that belong to nobody


def test_a_uid_is_taken_only_when_no_account_range_or_process_holds_it(monkeypatch):
    held_by_a_process = uids.LOW + 5
    monkeypatch.setattr(uids, "_ranges", lambda: [(uids.LOW + 10, uids.LOW + 20)])
    monkeypatch.setattr(uids.pwd, "getpwuid", lambda uid: (_ for _ in ()).throw(KeyError) if uid != uids.LOW + 30 else "alice")
    monkeypatch.setattr(uids.grp, "getgrgid", lambda gid: (_ for _ in ()).throw(KeyError) if gid != uids.LOW + 31 else "staff")
    live = {held_by_a_process}
    assert uids.held(held_by_a_process, live) and uids.held(uids.LOW + 15, live)
    assert uids.held(uids.LOW + 30, live) and uids.held(uids.LOW + 31, live)
    assert not uids.held(uids.LOW + 40, live)
    picks = iter([5, 15, 30, 31, 40])
    monkeypatch.setattr(uids.secrets, "randbelow", lambda n: next(picks))
    monkeypatch.setattr(uids, "_live", {"at": time.monotonic(), "uids": live})
    assert uids.free_uid() == uids.LOW + 40


@pytest.mark.needs_root("it starts a process as another uid")
def test_closing_a_jail_never_kills_a_process_of_a_uid_it_did_not_choose(restores_the_kit):
    stranger = 1_000_123  # a uid the old kit assumed free: on a directory-service host, a real person's
    sleeper = subprocess.Popen(["setpriv", f"--reuid={stranger}", f"--regid={stranger}", "--clear-groups", "sleep", "60"])
    try:
        time.sleep(0.2)
        for mode in ("bubblewrap", "separate-uid"):
            jail = Jail(mode=mode)
            with SandboxedSubmission(
                "a.py", jail=jail, source="def meteor_score(r, c, **k):\n    return 1.0\n", mode=mode
            ) as jailed:
                assert jailed.meteor_score("", "") == 1.0 and jailed._uid != stranger
            jail.close()
        assert sleeper.poll() is None
    finally:
        sleeper.kill()


# ---------------------------------------------------------------- the unprivileged jail


DRIVER = """
import json, sys
from grader.sandbox.host import SandboxedSubmission, Jail
jail = Jail()
out = {}
try:
    for name, source in json.loads(sys.argv[1]):
        with SandboxedSubmission(name, jail=jail, source=source) as box:
            out[name] = box.meteor_score("", "")
finally:
    jail.close()
print(json.dumps(out))
"""

PTRACER = (
    "import ctypes, os\n"
    "def meteor_score(r, c, **k):\n"
    "    libc, done = ctypes.CDLL(None, use_errno=True), []\n"
    "    seen = [int(p) for p in os.listdir('/proc') if p.isdigit()] if os.path.isdir('/proc') else []\n"
    "    for pid in {os.getppid(), *seen} - {os.getpid()}:\n"
    "        if libc.ptrace(16, pid, 0, 0) == 0:\n"
    "            done.append(('ptrace', pid))\n"
    "        try:\n"
    "            open(f'/proc/{pid}/mem', 'rb').close(); done.append(('mem', pid))\n"
    "        except OSError:\n"
    "            pass\n"
    "    return str(done)\n"
)


@pytest.mark.needs_root("it runs the jail as uid 65534, which only root can switch to")
def test_unprivileged_no_submission_reaches_the_server_or_shares_with_the_next(kit_root, tmp_path):
    reference = (kit_root / "solutions" / "reference.py").read_text()
    leaver = (Path(__file__).parent / "hostile" / "leftovers" / "leaves_ipc_and_files.py").read_text()
    reader = (Path(__file__).parent / "hostile" / "leftovers" / "reads_leftovers.py").read_text()
    who = "import os\ndef meteor_score(r, c, **k):\n    return f'{os.getuid()}|' + open('/proc/self/status').read().split('CapEff:')[1].split()[0]\n"
    plan = [
        ("ptrace.py", PTRACER),
        ("leaver.py", f"{reference}\n{leaver}\nleave({reference!r})\ndef meteor_score(r, c, **k):\n    return 0.0\n"),
        ("reader.py", reader.replace('if reference == "leftovers?"', "if True")),
        ("who.py", who),
    ]
    tmp_path.chmod(0o755)
    run = subprocess.run(
        as_nobody([sys.executable, "-c", DRIVER, json.dumps(plan)]),
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PYTHONPATH": str(KIT_ROOT)},
        cwd=str(tmp_path),
    )
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got["ptrace.py"] == "[]"  # its /proc shows the cell's init alone: stopped, traced or read by nobody
    assert got["reader.py"] == str({"shm": False, "msg": False, "sem": False, "mq": False, "key": False, "files": 0})
    assert got["who.py"] == "0|0000000000000000"  # root of its user namespace, without a single capability


# ---------------------------------------------------------------- a fresh child is the submission as loaded

COUNTS_LOADS = (
    "import os, threading\n"
    "with open('/tmp/loads', 'a') as f:\n"
    "    f.write('x')\n"
    "CALLS = []\n"
    "def meteor_score(r, c, **k):\n"
    "    CALLS.append(r)\n"
    "    if r == 'kill the parent':\n"
    "        os.kill(os.getppid(), 9)\n"
    "    if r == 'kill the copy':\n"
    "        for pid in os.listdir('/proc'):\n"
    "            if pid.isdigit() and open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()[1] == str(os.getpid()):\n"
    "                os.kill(int(pid), 9)\n"
    "    return f\"{len(open('/tmp/loads').read())} {len(CALLS)}\"\n"
)


def test_a_restart_wakes_the_copy_set_aside_when_the_file_loaded_instead_of_loading_it_again():
    with box(COUNTS_LOADS) as jailed:
        assert jailed.meteor_score("a", "") == "1 1" and jailed.meteor_score("b", "") == "1 2"
        for _ in range(3):
            jailed.restart()
            assert jailed.meteor_score("c", "") == "1 1"  # loaded once; its calls forgotten: the state just after loading


THREADED = (
    "import threading, time\n"
    "threading.Thread(target=lambda: time.sleep(60), daemon=True).start()\n"
    "def meteor_score(r, c, **k):\n"
    "    return str(threading.active_count())\n"
)


def test_a_file_that_starts_threads_or_kills_its_copy_is_loaded_again_at_a_restart():
    with box(THREADED) as jailed:
        assert jailed.meteor_score("a", "") == "2"
        for _ in range(2):
            jailed.restart()
            assert jailed.meteor_score("a", "") == "2"  # loaded anew: a copy, a fork, would have lost the thread
    with box(COUNTS_LOADS) as jailed:
        if jailed._cell.loads:
            # The copy is the cell's init, which no process of the cell can kill (a pid namespace's init).
            assert jailed.meteor_score("kill the parent", "") == "1 1"
            jailed.restart()
            assert jailed.meteor_score("a", "") == "1 1"
            return
        assert jailed.meteor_score("kill the copy", "") == "1 1"
        jailed.restart()
        assert jailed.meteor_score("a", "") == "2 1"  # its copy was gone: the file was loaded anew
        jailed.restart()
        assert jailed.meteor_score("a", "") == "2 1"  # and that load set one aside again


def test_draining_cgroup_removals_never_waits_on_a_removal_thread_that_is_gone(tmp_path):
    # As Python shuts down, a jail closed by its finalizer drains the removals after the daemon
    # thread has stopped: it once waited for it forever (Debian's python3.11, at a test's end).
    script = (
        "import os, queue, sys, threading\nfrom pathlib import Path\nfrom grader.sandbox import cgroups\n"
        "folder = Path(sys.argv[1]) / 'empty'\nfolder.mkdir()\n"
        "gone = threading.Thread(target=lambda: None)\ngone.start()\ngone.join()\n"
        "work = queue.Queue()\nwork.put(folder)\n"
        "cgroups._removals.update(pid=os.getpid(), queue=work, thread=gone)\n"
        "cgroups.drain()\nprint(folder.exists())\n"
    )
    run = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert run.stdout == "False\n", run.stderr


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.needs_root(AS_ROOT)
def test_an_init_that_loaded_the_file_and_stopped_listening_costs_its_own_submission_alone(mode, restores_the_kit):
    # The file's import makes the init (which loads it, where a cgroup counts the CPU) deaf to the grader.
    deaf = (
        "import select, time\nselect.select = lambda *a, **k: time.sleep(3600)\ndef meteor_score(r, c, **k):\n    return 0.25\n"
    )
    jail = Jail(mode=mode)
    try:
        started = time.monotonic()
        with SandboxedSubmission("a.py", jail=jail, source=deaf, mode=mode) as jailed:
            assert jailed._cell.loads and jailed.meteor_score("", "") == 0.25
            assert isinstance(jailed._life.pipes.clock, CgroupClock)  # its CPU time is never the init's word
            jailed.restart()  # not answered: a new cell loads it again
            assert jailed.meteor_score("", "") == 0.25
        with SandboxedSubmission(
            "b.py", jail=jail, source="def meteor_score(r, c, **k):\n    return 0.5\n", mode=mode
        ) as next_one:
            assert next_one.meteor_score("", "") == 0.5  # its cell was killed through its cgroup, not waited for
        assert time.monotonic() - started < 8
    finally:
        jail.close()


def test_the_last_restart_keeps_no_copy_and_a_restart_after_it_loads_the_file_again():
    with box(COUNTS_LOADS) as jailed:
        jailed.restart(last=True)
        assert jailed.meteor_score("a", "") == "1 1"  # woken, as any restart
        jailed.restart()
        if jailed._cell.loads:  # the copy is the cell's init, which costs no fork of its own: it stays
            assert jailed.meteor_score("b", "") == "1 1"
            return
        assert jailed.meteor_score("b", "") == "2 1"  # no copy was kept: loaded anew, and the state is fresh
        jailed.restart()
        assert jailed.meteor_score("c", "") == "2 1"  # that load set one aside again


@pytest.mark.needs_root(AS_ROOT)
def test_a_grading_worker_leaves_no_cgroup_folder_behind():
    """A worker (multiprocessing, which ends with os._exit) removes its folders too: each left one slows every CPU cap."""
    script = (
        "import multiprocessing as mp\n"
        "from grader.sandbox.host import SandboxedSubmission\n"
        "def work(pids):\n"
        "    import os\n"
        "    with SandboxedSubmission('a.py', source='def meteor_score(r, c, **k):\\n    return 1.0\\n') as jailed:\n"
        "        assert jailed.meteor_score('', '') == 1.0 and jailed._cell.cgroup is not None\n"
        "    pids.put(os.getpid())\n"
        "if __name__ == '__main__':\n"
        "    pids = mp.get_context('fork').Queue()\n"
        "    worker = mp.get_context('fork').Process(target=work, args=(pids,))\n"
        "    worker.start(); worker.join()\n"
        "    print(pids.get(timeout=5))\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=KIT_ROOT)
    assert run.returncode == 0, run.stderr
    pid = int(run.stdout)
    parents = {h.base.parent for h in cgroups.hierarchies()}
    assert parents, "as root this machine has cgroups"
    left = [p for parent in parents for p in parent.glob(f"meteor-kit-{pid}-*")]
    assert left == []


def test_folders_of_graders_that_are_gone_are_swept_and_no_other(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    old = time.time() - 2 * cgroups.STALE
    folders = {
        "gone": tmp_path / f"meteor-kit-{dead.pid}-abc123",
        "gone, but changed a moment ago": tmp_path / f"meteor-kit-{dead.pid}-def456",
        "alive": tmp_path / f"meteor-kit-{os.getpid()}-abc123",
        "not ours": tmp_path / f"other-{dead.pid}-abc123",
    }
    for name, folder in folders.items():
        (folder / "jail-1" / "cell-2").mkdir(parents=True)
        if name != "gone, but changed a moment ago":
            os.utime(folder, (old, old))
    busy = tmp_path / f"meteor-kit-{dead.pid}-fed987"  # a cgroup that still holds a process: rmdir refuses it
    (busy / "jail-1").mkdir(parents=True)
    (busy / "jail-1" / "cgroup.procs").write_text("1\n")
    os.utime(busy, (old, old))
    cgroups._sweep(tmp_path)
    assert {name for name, folder in folders.items() if folder.exists()} == {
        "gone, but changed a moment ago",
        "alive",
        "not ours",
    }
    assert (busy / "jail-1" / "cgroup.procs").exists()


@pytest.mark.needs_root(AS_ROOT)
def test_folders_removed_under_a_live_grader_are_made_again():
    jail = Jail()
    try:
        with SandboxedSubmission("a.py", jail=jail, source="def meteor_score(r, c, **k):\n    return 1.0\n") as first:
            assert first.meteor_score("", "") == 1.0
        jail.close()  # its cells' and its own folders are gone; the process's base folders stay ...
        found = cgroups.available()
        assert found is not None
        for base in list(found.made):
            base.rmdir()  # ... until another grader removes them, taking us for gone
        with SandboxedSubmission("b.py", jail=jail, source="def meteor_score(r, c, **k):\n    return 0.5\n") as second:
            assert second.meteor_score("", "") == 0.5 and second._cell.cgroup is not None
    finally:
        jail.close()
