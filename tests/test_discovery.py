"""Finding and reading submissions in a folder a hostile student helped to build (discovery runs as root)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
import threading
from pathlib import Path

import pytest

from grader.core.notebook import NotebookError, extract
from grader.core.submission import LoadError
from grader.judging import discovery
from grader.judging.discovery import MAX_BYTES, ReadError, Spec, UsageError, decode_python, discover, prepare, read_source

CORRECT = "def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n    return 0.5\n"


def by_name(specs: list[Spec]) -> dict[str, Spec]:
    return {s.name: s for s in specs}


def test_a_link_is_listed_with_its_reason_and_never_read(tmp_path, kit_root):
    klass = tmp_path / "class"
    (klass / "eve").mkdir(parents=True)
    (klass / "eve" / "meteor.py").symlink_to("/proc/self/cwd/solutions/reference.py")
    (klass / "environ.py").symlink_to("/proc/self/environ")
    (klass / "shadow.py").symlink_to("/etc/shadow")
    (klass / "private.py").symlink_to(kit_root / "hidden_tests" / "test_private.py")
    (klass / "somewhere").symlink_to(kit_root / "solutions")  # a link to a directory
    (klass / "alice.py").write_text(CORRECT)
    specs = by_name(discover([str(klass)]))
    assert set(specs) == {"alice.py", "eve/meteor.py", "environ.py", "shadow.py", "private.py", "somewhere"}
    for name in ("eve/meteor.py", "environ.py", "shadow.py", "private.py", "somewhere"):
        assert specs[name].path is None and "symbolic link" in specs[name].problem
        assert prepare(specs[name]).source == ""
    assert "(to /etc/shadow)" in specs["shadow.py"].problem
    (klass / "odd.py").symlink_to("/x\n\x1b[2J")
    assert "(to /x\\n\\e[2J)" in by_name(discover([str(klass)]))["odd.py"].problem  # one line, inert
    assert prepare(specs["alice.py"]).source == CORRECT


def test_a_link_named_on_the_command_line_is_refused_too(tmp_path, kit_root):
    (tmp_path / "meteor.py").symlink_to(kit_root / "solutions" / "reference.py")
    (tmp_path / "class").symlink_to(kit_root / "solutions")
    specs = discover([str(tmp_path / "meteor.py"), str(tmp_path / "class") + "/"])
    assert [(s.name, s.path) for s in specs] == [("meteor.py", None), ("class", None)]
    assert all("symbolic link" in s.problem for s in specs)


def test_a_file_named_inside_a_linked_folder_is_refused(tmp_path, kit_root):
    (tmp_path / "eve").symlink_to(kit_root / "solutions")
    [spec] = discover([str(tmp_path / "eve" / "reference.py")])  # what `grade class/*/*.py` expands to
    problem = prepare(spec).problem
    assert problem.startswith("its folder is a symbolic link (to ") and prepare(spec).source == ""


def test_folders_nested_too_deep_are_reported_not_walked(tmp_path):
    deep = tmp_path.joinpath(*[f"d{i}" for i in range(20)])
    deep.mkdir(parents=True)
    (deep / "meteor.py").write_text(CORRECT)
    (tmp_path / "d0" / "x.py").write_text(CORRECT)
    [first, *rest] = discover([str(tmp_path)])
    assert first.name == "d0/x.py" and len(rest) == 1
    assert rest[0].problem == "folders nested more than 12 deep are not searched"
    assert rest[0].name == "/".join(f"d{i}" for i in range(13))


def test_two_links_to_the_folder_itself_do_not_hang(tmp_path):
    klass = tmp_path / "class"
    (klass / "loop").mkdir(parents=True)
    (klass / "loop" / "a").symlink_to(".")
    (klass / "loop" / "b").symlink_to("..")
    (klass / "bob.py").write_text(CORRECT)
    found: list[Spec] = []
    worker = threading.Thread(target=lambda: found.extend(discover([str(klass)])), daemon=True)
    worker.start()
    worker.join(timeout=10)
    assert not worker.is_alive()
    assert [s.name for s in found] == ["bob.py", "loop/a", "loop/b"]


@pytest.mark.needs_root("making a character device (mknod) needs root")
def test_fifos_devices_and_sockets_get_a_row_and_never_hang(tmp_path):
    import socket

    klass = tmp_path / "class"
    klass.mkdir()
    os.mkfifo(klass / "fifo.py")
    os.mknod(klass / "zero.py", 0o600 | stat.S_IFCHR, os.makedev(1, 5))  # /dev/zero's numbers
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(klass / "sock.py"))
    (klass / "dave.py").write_text(CORRECT)
    specs = by_name(discover([str(klass)]))
    server.close()
    assert specs["fifo.py"].problem == "it is a FIFO (named pipe), not a regular file"
    assert specs["zero.py"].problem == "it is a character device, not a regular file"
    assert specs["sock.py"].problem == "it is a socket, not a regular file"
    assert prepare(specs["dave.py"]).source == CORRECT


def test_a_fifo_in_place_of_a_discovered_file_is_refused_without_blocking(tmp_path):
    (tmp_path / "alice.py").write_text(CORRECT)
    [spec] = discover([str(tmp_path / "alice.py")])
    (tmp_path / "alice.py").unlink()
    os.mkfifo(tmp_path / "alice.py")  # swapped after discovery: opening must not wait for a writer
    assert prepare(spec).problem == "it is a FIFO (named pipe), not a regular file"


def test_a_directory_swapped_for_a_link_after_discovery_is_refused(tmp_path, kit_root):
    klass = tmp_path / "class"
    (klass / "alice").mkdir(parents=True)
    (klass / "alice" / "reference.py").write_text(CORRECT)
    (klass / "bob.py").write_text(CORRECT)
    specs = by_name(discover([str(klass)]))
    (klass / "alice" / "reference.py").unlink()
    (klass / "alice").rmdir()
    (klass / "alice").symlink_to(kit_root / "solutions")  # now alice/reference.py is the real reference
    assert "symbolic link" in prepare(specs["alice"]).problem


@pytest.mark.needs_root("it discovers as uid 65534, which only root can become")
def test_unreadable_entries_get_a_row_with_the_reason(tmp_path):
    """Root reads everything, so this runs in a child that drops to an unprivileged uid."""
    base = Path(tempfile.mkdtemp())  # pytest's own folders are closed to other users
    try:
        rows = _discover_as_nobody(base)
    finally:
        for path in (base / "class" / "locked", base / "class" / "secret.py"):
            path.chmod(0o700)
        shutil.rmtree(base)
    assert rows == {
        "open.py": "",
        "secret.py": "cannot read the file: Permission denied",
        "locked": "cannot open the directory: Permission denied",
    }


def _discover_as_nobody(base: Path) -> dict:
    klass = base / "class"
    (klass / "locked").mkdir(parents=True)
    (klass / "locked" / "x.py").write_text(CORRECT)
    (klass / "secret.py").write_text(CORRECT)
    (klass / "open.py").write_text(CORRECT)
    (klass / "locked").chmod(0)
    (klass / "secret.py").chmod(0)
    base.chmod(0o755)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read)
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            specs = discover([str(klass)])
            rows = {s.name: s.problem or prepare(s).problem for s in specs}
        except BaseException as exc:
            rows = {"error": repr(exc)}
        os.write(write, json.dumps(rows).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as f:
        rows = json.loads(f.read())
    os.waitpid(pid, 0)
    return rows


def test_the_bytes_read_are_capped_whatever_stat_says(tmp_path, monkeypatch):
    big = tmp_path / "big.py"
    big.write_bytes(b"# padding\n" * 3_000_000)
    real_fstat, real_read = os.fstat, os.read
    taken = []

    class Lying:  # a file whose stat says it is empty, as /proc's files do
        def __init__(self, info):
            self.st_mode, self.st_size = info.st_mode, 0

    monkeypatch.setattr(discovery.os, "fstat", lambda fd: Lying(real_fstat(fd)))
    monkeypatch.setattr(discovery.os, "read", lambda fd, n: taken.append(real_read(fd, n)) or taken[-1])
    [spec] = discover([str(big)])
    assert prepare(spec).problem == "the file is more than 1 MB; a submission may be at most 1 MB"
    assert sum(map(len, taken)) == MAX_BYTES + 1


def test_a_file_over_the_limit_is_refused_with_its_size(tmp_path):
    (tmp_path / "big.py").write_bytes(b"x" * (MAX_BYTES + 1))
    (tmp_path / "fits.py").write_bytes(b"#" * (MAX_BYTES - 1) + b"\n")
    assert prepare(discover([str(tmp_path / "big.py")])[0]).problem == "the file is 1.0 MB; a submission may be at most 1 MB"
    assert prepare(discover([str(tmp_path / "fits.py")])[0]).problem == ""


def test_a_submission_is_named_by_its_path_in_the_class(tmp_path):
    klass = tmp_path / "class"
    for where in ("aaron/zoe/meteor.py", "aaron/notes.py", "zoe/meteor.py", "carl/a/meteor.py"):
        (klass / where).parent.mkdir(parents=True, exist_ok=True)
        (klass / where).write_text(CORRECT)
    (klass / "carl" / "b").mkdir()
    (klass / "carl" / "b" / "README.md").write_text("nothing to grade")
    specs = discover([str(klass)])
    assert [(s.name, s.where) for s in specs] == [
        ("aaron/notes.py", "aaron/notes.py"),
        ("aaron/zoe", "aaron/zoe/meteor.py"),
        ("carl/a", "carl/a/meteor.py"),
        ("carl/b", "carl/b"),
        ("zoe", "zoe/meteor.py"),
    ]
    assert specs[3].problem == "the directory holds no .py or .ipynb file"
    assert discover([str(klass)]) == specs  # the same folder, the same names, in the same order


def test_two_folders_with_the_same_names_keep_them_apart(tmp_path):
    for group in ("a", "b"):
        (tmp_path / group / "alice").mkdir(parents=True)
        (tmp_path / group / "alice" / "meteor.py").write_text(CORRECT)
        (tmp_path / group / "bob.py").write_text(CORRECT)
    names = [s.name for s in discover([str(tmp_path / "a"), str(tmp_path / "b")])]
    assert names == ["bob.py", "alice", "bob.py (2)", "alice (2)"]


def test_a_name_that_is_not_utf8_stays_distinct_and_printable(tmp_path):
    klass = os.fsencode(tmp_path / "class")
    os.mkdir(klass)
    for raw in (b"caf\xe9.py", b"caf\xe8.py"):
        with open(klass + b"/" + raw, "w") as f:
            f.write(CORRECT)
    specs = discover([os.fsdecode(klass)])
    assert [s.name for s in specs] == ["caf\\xe8.py", "caf\\xe9.py"]
    assert all(prepare(s).source == CORRECT for s in specs)
    assert all(s.name.encode("utf-8") for s in specs)


def test_hidden_files_and_other_files_are_not_submissions(tmp_path):
    (tmp_path / ".hidden.py").write_text(CORRECT)
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(UsageError, match="no .py or .ipynb submission"):
        discover([str(tmp_path)])


# ---------------------------------------------------------------- decoding as CPython does


def test_a_windows_file_with_bom_and_crlf_decodes_as_python_reads_it(kit_root):
    reference = (kit_root / "solutions" / "reference.py").read_bytes()
    data = b"\xef\xbb\xbf" + reference.replace(b"\n", b"\r\n")
    assert decode_python(data) == reference.decode("utf-8")


def test_a_coding_line_is_honoured():
    data = "# -*- coding: latin-1 -*-\nWORD = 'café'\n".encode("latin-1")
    namespace: dict = {}
    exec(compile(decode_python(data), "x.py", "exec"), namespace)
    assert namespace["WORD"] == "café"


@pytest.mark.parametrize(
    "data, words",
    [
        (b"# coding: klingon\nx = 1\n", "the file's coding line cannot be used (unknown encoding: klingon)"),
        (b"# coding: rot13\nx = 1\n", "the file's coding line cannot be used ('rot13' is not a text encoding"),
        (b"\xef\xbb\xbf# coding: latin-1\nx = 1\n", "the file's coding line cannot be used (encoding problem"),
        (b"# \xe9t\xe9\nx = 1\n", "the file is not UTF-8 text (invalid continuation byte at byte 2)"),
        (b"x = 1\ny = '\xff'\n", "the file is not UTF-8 text (invalid start byte at byte 11)"),
    ],
)
def test_an_undecodable_file_gets_a_clear_reason(data, words):
    with pytest.raises(ReadError) as caught:
        decode_python(data)
    assert str(caught.value).startswith(words)


def test_pytest_submission_reads_files_as_grade_does(tmp_path, kit_root):
    bom = tmp_path / "windows.py"
    bom.write_bytes(b"\xef\xbb\xbf" + CORRECT.replace("\n", "\r\n").encode())
    assert read_source(bom) == CORRECT
    link = tmp_path / "link.py"
    link.symlink_to(kit_root / "solutions" / "reference.py")
    with pytest.raises(LoadError, match="symbolic link"):
        read_source(link)


# ---------------------------------------------------------------- notebooks


def test_a_notebook_with_a_lone_surrogate_is_read():
    text = json.dumps({"cells": [{"cell_type": "code", "source": ["x = '\ud800'\n", CORRECT]}]})
    assert "\\ud800" in text  # JSON escapes it: it becomes a real surrogate only when parsed
    assert "\ud800" in extract(text).source


@pytest.mark.parametrize(
    "text, words",
    [
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        (json.dumps({"cells": [{"cell_type": "code", "source": [1, 2]}]}), "cell 1's source is not text"),
        (json.dumps({"cells": [{"cell_type": "code", "source": {"a": 1}}]}), "cell 1's source is not text"),
        (json.dumps({"cells": "none"}), "no list of cells"),
    ],
)
def test_a_malformed_notebook_gets_a_reason_not_a_crash(text, words):
    with pytest.raises(NotebookError, match=words):
        extract(text)


def test_a_notebook_with_a_bom_is_read(tmp_path):
    path = tmp_path / "work.ipynb"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"cells": [{"cell_type": "code", "source": CORRECT}]}).encode())
    prepared = prepare(discover([str(path)])[0])
    assert prepared.problem == "" and prepared.source == CORRECT
