"""The sandbox on its own: what a submission inside it can see and do, and what comes back."""

from __future__ import annotations

import json
import os
import site
import sys
import time
from pathlib import Path

import pytest

from grader.core.checks import Opaque
from grader.core.submission import LoadError, SubmissionError
from grader.sandbox import host as sandbox
from grader.sandbox import separate_uid
from grader.sandbox.bubblewrap import bwrap_mounts
from grader.sandbox.host import Jail, Limits, SandboxedSubmission, describe_interpreter, isolation, processes_of
from grader.sandbox.interpreter import under
from tests.conftest import SEPARATE_UID


def jail(source: str, **kwargs) -> SandboxedSubmission:
    return SandboxedSubmission("student.py", source=source, **kwargs)


HOSTILE = Path(__file__).parent / "hostile"
NOTHING_LEFT = {"shm": False, "msg": False, "sem": False, "mq": False, "key": False, "files": 0}


def test_bubblewrap_is_the_isolation_on_this_machine():
    # The Makefile installs bubblewrap; without it this must fail, not skip. .ci/run runs this
    # file with a venv of Debian's /usr/bin/python3.11 too (dist-packages, no site-packages).
    assert isolation() == "bubblewrap", sandbox.probe().problem


def test_the_jail_binds_only_paths_that_exist_and_hides_every_import_location_but_the_stdlib():
    described = sandbox.interpreter()
    mounts = bwrap_mounts()
    for option, path in zip(mounts, mounts[1:]):
        if option in ("--ro-bind", "--tmpfs"):
            assert Path(path).exists(), path
    places = {Path(p).resolve() for p in [*site.getsitepackages([sys.base_prefix]), *sys.path] if p and Path(p).is_dir()}
    stdlib = {Path(p).resolve() for p in sys.path if p and "site-packages" not in p and "dist-packages" not in p}
    for place in places - stdlib:
        visible = any(under(place, root) for root in described.roots)
        assert not visible or any(under(place, h) for h in described.hidden), place


@pytest.mark.parametrize("layout", ["debian", "conda", "uv", "pyenv"])
def test_any_python_layout_gets_its_prefix_bound_and_its_packages_hidden(tmp_path, layout):
    # The same rules for every layout, on a simulated tree: only existing paths, site-packages covered.
    base = {
        "debian": Path("/usr"),
        "conda": tmp_path / "opt" / "conda",
        "uv": tmp_path / "uv" / "python" / "cpython-3.11.9-linux-x86_64-gnu",
        "pyenv": tmp_path / "pyenv" / "versions" / "3.11.7",
    }[layout]
    venv = tmp_path / "project" / ".venv"
    packages = venv / "lib" / "python3.11" / "site-packages"
    stdlib = base / "lib" / "python3.11"
    if layout != "debian":
        (base / "bin").mkdir(parents=True)
        (base / "bin" / "python3.11").write_text("")
        (stdlib / "lib-dynload").mkdir(parents=True)
        (stdlib / "site-packages").mkdir()
    packages.mkdir(parents=True)
    described = describe_interpreter(
        prefix=str(venv),
        base_prefix=str(base),
        base_exec_prefix=str(base),
        path=[str(stdlib), str(stdlib / "lib-dynload"), str(packages)],
        stdlib=[str(stdlib)],
        executable=base / "bin" / "python3.11",
    )
    assert base in described.roots or any(under(base, r) for r in described.roots)
    assert not any(under(packages, r) for r in described.roots)  # the venv is never bound
    if layout != "debian":
        assert stdlib / "site-packages" in described.hidden
    mounts = bwrap_mounts(described)
    for option, path in zip(mounts, mounts[1:]):
        if option in ("--ro-bind", "--tmpfs"):
            assert Path(path).exists(), path


def test_a_call_returns_plain_data_only():
    source = (
        "class Thing:\n    pass\n"
        "def meteor_score(r, c, **k):\n"
        "    return {'x': [1, (2.5, None)], 'y': Thing()} if r else float('0.5')\n"
    )
    with jail(source) as box:
        assert box.meteor_score("", "") == 0.5 and type(box.meteor_score("", "")) is float
        got = box.meteor_score("a", "b")
        assert type(got) is dict and got["x"] == [1, (2.5, None)] and type(got["x"][1]) is tuple
        assert isinstance(got["y"], Opaque) and got["y"].type_name == "submission.Thing"


def test_a_returned_value_past_the_bounds_comes_back_opaque():
    source = (
        "def meteor_score(r, c, **k):\n"
        "    if r == 'deep':\n        x = []\n        for _ in range(100): x = [x]\n        return x\n"
        "    if r == 'loop':\n        x = []\n        x.append(x)\n        return x\n"
        "    if r == 'wide':\n        return list(range(100000))\n"
        "    return ['x' * 999] * 500\n"
    )
    with jail(source) as box:
        for kind in ("deep", "loop", "wide", "big"):
            got = box.meteor_score(kind, "b")
            assert isinstance(got, Opaque) and got.type_name == "list", kind


def test_a_float_subclass_comes_back_as_its_plain_value():
    source = "class F(float):\n    def __eq__(self, o): return True\ndef meteor_score(r, c, **k):\n    return F(0.25)\n"
    with jail(source) as box:
        got = box.meteor_score("a", "b")
        assert type(got) is float and got == 0.25 and got != 0.5


def test_the_jail_sees_no_grader_file_network_or_environment(monkeypatch, kit_root):
    monkeypatch.setenv("METEOR_SECRET", "hunter2")
    secret = [
        str(kit_root),
        "/work",
        "/root/.ssh",
        "/home",
        "/etc/passwd",
        sys.prefix,
        str(Path(sandbox.__file__).parent),
        *site.getsitepackages([sys.base_prefix]),
    ]
    source = (
        "import os, socket\n"
        "def meteor_score(r, c, **k):\n"
        f"    seen = [p for p in {secret!r} if os.path.exists(p) and (not os.path.isdir(p) or os.listdir(p))]\n"
        "    try:\n"
        "        socket.create_connection(('127.0.0.1', 22), timeout=0.5); net = 'open'\n"
        "    except OSError as e:\n"
        "        net = 'closed'\n"
        "    return f'{seen}|{net}|{os.getuid()}|{sorted(os.environ)}'\n"
    )
    with jail(source) as box:
        seen, net, uid, env = box.meteor_score("", "").split("|")
    assert seen == "[]" and net == "closed"
    if os.getuid() == 0:
        assert int(uid) != 0 and int(uid) != os.getuid()  # a uid of its own
    else:
        assert int(uid) == 0  # the root of the jail's user namespace, without a capability (tests/test_cells.py)
    assert "METEOR_SECRET" not in env and env == "['HOME', 'LANG', 'PATH', 'PWD']"


def test_rlimits_apply_inside_the_jail():
    source = (
        "import resource\n"
        "def meteor_score(r, c, **k):\n"
        "    return ','.join(str(resource.getrlimit(getattr(resource, n))[0]) for n in "
        "('RLIMIT_AS', 'RLIMIT_NPROC', 'RLIMIT_FSIZE', 'RLIMIT_NOFILE'))\n"
    )
    limits = Limits(memory_mb=256, processes=16, file_size_mb=2, open_files=32)
    with jail(source, limits=limits) as box:
        assert box.meteor_score("", "") == f"{256 << 20},16,{2 << 20},32"


@pytest.mark.parametrize(
    "body, kind, words",
    [
        ("while True: pass", "timeout", "longer than 0.5 s"),
        ("import ctypes; ctypes.string_at(0)", "crash", "SIGSEGV"),
        ("import os; os._exit(3)", "crash", "exit status 3"),
        ("import sys; sys.exit(0)", "exception", "SystemExit"),
        ("raise KeyboardInterrupt", "exception", "KeyboardInterrupt"),
        ("x = bytearray(1 << 34)", "exception", "MemoryError"),
        ("import os; os.closerange(0, 4096); return 1.0", "crash", "ended during the call"),
    ],
)
def test_a_call_that_goes_wrong_is_reported_and_the_next_call_works(body, kind, words):
    source = f"def meteor_score(r, c, **k):\n    if r == 'bad':\n        {body}\n    return 0.5\n"
    with jail(source, timeout=0.5) as box:
        with pytest.raises(SubmissionError) as caught:
            box.meteor_score("bad", "")
        assert caught.value.kind == kind and words in caught.value.message
        assert box.meteor_score("good", "") == 0.5


def test_printed_output_is_captured_at_the_descriptor_and_cut_to_its_head(capsys):
    source = (
        "import os\ndef meteor_score(r, c, **k):\n    print('x' * 10000)\n    os.system('echo from-a-child')\n    return 0.5\n"
    )
    with jail(source) as box:
        assert box.meteor_score("", "") == 0.5
    printed = capsys.readouterr().out
    assert printed.startswith("x" * 100) and "more bytes cut" in printed and len(printed) < 1000


def test_a_budget_leaves_later_calls_not_run():
    # The budget counts the load too: leave room for a slow load on a busy machine.
    with jail("def meteor_score(r, c, **k):\n    while True: pass\n", timeout=0.3, budget=1.5) as box:
        kinds = []
        for _ in range(8):
            with pytest.raises(SubmissionError) as caught:
                box.meteor_score("", "")
            kinds.append(caught.value.kind)
    assert kinds[0] == "timeout" and kinds[-1] == "not_run"


@pytest.mark.needs_root("the submission's processes are found by a uid or cgroup of its own, which only root gives")
def test_no_process_of_the_submission_outlives_close():
    source = (
        "import os, subprocess\n"
        "def meteor_score(r, c, **k):\n"
        "    subprocess.Popen(['sleep', '300'])\n"
        "    if os.fork() == 0:\n"
        "        os.setpgid(0, 0)\n"
        "        if os.fork() == 0:\n"
        "            import time; time.sleep(300)\n"
        "        os._exit(0)\n"
        "    try:\n"
        "        os.setsid()\n"
        "        return 'a session of its own'\n"
        "    except PermissionError:\n"
        "        return 0.5\n"
    )
    box = jail(source)
    assert box.meteor_score("", "") == 0.5  # one session for the whole submission: setsid is refused
    cgroup = box._cell.cgroup
    pids = cgroup.processes()
    assert len(pids) >= 4  # the cell's init, the child, sleep and the orphaned grandchild
    box.close()
    assert [pid for pid in pids if Path(f"/proc/{pid}").exists()] == []


@pytest.mark.parametrize(
    "source, words",
    [
        ("def meteor_score(r, c:\n    pass\n", "syntax error on line 1"),
        ("import no_such_module_here\n", "No module named 'no_such_module_here'"),
        ("def meteor_scor(r, c, **k):\n    return 1\n", "did you mean to name 'meteor_scor'"),
        ("meteor_score = 3\n", "is not a function"),
        ("def meteor_score(text):\n    return 1\n", "takes (text), but the tests call meteor_score(reference, candidate"),
    ],
)
def test_a_submission_that_cannot_load_says_why_in_one_line(source, words):
    with pytest.raises(LoadError) as caught:
        jail(source)
    assert words in str(caught.value)


def test_a_restart_is_a_fork_not_a_new_jail():
    with jail("def meteor_score(r, c, **k):\n    return 0.5\n") as box:
        bwrap = box._proc.pid
        started = time.perf_counter()
        for _ in range(5):
            box.restart()
        per_restart = (time.perf_counter() - started) / 5
        assert box._proc.pid == bwrap and box.meteor_score("", "") == 0.5
    assert per_restart < 1.0  # generous: the point is that the jail itself was not rebuilt


def test_a_child_has_the_common_standard_modules_loaded_and_draws_random_numbers_of_its_own():
    """The fork server loads the modules students import most, once (child.PRELOAD), and none that draws numbers."""
    source = (
        "import sys\n"
        "LOADED = [m for m in ('dataclasses', 'fractions', 'decimal', 'typing', 'traceback') if m in sys.modules]\n"
        "RANDOM_BEFORE = 'random' in sys.modules\n"
        "import random\n"
        "def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n"
        "    return [LOADED, RANDOM_BEFORE, random.random()]\n"
    )
    with SandboxedSubmission("student.py", source=source) as box:
        loaded, random_before, first = box.meteor_score("a", "b")
        box.restart()
        second = box.meteor_score("a", "b")[2]
    assert loaded == ["dataclasses", "fractions", "decimal", "typing", "traceback"] and not random_before
    assert first != second  # each fresh child seeds its own: as when each imported random itself


def test_a_lent_jail_serves_one_submission_after_another_and_each_sees_nothing_of_the_last():
    from grader.sandbox.host import Jail

    jail = Jail()
    try:
        first = SandboxedSubmission(
            "a.py",
            jail=jail,
            source="import subprocess\nopen('/tmp/secret', 'w').write('answers')\n"
            "def meteor_score(r, c, **k):\n    subprocess.Popen(['sleep', '300'])\n    return 0.5\n",
        )
        assert first.meteor_score("", "") == 0.5
        bwrap = jail.proc.pid
        first.close()
        second = SandboxedSubmission(
            "b.py",
            jail=jail,
            source="import os\ndef meteor_score(r, c, **k):\n"
            "    return f\"{os.listdir('/tmp')}|{len([p for p in os.listdir('/proc') if p.isdigit()])}\"\n",
        )
        # A /proc of its cell's own: the cell's init, itself, and the copy of it as loaded, set aside
        # (or the cell's init as that copy).
        assert second.meteor_score("", "") == ("[]|2" if second._cell.loads else "[]|3")
        assert jail.proc.pid == bwrap
        second.close()
    finally:
        jail.close()


@pytest.mark.needs_root("the fallback runs submissions as a uid of their own, which only root gives")
def test_the_fallback_without_bubblewrap_runs_as_its_own_uid_in_a_root_of_only_the_stdlib_and_cleans_up(restores_the_kit):
    source = (
        "import os, resource\n"
        "def meteor_score(r, c, **k):\n"
        "    if r == 'hang':\n"
        "        while True: pass\n"
        "    if os.fork() == 0:\n"
        "        os.setsid(); import time; time.sleep(300)\n"
        "    seen = sorted(p for p in os.listdir('/proc') if p.isdigit())\n"
        "    return f\"{os.getuid()}|{resource.getrlimit(resource.RLIMIT_NPROC)[0]}|{seen}|{os.listdir('/')}\"\n"
    )
    box = jail(source, mode="separate-uid", timeout=0.5)
    uid, nproc, seen, top = box.meteor_score("", "").split("|")
    uid = int(uid)
    assert uid not in (0, os.getuid()) and int(nproc) == Limits().processes
    assert "work" not in top and "root" not in top  # a chroot: the stdlib and its libraries
    # Its /proc is its cell's pid namespace's: the cell's init, itself, the copy set aside, and its fork.
    assert len(eval(seen)) <= 4 and "'1'" in seen
    with pytest.raises(SubmissionError) as caught:
        box.meteor_score("hang", "")
    assert caught.value.kind == "timeout"
    assert box.meteor_score("", "").startswith(str(uid))
    box.close()
    assert processes_of(uid) == []


@pytest.mark.parametrize("hang", ["time.sleep(60)", "sum(itertools.count())"])
def test_in_a_batch_the_timeout_is_the_call_that_hangs_not_an_earlier_one(hang):
    source = (
        "import itertools, time\n\ndef meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n"
        f"    if reference == 'hang':\n        {hang}\n    return len(reference) / 10\n"
    )
    with jail(source, timeout=0.5) as box:
        calls = [[[r, "x"], {}] for r in ("a", "ab", "abc", "hang", "abcd")]
        answers = list(box.evaluate(calls))
        assert [(a.kind or "ok", a.value) for a in answers] == [
            ("ok", {"float": "0.1"}),
            ("ok", {"float": "0.2"}),
            ("ok", {"float": "0.3"}),
            ("timeout", None),
        ]
        assert box.meteor_score("abcd", "x") == 0.4  # a fresh child took over


GATHERED = (
    "import time\n\ndef meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n"
    "    if candidate == 'slow':\n        time.sleep(0.0005)\n"
    "    if candidate == 'print':\n        print('hello', reference)\n"
    "    if candidate == 'raise':\n        raise ValueError(reference)\n"
    "    if reference == 'hang':\n        time.sleep(60)\n"
    "    return len(reference) / 10\n"
)


def _reads_of(box: SandboxedSubmission, monkeypatch) -> list[int]:
    """Counts the grader's reads of this child's answer pipe (one per block the child wrote, or fewer)."""
    reads: list[int] = []
    fd, read = box._life.pipes.opened.resp_r, os.read

    def counting(at, size):
        if at == fd:
            reads.append(1)
        return read(at, size)

    monkeypatch.setattr(os, "read", counting)
    return reads


def test_gathered_answers_are_the_same_answers_written_a_block_at_a_time(monkeypatch):
    """The memo's check asks a child hundreds of calls whose answers it only compares: gathered,
    the child writes them a block at a time, not one write each (and the grader's reads follow)."""
    varied = [[["a" * (i % 7), ("print", "raise", "x")[i % 3]], {}] for i in range(300)]
    slow = [[["a" * (i % 7), "slow"], {}] for i in range(300)]
    with jail(GATHERED, timeout=2.0) as box:
        seen = {}
        for gathered in (False, True):
            until = time.monotonic() + 30 if gathered else None
            answers = list(box.evaluate(varied, gather_until=until))
            seen[gathered] = [(a.kind, a.value, a.output, a.error) for a in answers]
        assert seen[True] == seen[False] and len(seen[True]) == 300
        assert {kind for kind, *_ in seen[True]} == {"", "exception"} and any(out for _, _, out, _ in seen[True])
        reads = _reads_of(box, monkeypatch)
        one_each = len(list(box.evaluate(slow)))
        apart, reads[:] = len(reads), []
        gathered = len(list(box.evaluate(slow, gather_until=time.monotonic() + 30)))
    # 300 calls of 0.5 ms: one write each, read as they come; gathered, a block per 20 ms or so.
    assert one_each == gathered == 300
    assert apart >= 100 and len(reads) <= 40, (apart, len(reads))


def test_a_gathered_call_that_hangs_is_a_timeout_by_the_batch_deadline_and_a_fresh_child_goes_on():
    with jail(GATHERED, timeout=0.5) as box:
        calls = [[[r, "x"], {}] for r in ("a", "ab", "hang", "abc")]
        started = time.monotonic()
        answers = list(box.evaluate(calls, gather_until=started + 1.5))
        waited = time.monotonic() - started
        # Answers gathered before the hang may not have been written: the timeout is the batch's, blamed on no call.
        assert answers[-1].kind == "timeout" and all(not a.kind for a in answers[:-1]) and len(answers) <= 3
        assert 1.4 <= waited < 10  # the batch's deadline, not one call's time limit (0.5 s)
        assert box.meteor_score("abcd", "x") == 0.4  # a fresh child took over


def test_a_submission_that_replaces_builtins_is_judged_on_its_answers_not_crashed():
    # The sandbox's own code (encoding answers) must keep the real isinstance, type and round;
    # the submission's function keeps the replacements it made.
    source = (
        "import builtins\nbuiltins.isinstance = lambda *a: True\nbuiltins.type = lambda *a: float\n"
        "builtins.round = lambda x, n=None: 0.25\n\n"
        "def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n"
        "    return {'score': round(0.7)} if reference else round(0.7)\n"
    )
    with jail(source) as box:
        assert box.meteor_score("", "b") == 0.25
        assert box.meteor_score("a", "b") == {"score": 0.25}


def _leaver(kit_root: Path) -> str:
    reference = (kit_root / "solutions" / "reference.py").read_text()
    leaver = (HOSTILE / "leftovers" / "leaves_ipc_and_files.py").read_text()
    return f"{reference}\n{leaver}\nleave({reference!r})\n"


@pytest.fixture
def restores_the_kit():
    yield
    sandbox.unhide()  # the separate-uid jail hid the kit from its uid


@pytest.mark.parametrize("mode", ["bubblewrap", SEPARATE_UID])
def test_nothing_one_submission_leaves_reaches_the_next_in_the_same_jail(kit_root, reference, mode, restores_the_kit):
    reader = (HOSTILE / "leftovers" / "reads_leftovers.py").read_text()
    jail = Jail(mode=mode)
    try:
        first = SandboxedSubmission("a.py", jail=jail, source=_leaver(kit_root), mode=mode)
        assert first.meteor_score("the cat sat", "the cat sat") == reference.meteor_score("the cat sat", "the cat sat")
        uid = first._uid
        first.close()
        second = SandboxedSubmission("b.py", jail=jail, source=reader, mode=mode)
        assert processes_of(uid) == []  # the next cell opens once all of the last one is gone
        assert second.meteor_score("leftovers?", "") == str(NOTHING_LEFT)
        assert second.meteor_score("the cat sat", "the cat sat") == -1.0
        second.close()
    finally:
        jail.close()


@pytest.mark.parametrize("mode", ["bubblewrap", SEPARATE_UID])
def test_a_submission_that_sabotages_the_fork_server_hurts_no_later_submission(kit_root, reference, mode, restores_the_kit):
    attack = (HOSTILE / "prlimits_the_server.py").read_text()
    correct = (kit_root / "solutions" / "reference.py").read_text()
    jail = Jail(mode=mode)
    try:
        SandboxedSubmission("attack.py", jail=jail, source=attack, mode=mode).close()
        for name in ("b.py", "c.py", "d.py"):
            box = SandboxedSubmission(name, jail=jail, source=correct + "\nbig = bytearray(200 << 20)\n", mode=mode)
            expected = reference.meteor_score("the cat sat on the mat", "on the mat sat the cat")
            assert box.meteor_score("the cat sat on the mat", "on the mat sat the cat") == expected
            box.close()
    finally:
        jail.close()


@pytest.mark.parametrize("mode", ["bubblewrap", SEPARATE_UID])
def test_a_submission_cannot_ptrace_nor_read_the_memory_of_the_fork_server(mode, restores_the_kit):
    source = (
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
    with jail(source, mode=mode) as box:
        assert box.meteor_score("", "") == "[]"


HIDER = (
    "import os, signal, sys, time\nfrom pathlib import Path\nfrom grader.sandbox import host as sandbox\n"
    "sandbox.hide([Path(sys.argv[1])])\nprint('hidden', flush=True)\n"
    "os.kill(os.getpid(), signal.SIGKILL) if sys.argv[2] == 'KILL' else time.sleep(60)\n"
)


# Its state folder is root's (/var/lib/meteor-kit, else a /tmp folder no other user may own): as
# anyone else the test hangs on which user made /tmp/meteor-kit-state first, not on the kit.
@pytest.mark.needs_root("the separate-uid mode, which takes these permissions, runs only as root")
@pytest.mark.parametrize("end", ["TERM", "KILL"])
def test_permissions_taken_by_the_separate_uid_mode_come_back_after_sigterm_or_a_crash(tmp_path, end):
    import signal
    import subprocess

    folder = tmp_path / "class"
    folder.mkdir()
    folder.chmod(0o755)
    run = subprocess.Popen([sys.executable, "-c", HIDER, str(folder), end], stdout=subprocess.PIPE, text=True)
    assert run.stdout.readline() == "hidden\n"
    assert folder.stat().st_mode & 0o777 == 0o700  # others and the group lose every right meanwhile
    if end == "TERM":
        run.send_signal(signal.SIGTERM)
    run.wait(timeout=30)
    if end == "KILL":
        assert folder.stat().st_mode & 0o777 == 0o700
        separate_uid.with_journal(lambda journal: None)  # what the next run's probe does first
    assert folder.stat().st_mode & 0o777 == 0o755
    assert str(folder.resolve()) not in json.loads((sandbox.state_dir() / "hidden.json").read_text())


def test_what_a_submission_creates_is_private_to_its_uid():
    # Submissions graded at the same moment may share a /tmp (separate-uid mode): none can read another's files.
    source = (
        "import os\ndef meteor_score(r, c, **k):\n    path = '/tmp/mine'\n    open(path, 'w').close()\n"
        "    return float(os.stat(path).st_mode & 0o777)\n"
    )
    with jail(source) as box:
        assert box.meteor_score("", "") == 0o600


def test_the_proc_scanner_sees_parents_uids_and_zombies_whatever_a_process_calls_itself():
    import subprocess

    from grader.sandbox import wire

    # A process names itself with forged status lines (it can: prctl PR_SET_NAME), then ends unreaped.
    rename = "import ctypes; ctypes.CDLL(None).prctl(15, b'\\nPPid:\\t1\\nUid:\\t7', 0, 0, 0); print(flush=True)"
    liar = subprocess.Popen([sys.executable, "-c", rename + "; input()"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        liar.stdout.readline()
        seen = {p.pid: p for p in wire.processes()}
        assert (seen[liar.pid].ppid, seen[liar.pid].uid, seen[liar.pid].zombie) == (os.getpid(), os.getuid(), False)
        assert liar.pid in wire.children_of(list(seen.values()))[os.getpid()]
        liar.stdin.close()
        deadline = time.monotonic() + 10
        while not {p.pid: p for p in wire.processes()}[liar.pid].zombie:
            assert time.monotonic() < deadline, "the ended process was never seen as a zombie"
            time.sleep(0.01)
        assert liar.pid not in processes_of(os.getuid())  # a zombie is not a live process
    finally:
        liar.kill()
        liar.wait()


def test_roots_of_the_separate_uid_mode_unused_for_a_month_and_abandoned_builds_are_pruned(tmp_path):
    now = time.time()
    day = 24 * 3600

    def made(name: str, age_days: float, complete: bool = True) -> Path:
        place = tmp_path / name
        (place / "usr" / "lib").mkdir(parents=True)
        if complete:
            (place / ".complete").touch()
            os.utime(place / ".complete", (now - age_days * day, now - age_days * day))
        os.utime(place, (now - age_days * day, now - age_days * day))
        return place

    used = made("root-aaaa", 2)
    old = made("root-bbbb", 40)
    half_old = made("building-x1", 2, complete=False)
    half_new = made("building-x2", 0.1, complete=False)
    journal = tmp_path / "journal.json"
    journal.write_text("{}")
    os.utime(journal, (now - 90 * day, now - 90 * day))
    elsewhere = tmp_path.parent / f"{tmp_path.name}-outside"
    elsewhere.mkdir()
    os.utime(elsewhere, (now - 90 * day, now - 90 * day))
    (tmp_path / "root-link").symlink_to(elsewhere)  # a link is never followed

    removed = separate_uid.prune(tmp_path, now=now)
    assert sorted(p.name for p in removed) == ["building-x1", "root-bbbb"]
    assert used.is_dir() and half_new.is_dir() and journal.is_file() and elsewhere.is_dir()
    assert not old.exists() and not half_old.exists()
