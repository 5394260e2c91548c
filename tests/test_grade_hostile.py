"""The hostile corpus graded in one batch with correct solutions: attacks earn nothing, the rest is unaffected."""

from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest
from containers import LIKE_GRADESCOPE, NO_BWRAP

from grader.sandbox import uids
from tests.conftest import SEPARATE_UID, as_nobody

HOSTILE = Path(__file__).parent / "hostile"
KNOCK = "47651"  # the port opens_a_socket.py knocks at; the copy gets the one we listen on
SECRET = "hunter2-do-not-leak"
MARKER = "4242.424"  # in the command line of every process the stray and fork-bomb attacks leave


def fingerprint(*roots: Path) -> dict[str, str]:
    return {
        str(p): hashlib.sha256(p.read_bytes()).hexdigest()
        for root in roots
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


class Listener:
    """A port on the grader's machine that no submission may reach."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.sock.listen()
        self.sock.settimeout(0.2)
        self.connections = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
                self.connections += 1
                conn.close()
            except OSError:
                pass

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        self.sock.close()


@pytest.fixture(scope="module")
def batch(tmp_path_factory, kit_root, meteor_kit):
    klass = tmp_path_factory.mktemp("class")
    for path in HOSTILE.glob("*.py"):
        shutil.copy(path, klass / path.name)
    for name in ("control_a.py", "control_b.py"):
        shutil.copy(kit_root / "solutions" / "reference.py", klass / name)
    with open(klass / "load_30_megabytes.py", "w") as f:
        f.write("def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n    return 1.0\n")
        f.write("# padding\n" * 3_000_000)
    watched = (kit_root / "grader", kit_root / "hidden_tests", kit_root / "solutions", kit_root / "problem", klass)
    listener = Listener()
    knocker = klass / "opens_a_socket.py"
    knocker.write_text(knocker.read_text().replace(KNOCK, str(listener.port)))
    before = fingerprint(*watched)
    out = tmp_path_factory.mktemp("out")
    env = {**os.environ, "METEOR_SECRET": SECRET}
    try:
        run = subprocess.run(
            [str(meteor_kit), "grade", str(klass), "--out", str(out), "--jobs", "2", "--timeout", "1", "--budget", "5"],
            capture_output=True,
            text=True,
            timeout=600,
            env=env,
        )
    finally:
        listener.close()
    results = json.loads((out / "results.json").read_text())
    by_name = {r["submission"]: r for r in results["submissions"]}
    return {
        "run": run,
        "out": out,
        "results": results,
        "by_name": by_name,
        "before": before,
        "after": fingerprint(*watched),
        "connections": listener.connections,
    }


def attacks(batch) -> dict[str, dict]:
    return {n: r for n, r in batch["by_name"].items() if not n.startswith("control_")}


def test_grading_finishes_with_status_0(batch):
    assert batch["run"].returncode == 0, batch["run"].stderr
    assert len(batch["by_name"]) == len(list(HOSTILE.glob("*.py"))) + 3


def test_no_attack_earns_any_credit(batch):
    earned = {n: r["score"] for n, r in attacks(batch).items() if r["score"] != 0}
    assert earned == {}


def test_correct_solutions_in_the_same_batch_get_full_marks(batch):
    for name in ("control_a.py", "control_b.py"):
        result = batch["by_name"][name]
        assert result["status"] == "graded"
        assert result["score"] == result["max_score"] > 0, [t for t in result["tests"] if t["status"] != "pass"]


@pytest.mark.parametrize(
    "name, words",
    [
        ("load_syntax_error.py", "syntax error on line 2"),
        ("load_import_error.py", "on line 1: ModuleNotFoundError: No module named 'numpy_that_does_not_exist'"),
        ("load_misnamed.py", "did you mean to name 'meteor_scores'"),
        ("load_not_callable.py", "is not a function"),
        ("load_empty.py", "the file is empty"),
        ("load_not_utf8.py", "not UTF-8"),
        ("load_30_megabytes.py", "30.0 MB"),
        ("load_wrong_signature.py", "takes (text)"),
        ("hangs_at_import.py", "loading the file took longer than"),
    ],
)
def test_a_submission_that_cannot_load_gets_a_one_line_reason(batch, name, words):
    result = batch["by_name"][name]
    assert result["status"] == "error"
    assert words in result["message"] and "\n" not in result["message"]
    assert all(t["status"] == "error" and t["score"] == 0 for t in result["tests"])


@pytest.mark.parametrize(
    "name, statuses, words",
    [
        ("infinite_loop.py", {"timeout", "not_run"}, "longer than 1 s"),
        ("ignores_signals.py", {"timeout", "not_run"}, "longer than 1 s"),
        ("segfault.py", {"error"}, "SIGSEGV"),
        ("os_exit.py", {"error"}, "exit status 0"),
        ("sys_exit.py", {"error"}, "raised SystemExit"),
        ("keyboard_interrupt.py", {"error"}, "raised KeyboardInterrupt"),
        ("memory_bomb.py", {"error"}, "MemoryError"),
        ("closes_descriptors.py", {"error"}, "ended during the call"),
        ("deep_recursion.py", {"error", "timeout", "not_run"}, ""),
        ("fork_bomb.py", {"error", "timeout", "not_run"}, ""),
        ("print_flood.py", {"error", "timeout", "not_run"}, ""),
        ("writes_huge_file.py", {"error"}, ""),
    ],
)
def test_a_misbehaving_call_fails_its_test_with_a_plain_message(batch, name, statuses, words):
    result = batch["by_name"][name]
    assert result["status"] == "graded"
    assert {t["status"] for t in result["tests"]} <= statuses
    assert any(words in t["message"] for t in result["tests"])


def test_the_budget_stops_a_submission_that_hangs_everywhere(batch):
    tests = batch["by_name"]["infinite_loop.py"]["tests"]
    not_run = [t for t in tests if t["status"] == "not_run"]
    assert not_run and all("time budget of 5 s" in t["message"] for t in not_run)


def test_printed_output_is_shown_per_test_cut_to_its_head(batch):
    outputs = [t["output"] for t in batch["by_name"]["print_flood.py"]["tests"] if t["output"]]
    assert outputs and all(len(o) <= 500 for o in outputs)
    assert any("cut" in o for o in outputs)


def test_no_process_of_any_submission_survives(batch):
    alive = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if MARKER.encode() in f.read():
                    alive.append(entry)
        except OSError:
            pass
    assert alive == []


def test_the_grader_files_and_the_submissions_are_unchanged(batch):
    assert batch["after"] == batch["before"]


def test_no_submission_reached_the_network(batch):
    assert batch["connections"] == 0


def test_the_graders_environment_does_not_leak(batch):
    assert SECRET not in (batch["out"] / "results.json").read_text()


def test_the_output_files_are_complete_and_valid(batch):
    out, results = batch["out"], batch["results"]["submissions"]
    for result in results:
        assert set(result) >= {"submission", "score", "max_score", "status", "message", "tests", "diagnosis"}
        assert result["status"] in ("graded", "error")
        assert result["score"] == sum(t["score"] for t in result["tests"])
        for test in result["tests"]:
            assert set(test) == {"name", "tier", "status", "message", "output", "score", "max_score"}
            assert test["status"] in ("pass", "fail", "error", "timeout", "not_run")
    with open(out / "grades.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["submission"] for r in rows] == [r["submission"] for r in results]
    assert all(list(r)[:6] == ["submission", "score", "max_score", "status", "passed", "tests"] for r in rows)
    gradescope = sorted(p.parent.name for p in (out / "gradescope").glob("*/results.json"))
    assert len(gradescope) == len(results)
    sample = json.loads((out / "gradescope" / "control_a.py" / "results.json").read_text())
    assert sample["score"] == batch["by_name"]["control_a.py"]["max_score"]
    assert {"name", "score", "max_score", "status", "output", "visibility"} <= set(sample["tests"][0])
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temporary file left behind
    assert "<html" in (out / "report.html").read_text().lower()


# ---------------------------------------------------------------- every isolation mode, run for real

AS_NOBODY = "it runs the CLI as uid 65534, and without bubblewrap (a mount namespace)"
LEFTOVER_KEY = 0x4D455445  # the System V key leaves_ipc_and_files.py uses


def _sabotage_class(directory: Path, kit_root: Path) -> Path:
    """Graded in this order by one worker: each attack is followed by what it tries to hurt."""
    directory.mkdir(parents=True)
    directory.parent.chmod(0o777)
    reference = (kit_root / "solutions" / "reference.py").read_text()
    leaver = (HOSTILE / "leftovers" / "leaves_ipc_and_files.py").read_text()
    (directory / "a_leaves_ipc_and_files.py").write_text(f"{reference}\n{leaver}\nleave({reference!r})\n")
    shutil.copy(HOSTILE / "leftovers" / "reads_leftovers.py", directory / "b_reads_leftovers.py")
    shutil.copy(HOSTILE / "prlimits_the_server.py", directory / "c_prlimits_the_server.py")
    (directory / "d_control.py").write_text(f"# d\n{reference}\nbig = bytearray(200 << 20)\n")
    shutil.copy(HOSTILE / "proc_scan_loads_reference.py", directory / "e_proc_scan_loads_reference.py")
    (directory / "f_control.py").write_text(f"# f\n{reference}\nbig = bytearray(200 << 20)\n")
    return directory


def _public_dir() -> Path:
    """A scratch folder every uid can reach (pytest's own are root's only)."""
    path = Path(tempfile.mkdtemp(prefix="meteor-modes-", dir="/tmp"))
    path.chmod(0o777)
    return path


def _python_for_nobody(scratch: Path) -> Path:
    """A venv of Debian's python3.11 that uid 65534 can run, seeing the kit and its dependencies."""
    venv = scratch / "venv"
    subprocess.run(["/usr/bin/python3.11", "-m", "venv", "--without-pip", str(venv)], check=True)
    packages = [p for p in sys.path if p.endswith("-packages") and Path(p).is_dir()]
    (venv / "lib" / "python3.11" / "site-packages" / "kit.pth").write_text(
        "import site; " + "; ".join(f"site.addsitedir({p!r})" for p in packages) + "\n"
    )
    return venv / "bin" / "python"


def _leftovers() -> list[str]:
    found = [p for p in ("/tmp/meteor-leftovers", "/var/tmp/meteor-leftovers", "/dev/shm/meteor-leftovers") if os.path.lexists(p)]
    for kind in ("shm", "msg", "sem"):
        rows = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]
        found += [f"{kind} {row.split()[1]}" for row in rows if row.split()[0] == str(LEFTOVER_KEY)]
    # Keys (a persistent keyring outlives every process by days) of any uid the kit gives submissions.
    users = [line.split(":")[0].strip() for line in Path("/proc/key-users").read_text().splitlines()]
    found += [f"keys of uid {uid}" for uid in users if uid.isdigit() and uids.LOW <= int(uid) < uids.HIGH]
    return found


def _modes(*paths: Path) -> dict[str, int]:
    return {str(p): p.stat().st_mode for p in paths}


@pytest.fixture(scope="module")
def scratch():
    path = _public_dir()
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.parametrize(
    "setup",
    [
        "bubblewrap",
        pytest.param("bubblewrap-unprivileged", marks=pytest.mark.needs_root(AS_NOBODY)),
        SEPARATE_UID,
        pytest.param("like-gradescope", marks=pytest.mark.needs_root("a container of root without namespaces")),
    ],
)
def test_in_every_mode_attacks_earn_nothing_and_leave_nothing_for_the_next_submission(setup, scratch, kit_root, meteor_kit):
    work = scratch / setup
    klass = _sabotage_class(work / "class", kit_root)
    out = work / "out"
    command = [str(meteor_kit), "grade", str(klass), "--out", str(out), "--jobs", "1", "--timeout", "2"]
    env = {**os.environ, "METEOR_SECRET": SECRET}
    if setup == "bubblewrap-unprivileged":
        command = as_nobody([str(_python_for_nobody(work)), "-m", "grader.cli", *command[1:]])
        env["HOME"] = str(work)
    elif setup == "separate-uid":
        command = [*NO_BWRAP, *command]
    elif setup == "like-gradescope":
        command = [*LIKE_GRADESCOPE, *command]
    for path in [work, *klass.rglob("*")]:  # the class files are ours: nothing here is a link
        assert not path.is_symlink()
        path.chmod(0o777 if path.is_dir() else 0o666)
    before = _modes(kit_root, kit_root / "solutions", klass, Path(sys.prefix))
    assert _leftovers() == [], "left by an earlier run: remove them first"
    run = subprocess.run(command, capture_output=True, text=True, timeout=900, env=env, cwd=str(work))
    assert run.returncode == 0, run.stderr
    results = json.loads((out / "results.json").read_text())
    scores = {r["submission"]: (r["score"], r["max_score"]) for r in results["submissions"]}
    mode = "separate-uid" if setup in ("separate-uid", "like-gradescope") else "bubblewrap"
    assert results["isolation"] == mode
    assert f"isolation: {mode}" in run.stdout
    assert f'data-isolation="{mode}"' in (out / "report.html").read_text()
    for name in ("a_leaves_ipc_and_files.py", "d_control.py", "f_control.py"):
        assert scores[name][0] == scores[name][1] > 0, (name, scores)
    for name in ("b_reads_leftovers.py", "c_prlimits_the_server.py", "e_proc_scan_loads_reference.py"):
        assert scores[name][0] == 0, (name, scores)
    assert SECRET not in (out / "results.json").read_text()
    assert _leftovers() == []
    assert _modes(kit_root, kit_root / "solutions", klass, Path(sys.prefix)) == before  # permissions given back
    if setup == "separate-uid":
        assert "its own pid, IPC and mount namespaces" in run.stderr and "refuses every socket" in run.stderr
    if setup == "like-gradescope":
        assert "a container that allows no namespace" in run.stderr and "no writable folder" in run.stderr


@pytest.mark.needs_root(AS_NOBODY)
def test_not_root_without_a_usable_bubblewrap_refuses_with_the_real_error_and_the_fix(scratch, kit_root):
    work = scratch / "refused"
    klass = _sabotage_class(work / "class", kit_root)
    python = str(_python_for_nobody(work))
    env = {**os.environ, "HOME": str(work)}
    runs = {
        "check": [python, "-m", "grader.cli", "check", str(klass / "d_control.py")],
        "grade": [python, "-m", "grader.cli", "grade", str(klass), "--out", str(work / "out")],
        "pytest": [
            python,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            str(kit_root / "hidden_tests"),
            "--submission",
            str(klass / "d_control.py"),
        ],
    }
    for name, command in runs.items():
        run = subprocess.run(
            [*NO_BWRAP, *as_nobody(command)], capture_output=True, text=True, timeout=300, env=env, cwd=str(kit_root)
        )
        said = run.stdout + run.stderr
        assert run.returncode == 2, (name, said)
        assert "refusing to run submissions without isolation" in said, said
        assert "bwrap is installed but fails here: exit status 1, no message" in said, said
        assert "kernel.unprivileged_userns_clone=1" in said and "--no-sandbox" in said
        assert "apt-get install bubblewrap" not in said  # it is installed: never say to install it
    assert not (work / "out" / "results.json").exists()


@pytest.mark.needs_root(AS_NOBODY)
def test_no_sandbox_runs_anyway_and_every_output_says_it_was_not_isolated(scratch, kit_root):
    work = scratch / "unisolated"
    klass = work / "class"
    klass.mkdir(parents=True)
    work.chmod(0o777)
    klass.chmod(0o777)
    # Unisolated, an attack can reach the grader itself (it runs as the same user): only a control
    # and the /proc cheat, whose score is reported, not judged.
    shutil.copy(kit_root / "solutions" / "reference.py", klass / "d_control.py")
    shutil.copy(HOSTILE / "proc_scan_loads_reference.py", klass / "e_proc_scan_loads_reference.py")
    out = work / "out"
    command = [
        str(_python_for_nobody(work)),
        "-m",
        "grader.cli",
        "grade",
        str(klass),
        "--out",
        str(out),
        "--jobs",
        "1",
        "--no-sandbox",
    ]
    run = subprocess.run(
        [*NO_BWRAP, *as_nobody(command)],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "HOME": str(work)},
        cwd=str(work),
    )
    assert run.returncode == 0, (run.stdout, run.stderr)
    results = json.loads((out / "results.json").read_text())
    assert results["isolation"] == "none" and "NOT ISOLATED" in results["isolation_note"]
    assert "NOT ISOLATED" in run.stderr and "NOT isolated" in run.stdout
    assert 'data-isolation="none"' in (out / "report.html").read_text()
    assert "NOT ISOLATED" in (out / "report.html").read_text()
    scores = {r["submission"]: r["score"] for r in results["submissions"]}
    print("scores without isolation:", scores)  # the /proc cheat's score here is reported, not judged
    assert scores["d_control.py"] == results["submissions"][0]["max_score"] > 0
