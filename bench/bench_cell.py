"""The least a fresh cell per submission can cost: each part a cell cannot do without, measured alone (root).

    sudo .venv/bin/python bench/bench_cell.py [--cells 300] [--rounds 2] [--baseline REV [--size 500]]

A cell (grader/sandbox/child.py, docs/isolation.md) needs, whatever the code around it:
- **a process** to hold its pid namespace: a fork of the jail's server, which is a Python
  process of the jail's interpreter (`-I -S`) with child.py's standard modules loaded; here it
  exits at once;
- **its namespaces**: pid, IPC, mount and UTS unshared, the mounts made private, its own /proc
  and a tmpfs on /tmp, /var/tmp and /dev/shm with the jail's caps (the cell's `make_room`);
- **its cgroups**: one in every hierarchy, with its caps (grader/sandbox/cgroups.py, as the
  grading worker makes them), joined by the process, removed once it has ended.

Each part is timed over `--cells` cells, rounds interleaved, as CPU a cell: the measuring
process and the children it reaped (getrusage), and the whole machine's busy time
(/proc/stat), which also counts the kernel's own threads (cgroups are taken down by them). The
namespaces and cgroups rows are what they add to the process's row. With `--baseline REV`,
bench_grade.py's memo class is graded by REV and by this tree (`--jobs 2 --timeout 1 --budget
5`, `--rounds` each, interleaved), and the machine's busy CPU a file of each is printed: the
parts' share of REV's is what a cell cannot save, and this tree's excess over REV's is what
its cells cost as built. Writes bench/out/bench_cell.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import bench_grade
from bench_grade import busy

from grader.sandbox import cgroups, child
from grader.sandbox.interpreter import PYTHON
from grader.sandbox.jail import Limits

# Run by the jail's interpreter, as the server is: its modules, then `cells` forks of itself,
# each exiting at once ("process") or after making a cell's namespaces ("namespaces").
# Prints {"process": CPU seconds, "namespaces": ..., "busy_process": ..., "busy_namespaces": ...}.
SERVER = textwrap.dedent(
    """
    import ctypes, io, json, os, resource, select, signal, sys, time
    for name in json.loads(sys.argv[1]):
        __import__(name)
    cells, tmpfs = int(sys.argv[2]), json.loads(sys.argv[3])
    LIBC = ctypes.CDLL(None, use_errno=True)
    NEWNS, NEWUTS, NEWIPC, NEWPID = 0x20000, 0x4000000, 0x8000000, 0x20000000
    MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 16384, 1 << 18
    own = os.open("/proc/self/ns/pid", os.O_RDONLY)

    def check(result):
        if result != 0:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))

    def room():
        check(LIBC.unshare(NEWIPC | NEWNS | NEWUTS))
        check(LIBC.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None))
        check(LIBC.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None))
        for place, size in tmpfs.items():
            options = f"size={size},nr_inodes=4096,mode=1777".encode()
            check(LIBC.mount(b"tmpfs", place.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, options))
        LIBC.sethostname(b"cell", 4)

    def cpu():
        mine, theirs = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return mine.ru_utime + mine.ru_stime + theirs.ru_utime + theirs.ru_stime

    def busy():
        with open("/proc/stat") as f:
            user, nice, system, idle, iowait, irq, softirq = map(int, f.readline().split()[1:8])
        return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")

    figures = {}
    for part in json.loads(sys.argv[4]):
        began, machine = cpu(), busy()
        for _ in range(cells):
            if part == "namespaces":
                check(LIBC.unshare(NEWPID))
            pid = os.fork()
            if pid == 0:
                code = 0
                try:
                    if part == "namespaces":
                        room()
                except BaseException as exc:
                    os.write(2, f"{type(exc).__name__}: {exc}\\n".encode())
                    code = 1
                os._exit(code)
            if part == "namespaces":
                check(LIBC.setns(own, NEWPID))
            if os.waitpid(pid, 0)[1] != 0:
                raise SystemExit("a cell's namespaces could not be made")
        figures[part], figures["busy_" + part] = cpu() - began, busy() - machine
    print(json.dumps(figures))
    """
)


def cpu() -> float:
    mine, theirs = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return mine.ru_utime + mine.ru_stime + theirs.ru_utime + theirs.ru_stime


def server_parts(cells: int, flip: bool = False) -> dict[str, float]:
    """CPU seconds a cell of a server-sized process: forked and exited ("process"), and with its namespaces.

    `flip`: the namespaces' loop first (rounds alternate, so a cold first loop favours neither)."""
    tmpfs = Limits().tmpfs()
    order = ["namespaces", "process"] if flip else ["process", "namespaces"]
    command = [str(PYTHON), "-I", "-S", "-c", SERVER, json.dumps(child.PRELOAD), str(cells), json.dumps(tmpfs), json.dumps(order)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"the server-sized process failed: {done.stderr.strip()[-500:]}")
    return {k: v / cells for k, v in json.loads(done.stdout).items()}


def cgroup_parts(cells: int, flip: bool = False) -> dict[str, float]:
    """CPU seconds a cell of its cgroups, made, joined by a forked process and removed, as a grading worker does.

    `flip`: the loop with cgroups first (as server_parts)."""
    found = cgroups.available()
    if found is None:
        raise SystemExit("no cgroup can be made here (not root, or nothing delegated): the cgroups' part cannot be measured")
    figures = {}
    try:
        for part in ("cgroups", "bare") if flip else ("bare", "cgroups"):
            began, machine = cpu(), busy()
            for number in range(cells):
                cell = found.cell("jail-bench", f"cell-bench-{number}", 1 << 30, 64) if part == "cgroups" else None
                fds = cell.join_fds() if cell is not None else []
                pid = os.fork()
                if pid == 0:
                    for fd in fds:
                        os.write(fd, b"0")
                    os._exit(0)
                for fd in fds:
                    os.close(fd)
                os.waitpid(pid, 0)
                if cell is not None:
                    cell.remove()
            cgroups.drain()
            figures[part], figures["busy_" + part] = (cpu() - began) / cells, (busy() - machine) / cells
    finally:
        cgroups.drain()
        found.remove_group("jail-bench")  # its own folders only: the process's other cells are not the benchmark's
    return {"cgroups": figures["cgroups"] - figures["bare"], "busy_cgroups": figures["busy_cgroups"] - figures["busy_bare"]}


def per_file(revision: str, size: int, rounds: int) -> dict[str, dict[str, float]]:
    """The machine's busy CPU a file while `revision` and this tree grade bench_grade.py's memo class, interleaved."""
    work = Path(tempfile.mkdtemp(prefix="bench_cell."))
    try:
        klass = work / "class"
        klass.mkdir()
        bench_grade.make_class(klass, size)
        variants = [bench_grade.variant(f"{revision}=rev:{revision}", work), bench_grade.variant("this tree=.", work)]
        options = ["--jobs", "2", "--timeout", "1", "--budget", "5"]
        taken: dict[str, list[tuple[float, float]]] = {label: [] for label, *_ in variants}
        for _, label, seconds, cpu_ms, _ in bench_grade.graded_rounds(klass, work, options, variants, rounds):
            taken[label].append((cpu_ms, seconds))
        return {
            label: {
                "ms_per_file": round(statistics.median(c for c, _ in rows), 2),
                "seconds": round(statistics.median(s for _, s in rows), 2),
            }
            for label, rows in taken.items()
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cells", type=int, default=300, help="cells timed for each part, each round")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--baseline", metavar="REV", help="also grade the memo class with this revision and this tree: CPU a file"
    )
    parser.add_argument("--size", type=int, default=500, help="with --baseline: files in the memo class")
    args = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("bench_cell.py needs root: it makes namespaces and cgroups as the grader does as root")
    rounds: list[dict[str, float]] = []
    for number in range(args.rounds):
        flip = number % 2 == 1  # each part's loops in the other order every second round
        rounds.append({**server_parts(args.cells, flip), **cgroup_parts(args.cells, flip)})
    parts = {}
    for part, added_to in (("process", None), ("namespaces", "process"), ("cgroups", None)):
        row = {}
        for kind in ("", "busy_"):
            values = [r[kind + part] - (r[kind + added_to] if added_to else 0.0) for r in rounds]
            row["tree_ms" if not kind else "machine_ms"] = round(1000 * statistics.median(values), 2)
        parts[part] = row
    total = {key: round(sum(row[key] for row in parts.values()), 2) for key in ("tree_ms", "machine_ms")}
    figures: dict = {"cells": args.cells, "rounds": args.rounds, "interpreter": str(PYTHON), "parts": parts, "total": total}
    print(f"{'a cell, median of ' + str(args.rounds) + ' rounds':>28}  tree CPU  machine CPU")
    for part, row in [*parts.items(), ("total", total)]:
        print(f"{part:>28}  {row['tree_ms']:5.2f} ms  {row['machine_ms']:5.2f} ms")
    if args.baseline:
        graded = per_file(args.baseline, args.size, args.rounds)
        base, now = graded[args.baseline]["ms_per_file"], graded["this tree"]["ms_per_file"]
        figures["memo_class"] = {"files": args.size, "graded": graded}
        figures["memo_class"]["floor_percent_of_baseline"] = round(100 * total["machine_ms"] / base, 1)
        figures["memo_class"]["added_ms_per_file"] = round(now - base, 2)
        for label, row in graded.items():
            print(
                f"{label:>28}  grades the memo class of {args.size} in {row['seconds']:.2f} s, {row['ms_per_file']:.1f} ms of CPU a file"
            )
        print(
            f"a cell's parts alone: {figures['memo_class']['floor_percent_of_baseline']} % of {args.baseline}'s CPU a file; "
            f"this tree takes {now - base:+.1f} ms a file"
        )
    (ROOT / "bench" / "out").mkdir(exist_ok=True)
    (ROOT / "bench" / "out" / "bench_cell.json").write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
