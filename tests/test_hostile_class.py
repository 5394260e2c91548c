"""A class folder built by someone who read the kit's source, graded by the real CLI as root.

Links, FIFOs, devices, loops, names that collide or are not UTF-8, lone surrogates and
terminal escapes: `grade` finishes with status 0, writes a row for every entry, scores no
link, leaks no file's contents, writes only valid UTF-8, and `check` gives each file the
verdict `grade` gives it. The fixtures are made here: links and FIFOs cannot live in git.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

SECRET = "env-secret-6d1f0c-must-not-leak"
WRONG = "def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n    return 0.0\n"
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # what a terminal obeys (newline and tab aside)
ESCAPE_NAME = "esc\x1b[2J\x1b]0;pwned\x07.py"


def notebook(*cells: str) -> str:
    return json.dumps(
        {
            "nbformat": 4,
            "nbformat_minor": 5,
            "metadata": {},
            "cells": [
                {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": c.splitlines(True)}
                for c in cells
            ],
        }
    )


def build(klass: Path, kit_root: Path) -> None:
    reference = (kit_root / "solutions" / "reference.py").read_text()
    for where in ("alice.py", "aaron/zoe/meteor.py", ESCAPE_NAME, "=HYPERLINK(1).py"):
        (klass / where).parent.mkdir(parents=True, exist_ok=True)
        (klass / where).write_text(reference)
    (klass / "zoe").mkdir()
    (klass / "zoe" / "meteor.py").write_text(WRONG)
    # Links: to the reference through the grader's own cwd, to secrets, to the tests, to a device, to itself.
    (klass / "eve").mkdir()
    (klass / "eve" / "meteor.py").symlink_to("/proc/self/cwd/solutions/reference.py")
    (klass / "environ.py").symlink_to("/proc/self/environ")
    (klass / "shadow.py").symlink_to("/etc/shadow")
    (klass / "private.py").symlink_to(kit_root / "hidden_tests" / "test_private.py")
    (klass / "zero.py").symlink_to("/dev/zero")
    (klass / "loop").mkdir()
    (klass / "loop" / "a").symlink_to(".")
    (klass / "loop" / "b").symlink_to(".")
    os.mkfifo(klass / "fifo.py")
    # Saved on Windows (BOM, CRLF), and in Latin-1 with its coding line: both are correct files.
    (klass / "windows.py").write_bytes(b"\xef\xbb\xbf" + reference.replace("\n", "\r\n").encode())
    (klass / "latin.py").write_bytes(("# -*- coding: latin-1 -*-\n# café, déjà vu\n" + reference).encode("latin-1"))
    (klass / "notebook.ipynb").write_text(notebook("%load_ext autoreload", reference))
    # Lone surrogates: in an exception, at load, in printed output, in a notebook's JSON, in a file name.
    signature = "def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n"
    (klass / "raises.py").write_text(signature + "    raise ValueError('\\ud800 boom \\x1b[2J')\n")
    (klass / "loadfail.py").write_text("raise ValueError('\\udcff at load \\x1b]0;pwned\\x07')\n")
    (klass / "prints.py").write_text("import sys\n" + signature + "    sys.stdout.write('\\udc80\\x1b[2J')\n    return 0.0\n")
    (klass / "surrogate.ipynb").write_text(notebook("x = '\ud800'", WRONG))
    with open(os.fsencode(klass) + b"/caf\xe9.py", "w") as f:
        f.write(reference)


@pytest.fixture(scope="module")
def graded(tmp_path_factory, kit_root, meteor_kit):
    root = tmp_path_factory.mktemp("hostile_class")
    klass, out = root / "class", root / "out"
    klass.mkdir()
    build(klass, kit_root)
    run = subprocess.run(
        [str(meteor_kit), "grade", str(klass), "--out", str(out), "--jobs", "2", "--timeout", "2", "--budget", "10"],
        capture_output=True,
        timeout=600,
        cwd=kit_root,  # /proc/self/cwd/solutions/reference.py exists
        env={**os.environ, "METEOR_SECRET": SECRET},
    )
    document = json.loads((out / "results.json").read_text(encoding="utf-8"))
    return {"run": run, "klass": klass, "out": out, "by_name": {r["submission"]: r for r in document["submissions"]}}


def full_marks(result: dict) -> bool:
    return result["status"] == "graded" and result["score"] == result["max_score"] > 0


def test_grading_finishes_with_a_row_for_every_entry(graded):
    assert graded["run"].returncode == 0, graded["run"].stderr.decode(errors="replace")
    assert set(graded["by_name"]) == {
        "alice.py",
        "aaron/zoe",
        "zoe",
        "eve/meteor.py",
        "environ.py",
        "shadow.py",
        "private.py",
        "zero.py",
        "loop/a",
        "loop/b",
        "fifo.py",
        "windows.py",
        "latin.py",
        "notebook.ipynb",
        "raises.py",
        "loadfail.py",
        "prints.py",
        "surrogate.ipynb",
        "caf\\xe9.py",
        ESCAPE_NAME,
        "=HYPERLINK(1).py",
    }


@pytest.mark.parametrize("name", ["eve/meteor.py", "environ.py", "shadow.py", "private.py", "zero.py", "loop/a", "loop/b"])
def test_a_link_is_never_followed_and_says_why(graded, name):
    result = graded["by_name"][name]
    assert result["status"] == "error" and result["score"] == 0
    assert "symbolic link" in result["message"] and result["source"] is None


def test_a_fifo_gets_a_row_with_its_reason(graded):
    assert "it is a FIFO (named pipe), not a regular file" in graded["by_name"]["fifo.py"]["message"]


@pytest.mark.needs_root("one secret it looks for is /etc/shadow, which only root reads")
def test_no_secret_reaches_any_output(graded, kit_root):
    secrets = [SECRET, Path("/etc/shadow").read_text().splitlines()[0]]
    secrets += [line for line in (kit_root / "hidden_tests" / "test_private.py").read_text().splitlines() if len(line) > 60][:3]
    texts = [p.read_bytes().decode("utf-8") for p in graded["out"].rglob("*") if p.is_file()]
    texts += [graded["run"].stdout.decode(errors="replace"), graded["run"].stderr.decode(errors="replace")]
    assert len(secrets) >= 4
    assert [s for s in secrets if any(s in t for t in texts)] == []


def test_identity_is_the_path_in_the_class(graded):
    by_name = graded["by_name"]
    assert full_marks(by_name["aaron/zoe"]) and by_name["aaron/zoe"]["path"] == "aaron/zoe/meteor.py"
    assert by_name["zoe"]["score"] < by_name["zoe"]["max_score"] and by_name["zoe"]["path"] == "zoe/meteor.py"


@pytest.mark.parametrize("name", ["windows.py", "latin.py", "notebook.ipynb", "caf\\xe9.py", "alice.py", ESCAPE_NAME])
def test_correct_files_get_full_marks_however_they_are_saved_or_named(graded, name):
    assert full_marks(graded["by_name"][name]), graded["by_name"][name]["message"]


def test_every_output_file_is_valid_utf8_and_surrogates_are_replaced(graded):
    for path in graded["out"].rglob("*"):
        if path.is_file():
            path.read_bytes().decode("utf-8")  # strict
    by_name = graded["by_name"]
    assert "\ufffd boom" in by_name["raises.py"]["tests"][0]["message"]
    assert "\ufffd at load" in by_name["loadfail.py"]["message"]
    # Python refuses to compile a lone surrogate (so would Jupyter): a row that says so, in valid text.
    assert "surrogates not allowed" in by_name["surrogate.ipynb"]["message"]
    assert "x = '\ufffd'" in by_name["surrogate.ipynb"]["source"]
    assert by_name["prints.py"]["status"] == "graded"


def test_the_terminal_gets_no_control_character(graded):
    stdout = graded["run"].stdout.decode("utf-8")
    stderr = graded["run"].stderr.decode("utf-8")
    assert not CONTROL.search(stdout) and not CONTROL.search(stderr)
    assert "loadfail.py: could not load the submission" in stdout and "\\e]0;pwned\\x07" in stdout


def test_grades_csv_never_holds_a_formula(graded):
    lines = (graded["out"] / "grades.csv").read_text(encoding="utf-8").splitlines()
    assert any(line.startswith("'=HYPERLINK(1).py,") for line in lines)
    assert not any(line.startswith(("=", "+", "-", "@")) for line in lines)
    assert not any(CONTROL.search(line) for line in lines)


def check(meteor_kit, path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(meteor_kit), "check", str(path), *args], capture_output=True, timeout=600)


@pytest.mark.parametrize(
    "path, name",
    [
        ("windows.py", "windows.py"),
        ("latin.py", "latin.py"),
        ("notebook.ipynb", "notebook.ipynb"),
        ("zoe/meteor.py", "zoe"),
        ("eve/meteor.py", "eve/meteor.py"),
        ("loadfail.py", "loadfail.py"),
        ("surrogate.ipynb", "surrogate.ipynb"),
    ],
)
def test_check_gives_the_verdict_grade_gives(graded, meteor_kit, path, name):
    run = check(meteor_kit, graded["klass"] / path, "--json")
    report = json.loads(run.stdout)
    result = graded["by_name"][name]
    assert (report["status"], report["score"], report["max_score"]) == (result["status"], result["score"], result["max_score"])
    assert [(t["name"], t["status"]) for t in report["tests"]] == [(t["name"], t["status"]) for t in result["tests"]]
    assert run.returncode == (0 if full_marks(result) else 1)


def test_check_prints_no_control_character(graded, meteor_kit):
    run = check(meteor_kit, graded["klass"] / "loadfail.py")
    text = run.stdout.decode("utf-8")
    assert run.returncode == 1 and "\\e]0;pwned\\x07" in text and not CONTROL.search(text)
