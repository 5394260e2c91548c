"""Unpacking a downloaded zip: only into its own temporary folder, and never a bad archive."""

from __future__ import annotations

import io
import os
import stat
import subprocess
import zipfile
from pathlib import Path

import pytest

from grader.judging import archive
from grader.judging.archive import ArchiveError, is_zip, unpack, unpacked


def make_zip(path: Path, members: list[tuple[str | zipfile.ZipInfo, bytes]], compression=zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", compression) as z:
        for name, data in members:
            z.writestr(name, data)
    return path


def files_under(root: str) -> dict[str, bytes]:
    found = {}
    for folder, _, names in os.walk(root):
        for name in names:
            full = os.path.join(folder, name)
            found[os.path.relpath(full, root)] = Path(full).read_bytes()
    return found


def test_a_zip_unpacks_member_by_member_into_a_private_folder_removed_afterwards(tmp_path):
    z = make_zip(tmp_path / "d.zip", [("a/meteor.py", b"x = 1\n"), ("b/", b""), ("__MACOSX/a/._meteor.py", b"junk")])
    with unpacked(str(z)) as download:
        root = download.root
        assert stat.S_IMODE(os.stat(root).st_mode) == 0o700
        assert files_under(root) == {"a/meteor.py": b"x = 1\n"}
        assert os.path.isdir(os.path.join(root, "b")) and download.skipped == []
    assert not os.path.exists(root)


def test_the_folder_is_removed_when_the_run_is_interrupted(tmp_path):
    z = make_zip(tmp_path / "d.zip", [("a.py", b"x = 1\n")])
    seen = []
    with pytest.raises(KeyboardInterrupt):
        with unpacked(str(z)) as download:
            seen.append(download.root)
            raise KeyboardInterrupt
    assert seen and not os.path.exists(seen[0])


@pytest.mark.parametrize(
    "name, words",
    [
        ("/etc/cron.d/evil", "absolute path"),
        ("\\windows\\evil.py", "absolute path"),
        ("C:/evil.py", "absolute path"),
        ("../../evil.py", "climbs out"),
        ("a/../../evil.py", "climbs out"),
        ("a\\..\\..\\evil.py", "climbs out"),
    ],
)
def test_a_member_outside_the_folder_refuses_the_whole_zip_and_writes_nothing(tmp_path, name, words):
    z = make_zip(tmp_path / "d.zip", [("ok.py", b"x = 1\n"), (name, b"owned")])
    root = tmp_path / "root"
    root.mkdir()
    with pytest.raises(ArchiveError, match=words):
        unpack(str(z), str(root))
    assert list(root.iterdir()) == []  # checked before anything was written
    assert not (tmp_path / "evil.py").exists()


def test_a_symbolic_link_member_is_never_made_and_is_reported(tmp_path):
    link = zipfile.ZipInfo("alice/meteor.py")
    link.create_system = 3
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    z = make_zip(tmp_path / "d.zip", [(link, b"/etc/shadow"), ("bob/meteor.py", b"x = 1\n")])
    with unpacked(str(z)) as download:
        assert not os.path.lexists(os.path.join(download.root, "alice", "meteor.py"))
        assert files_under(download.root) == {"bob/meteor.py": b"x = 1\n"}
        assert download.skipped == [("'alice/meteor.py'", "it is a symbolic link inside the zip; links are never unpacked")]


def test_a_device_member_is_left_out(tmp_path):
    fifo = zipfile.ZipInfo("fifo.py")
    fifo.external_attr = (stat.S_IFIFO | 0o644) << 16
    z = make_zip(tmp_path / "d.zip", [(fifo, b""), ("ok.py", b"x = 1\n")])
    with unpacked(str(z)) as download:
        assert files_under(download.root) == {"ok.py": b"x = 1\n"}
        assert "not a regular file" in download.skipped[0][1]


@pytest.mark.parametrize("name", ["evil\x1b[2J.py", "bell\x07/meteor.py", "a\x85b.py"])
def test_a_name_with_control_characters_is_left_out_and_shown_escaped(tmp_path, name):
    z = make_zip(tmp_path / "d.zip", [(name, b"x = 1\n"), ("ok.py", b"x = 1\n")])
    with unpacked(str(z)) as download:
        assert files_under(download.root) == {"ok.py": b"x = 1\n"}
        shown, why = download.skipped[0]
        assert "control characters" in why and "\x1b" not in shown and "\x07" not in shown and "\x85" not in shown


def test_a_name_that_is_not_valid_utf8_though_flagged_so_is_a_clear_error(tmp_path):
    z = make_zip(tmp_path / "d.zip", [("AAAA.py", b"x = 1\n")])
    data = z.read_bytes()
    # Flag the name as UTF-8 (bit 11) in both headers, and make it a lone surrogate's bytes.
    data = data.replace(b"AAAA", b"\xed\xa0\x80A")
    for header in (b"PK\x03\x04", b"PK\x01\x02"):
        at = data.index(header)
        offset = at + (6 if header == b"PK\x03\x04" else 8)
        flags = int.from_bytes(data[offset : offset + 2], "little") | 0x800
        data = data[:offset] + flags.to_bytes(2, "little") + data[offset + 2 :]
    z.write_bytes(data)
    with pytest.raises(ArchiveError, match="not valid UTF-8"):
        unpack(str(z), str(tmp_path))


def test_two_members_of_one_name_refuse_the_zip(tmp_path):
    with zipfile.ZipFile(tmp_path / "d.zip", "w") as z:
        z.writestr("a/meteor.py", b"first")
        with pytest.warns(UserWarning):
            z.writestr("a/meteor.py", b"second")
    with pytest.raises(ArchiveError, match="two members named"):
        unpack(str(tmp_path / "d.zip"), str(tmp_path / "x"))


def test_a_file_and_a_folder_of_one_name_refuse_the_zip(tmp_path):
    z = make_zip(tmp_path / "d.zip", [("a", b"file"), ("a/b.py", b"x = 1\n")])
    with pytest.raises(ArchiveError, match="two members named 'a'"):
        unpack(str(z), str(tmp_path))


def test_a_zip_bomb_is_refused_before_it_is_unpacked(tmp_path, monkeypatch):
    z = make_zip(tmp_path / "d.zip", [("bomb.py", b"\0" * 5_000_000)])
    with pytest.raises(ArchiveError, match="zip bomb"):
        unpack(str(z), str(tmp_path / "x"))
    monkeypatch.setattr(archive, "MAX_TOTAL", 1000)
    z = make_zip(tmp_path / "e.zip", [(f"f{i}.py", b"x" * 400) for i in range(3)], zipfile.ZIP_STORED)
    with pytest.raises(ArchiveError, match="more than 1000 bytes"):
        unpack(str(z), str(tmp_path / "y"))


def test_too_many_members_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(archive, "MAX_MEMBERS", 5)
    z = make_zip(tmp_path / "d.zip", [(f"f{i}.py", b"x = 1\n") for i in range(6)])
    with pytest.raises(ArchiveError, match="6 members; at most 5"):
        unpack(str(z), str(tmp_path / "x"))


def test_a_member_that_holds_more_than_it_declares_is_stopped(tmp_path):
    z = make_zip(tmp_path / "d.zip", [("a.py", b"x" * 1000)], zipfile.ZIP_STORED)
    data = bytearray(z.read_bytes())
    # Declare 10 bytes in the central directory: reading stops there, and the CRC cannot match.
    central = data.index(b"PK\x01\x02")
    data[central + 24 : central + 28] = (10).to_bytes(4, "little")
    z.write_bytes(bytes(data))
    root = tmp_path / "root"
    root.mkdir()
    with pytest.raises(ArchiveError):
        unpack(str(z), str(root))
    assert all(len(b) <= 10 for b in files_under(str(root)).values())


def test_an_encrypted_zip_is_refused_with_the_reason(tmp_path):
    z = make_zip(tmp_path / "d.zip", [("a.py", b"x = 1\n")])
    data = bytearray(z.read_bytes())
    for header, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = data.index(header) + offset
        data[at] |= 0x1
    z.write_bytes(bytes(data))
    with pytest.raises(ArchiveError, match="encrypted"):
        unpack(str(z), str(tmp_path / "x"))


@pytest.mark.parametrize("damage", ["truncated", "garbage"])
def test_a_corrupt_zip_is_a_one_line_error(tmp_path, damage):
    z = make_zip(tmp_path / "d.zip", [("a.py", b"x = 1\n" * 1000)])
    data = z.read_bytes()
    z.write_bytes(data[: len(data) // 2] if damage == "truncated" else data[:30] + b"\xff" * (len(data) - 30))
    with pytest.raises(ArchiveError) as caught:
        unpack(str(z), str(tmp_path / "x"))
    assert "\n" not in str(caught.value) and "corrupt" in str(caught.value)


def test_only_files_that_start_like_a_zip_are_taken_for_one(tmp_path):
    (tmp_path / "not.zip").write_text("print(1)\n")
    z = make_zip(tmp_path / "named.py", [("a.py", b"x = 1\n")])
    assert not is_zip(str(tmp_path / "not.zip")) and is_zip(str(z)) and not is_zip(str(tmp_path))


def test_grade_refuses_a_bad_zip_with_one_line_and_exit_2(tmp_path, meteor_kit):
    z = make_zip(tmp_path / "d.zip", [("ok.py", b"x = 1\n"), ("../evil.py", b"owned")])
    result = subprocess.run(
        [str(meteor_kit), "grade", str(z), "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "climbs out of its folder" in lines[0]
    assert not (tmp_path / "evil.py").exists() and not (tmp_path / "out" / "results.json").exists()


def test_a_zip_on_the_command_line_must_come_alone(tmp_path, meteor_kit):
    z = make_zip(tmp_path / "d.zip", [("a.py", b"x = 1\n")])
    (tmp_path / "b.py").write_text("x = 1\n")
    result = subprocess.run(
        [str(meteor_kit), "grade", str(z), str(tmp_path / "b.py"), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2 and "give a zip alone" in result.stderr


def test_zip_member_bytes_are_written_exactly(tmp_path):
    payload = bytes(range(256)) * 100
    z = make_zip(tmp_path / "d.zip", [("x/y/z.bin", payload)])
    buffer = io.BytesIO(z.read_bytes())
    assert zipfile.ZipFile(buffer).testzip() is None
    with unpacked(str(z)) as download:
        assert files_under(download.root) == {"x/y/z.bin": payload}


def test_a_file_named_zip_that_is_not_one_is_a_one_line_error(tmp_path, meteor_kit):
    (tmp_path / "submissions.zip").write_text("<html>session expired</html>\n")
    result = subprocess.run(
        [str(meteor_kit), "grade", str(tmp_path / "submissions.zip"), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "is not a zip archive" in result.stderr


def test_a_zip_holding_only_another_zip_says_so_and_is_not_opened(tmp_path, meteor_kit):
    inner = make_zip(tmp_path / "inner.zip", [("a.py", b"x = 1\n")])
    outer = make_zip(tmp_path / "outer.zip", [("submissions.zip", inner.read_bytes())])
    result = subprocess.run(
        [str(meteor_kit), "grade", str(outer), "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 2 and "only another zip (submissions.zip)" in result.stderr
