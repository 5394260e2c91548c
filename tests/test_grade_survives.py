"""`meteor-kit grade` as an instructor runs it: Ctrl+C, a careless --out, progress on a terminal and in a log."""

from __future__ import annotations

import fcntl
import io
import json
import os
import pty
import re
import signal
import struct
import subprocess
import termios
import time
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.core.results import ClassRun
from grader.reports.progress import Progress, _cells
from grader.reports.tally import tally


def _slow_class(folder: Path, reference: str, count: int) -> None:
    """Submissions that each take a fifth of a second to load (on every restart of its jail): a run long enough to interrupt."""
    folder.mkdir()
    for i in range(count):
        (folder / f"student_{i:02d}.py").write_text(reference + f"\nimport time\ntime.sleep(0.2)  # student {i}\n")


def test_ctrl_c_writes_what_was_graded_marks_the_rest_and_exits_130(tmp_path, kit_root, meteor_kit):
    _slow_class(tmp_path / "class", (kit_root / "solutions" / "reference.py").read_text(), 12)
    out = tmp_path / "out"
    # Its own session, so SIGINT goes to the whole process group, as a terminal's Ctrl+C does.
    run = subprocess.Popen(
        [str(meteor_kit), "grade", str(tmp_path / "class"), "--out", str(out), "--jobs", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        before = []  # warnings may come first (an isolation mode other than bubblewrap)
        while not (line := run.stderr.readline()).startswith("graded ") and line:
            before.append(line)
        # Without a terminal, the first graded submission prints a line.
        assert line.startswith("graded 1/12"), before + [line]
        os.killpg(run.pid, signal.SIGINT)
        stdout, stderr = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    assert run.returncode == 130, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr
    lines = stderr.strip().splitlines()
    assert lines[-1].startswith("meteor-kit grade: interrupted; ") and "marked not_graded" in lines[-1]
    assert stdout == ""
    results = json.loads((out / "results.json").read_text())
    assert results["interrupted"] is True
    subs = {r["submission"]: r for r in results["submissions"]}
    assert len(subs) == 12
    graded = [r for r in subs.values() if r["status"] == "graded"]
    left = [r for r in subs.values() if r["status"] == "not_graded"]
    assert graded and left and len(graded) + len(left) == 12
    assert all(r["score"] == r["max_score"] for r in graded)  # what was graded is kept whole
    assert all(
        r["score"] == 0 and "interrupted" in r["message"] and all(t["status"] == "not_run" for t in r["tests"]) for r in left
    )
    assert f"{len(graded)} of 12 graded" in lines[-1] and f"other {len(left)} marked" in lines[-1]
    csv_rows = (out / "grades.csv").read_text().splitlines()[1:]
    assert len(csv_rows) == 12 and sum(",not_graded," in row for row in csv_rows) == len(left)
    assert (out / "report.html").exists()
    # The same command again grades only what was not graded, and keeps the rest.
    again = subprocess.run(
        [str(meteor_kit), "grade", str(tmp_path / "class"), "--out", str(out), "--jobs", "1"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert again.returncode == 0, again.stderr
    assert f"{len(graded)} submission(s) unchanged since the last run" in again.stderr
    resumed = {r["submission"]: r for r in json.loads((out / "results.json").read_text())["submissions"]}
    assert all(r["status"] == "graded" and r["score"] == r["max_score"] for r in resumed.values())
    assert {n for n, r in resumed.items() if r["reused"]} == {r["submission"] for r in graded}
    assert all(resumed[r["submission"]]["tests"] == r["tests"] for r in graded)
    # No process of the run outlives it (the workers' command lines name the class and the output).
    time.sleep(0.5)
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        assert str(out).encode() not in cmdline and str(tmp_path / "class").encode() not in cmdline


def test_running_again_grades_only_new_or_changed_code_and_fresh_grades_all(tmp_path, kit_root, meteor_kit):
    klass, out = tmp_path / "class", tmp_path / "out"
    klass.mkdir()
    reference = (kit_root / "solutions" / "reference.py").read_text()
    (klass / "ann.py").write_text(reference)
    (klass / "bob.py").write_text((kit_root / "tests" / "catalogue" / "wrong" / "no_clipping.py").read_text())

    def run(*flags: str) -> dict:
        done = subprocess.run(
            [str(meteor_kit), "grade", str(klass), "--out", str(out), *flags], capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, done.stderr
        return {r["submission"]: r for r in json.loads((out / "results.json").read_text())["submissions"]}

    first = run()
    assert not first["ann.py"]["reused"] and not first["bob.py"]["reused"]
    second = run()
    assert second["ann.py"]["reused"] and second["bob.py"]["reused"]
    assert {n: (r["score"], r["tests"], r["diagnosis"]) for n, r in second.items()} == {
        n: (r["score"], r["tests"], r["diagnosis"]) for n, r in first.items()
    }
    (klass / "bob.py").write_text(reference.replace("def meteor_score", "# fixed\ndef meteor_score"))
    (klass / "cy.py").write_text(reference + "\n# new student\n")
    third = run()
    assert third["ann.py"]["reused"] and not third["bob.py"]["reused"] and not third["cy.py"]["reused"]
    assert third["bob.py"]["score"] == third["bob.py"]["max_score"]
    assert not any(r["reused"] for r in run("--fresh").values())
    assert not any(r["reused"] for r in run("--timeout", "1.5").values())  # other settings, other verdicts


@pytest.mark.parametrize("where", ["class", "class/sub/out", "class/../class/out"])
def test_an_out_inside_the_class_folder_is_refused(tmp_path, meteor_kit, where):
    (tmp_path / "class" / "sub").mkdir(parents=True)
    (tmp_path / "class" / "alice.py").write_text("def meteor_score(r, c, alpha=0.9, beta=3, gamma=0.5):\n    return 0.0\n")
    out = tmp_path / where
    run = subprocess.run(
        [str(meteor_kit), "grade", str(tmp_path / "class"), "--out", str(out)], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 2
    assert "is inside the class folder" in run.stderr and "choose an --out outside it" in run.stderr
    assert not (out / "results.json").exists()


def test_an_out_beside_a_symlinked_class_folder_is_refused(tmp_path, meteor_kit):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "alice.py").write_text("x = 1\n")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    run = subprocess.run(
        [str(meteor_kit), "grade", str(tmp_path / "link"), "--out", str(tmp_path / "real" / "out")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2 and "is inside the class folder" in run.stderr


def test_a_class_inside_a_folder_each_run_replaces_is_refused(tmp_path, meteor_kit):
    (tmp_path / "out" / "gradescope" / "class").mkdir(parents=True)
    (tmp_path / "out" / "gradescope" / "class" / "alice.py").write_text("x = 1\n")
    run = subprocess.run(
        [str(meteor_kit), "grade", str(tmp_path / "out" / "gradescope" / "class"), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2 and "which every run replaces" in run.stderr
    assert (tmp_path / "out" / "gradescope" / "class" / "alice.py").exists()


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _result(name: str = "alice.py") -> dict:
    return {"submission": name, "status": "graded", "score": 1, "max_score": 1, "tests": []}


def test_without_a_terminal_a_plain_line_comes_every_few_seconds(tmp_path):
    read, write = os.pipe()
    clock = Clock()
    with os.fdopen(write, "w") as stream:
        progress = Progress(100, stream, clock=clock, every=5.0)
        assert not progress.live
        for _ in range(100):
            clock.now += 0.5  # two submissions a second: 50 s in all
            progress.update(_result())
        progress.finish()
    text = os.read(read, 100_000).decode()
    os.close(read)
    lines = text.splitlines()
    assert "\r" not in text and "\x1b" not in text
    # The first one at once, then one every 5 s (10 submissions), then the last.
    assert lines[0] == "graded 1/100 (1%), 2.0/s, about 0:50 left"
    assert len(lines) == 11 and lines[1].startswith("graded 11/100 (11%)")
    assert lines[-1] == "graded 100/100 (100%), 2.0/s, about 0:00 left"


def _pty(columns: int) -> tuple[int, int]:
    main, side = pty.openpty()
    fcntl.ioctl(side, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    attrs = termios.tcgetattr(side)
    attrs[1] &= ~termios.OPOST  # keep "\n" as written, to see exactly what the bar sent
    termios.tcsetattr(side, termios.TCSANOW, attrs)
    return main, side


def _drain(fd: int) -> str:
    os.set_blocking(fd, False)
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except (BlockingIOError, OSError):
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode()


@pytest.mark.parametrize("columns", [60, 24, 120])
def test_on_a_terminal_the_bar_fits_the_width_and_redraws_one_line(columns):
    main, side = _pty(columns)
    clock = Clock()
    names = [
        "alice.py",
        "a" * 200 + ".py",
        "\x1b]0;owned\x07\x1b[2J名前名前名前名前名前名前名前名前名前名前.py",
        "e\u0301\u202eevil.py",
    ]
    with os.fdopen(side, "w", encoding="utf-8") as stream:
        progress = Progress(40, stream, clock=clock)
        assert progress.live
        for i in range(40):
            clock.now += 0.25
            progress.update(_result(names[i % len(names)]))
        progress.finish()
        text = _drain(main)
    os.close(main)
    assert text.count("\n") == 1 and text.endswith("\n")  # one line, ended once at the end
    frames = [f for f in text[:-1].split("\r") if f]
    assert len(frames) == 40
    for frame in frames:
        assert sum(_cells(c) for c in frame) == columns - 1  # never the last column: no wrap
        assert "\x1b" not in frame and "\x07" not in frame and "\u202e" not in frame
    last = frames[-1]
    assert "40/40" in last and "4.0/s" in last and "ETA 0:00" in last
    if columns >= 60:
        assert last.startswith("[") and "#" in last
        assert "ETA 0:07" in frames[11]  # 12 done at 4/s: 28 left, 7 s


def test_the_summary_counts_agree_with_the_tally():
    from grader.reports.progress import summary

    results = [
        {**_result("a.py"), "score": 1, "tests": [{"name": "t", "status": "pass"}]},
        {**_result("b.py"), "score": 0.05, "tests": [{"name": "t", "status": "fail"}], "diagnosis": {"mistake": "no_clipping"}},
        {
            "submission": "c\x1b[31m.py",
            "status": "error",
            "message": "could not load the submission: syntax error",
            "score": 0,
            "max_score": 1,
            "tests": [],
        },
        {"submission": "d.py", "status": "not_graded", "message": "not graded", "score": 0, "max_score": 1, "tests": []},
    ]
    run = ClassRun.from_json({"duration": 2.0, "submissions": results})
    text = summary(run, Path("/nowhere"))
    counts = tally(run.submissions)
    assert counts.bins[0] == 1 and counts.bins[9] == 1 and counts.categories["never_loaded"] == 1
    assert "1 could not be graded" in text and "c\\e[31m.py" in text and "\x1b" not in text
    assert "1 passed every test" in text
    rows = {
        line.split()[0]: int(line.split()[-1]) if line.split()[-1].isdigit() else int(line.split()[-2])
        for line in text.splitlines()
        if line.startswith("  ") and "%" in line
    }
    assert rows["0-9%"] == 1 and rows["90-100%"] == 1
    assert re.search(r"never loaded +1 +#+$", text, re.M) and re.search(r"not graded \(interrupted\) +1 +#+$", text, re.M)


def test_progress_never_fails_on_a_stream_without_a_descriptor():
    stream = io.StringIO()
    progress = Progress(2, stream, clock=Clock())
    progress.update(_result())
    progress.update(_result())
    assert stream.getvalue().count("\n") == 2


@given(name=st.text(max_size=300), columns=st.integers(10, 400), done=st.integers(0, 5000), total=st.integers(1, 5000))
@settings(max_examples=300, deadline=None)
def test_the_bar_never_reaches_the_last_column_and_never_carries_a_control_character(name, columns, done, total):
    progress = Progress(total, io.StringIO(), clock=Clock())
    progress.done = done
    line = progress.line(name, 160.0, columns)
    assert sum(_cells(c) for c in line) <= columns - 1
    assert not any(
        unicodedata.category(c) == "Cc"
        or 0xD800 <= ord(c) <= 0xDFFF
        or c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
        for c in line
    )
