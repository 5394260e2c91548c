"""bench/bench_cell.py: each part of a cell is timed for real, and the benchmark leaves no cgroup behind."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest
from conftest import KIT_ROOT

_spec = importlib.util.spec_from_file_location("bench_cell", KIT_ROOT / "bench" / "bench_cell.py")
bench_cell = sys.modules.setdefault("bench_cell", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(bench_cell)


def _bench_folders() -> list[Path]:
    return [p for p in Path("/sys/fs/cgroup").glob("**/cell-bench-*") if p.is_dir()]


@pytest.mark.needs_root("the benchmark makes namespaces and cgroups as the grader does as root")
def test_each_part_of_a_cell_costs_cpu_and_no_cgroup_is_left():
    # A cell whose namespaces cannot be made ends the benchmark (SystemExit), so these ran.
    server = bench_cell.server_parts(5)
    assert set(server) == {"process", "namespaces", "busy_process", "busy_namespaces"}
    # Each loop's own CPU, a cell: a fork of a Python process costs something, its namespaces on top.
    assert server["process"] > 0 and server["namespaces"] > 0
    assert all(value >= 0 for value in server.values())
    # The cgroups' part is a difference of two loops: on 5 cells and a busy machine its sign is noise.
    cgroup = bench_cell.cgroup_parts(5)
    assert set(cgroup) == {"cgroups", "busy_cgroups"}
    assert all(math.isfinite(value) for value in cgroup.values())
    assert _bench_folders() == []
