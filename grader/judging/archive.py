"""Unpacking a downloaded zip, member by member, into a private temporary folder, with caps.

The zip comes from an LMS but holds files students named: nothing in it is trusted. It is never
given to `extractall`: each member is checked (its name, its type, its size as declared and as
read) and written through descriptors below a folder made by `mkdtemp`, so nothing is ever
written anywhere else. What makes the whole archive unusable (corrupt, encrypted, a bomb, a
member that climbs out of the folder, two members with one name) is an `ArchiveError`, one line;
a member that is only odd (a link, a device, a name with control characters) is left out and
listed in `skipped` with the reason, so it becomes a row of the class.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

MAX_MEMBERS = 20_000
MAX_TOTAL = 1_000_000_000  # bytes once unpacked, all members together
MAX_MEMBER = 100_000_000  # bytes of one member once unpacked
MAX_RATIO = 200  # unpacked over packed, for a member above RATIO_FROM bytes: text packs 3-10 times
RATIO_FROM = 1_000_000
MAX_DEPTH = 16
MAX_COMPONENT = 255  # bytes of one name component (the file system's own limit)
CHUNK = 1 << 20
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
# Folders an archiver adds beside the content (macOS resource forks): never part of a submission.
IGNORED = ("__MACOSX",)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


class ArchiveError(Exception):
    """The zip cannot be used at all; the message is one line for the instructor."""


@dataclass
class Unpacked:
    """Where the zip was unpacked, and the members left out with the reason."""

    root: str
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (the member's name, shown safely; why)


def is_zip(path: str) -> bool:
    """Whether `path` is a regular file that starts like a zip (its name may say anything)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as f:
            return f.read(4) in (b"PK\x03\x04", b"PK\x05\x06")
    except OSError:
        return False


@contextmanager
def unpacked(path: str) -> Iterator[Unpacked]:
    """The zip at `path` unpacked into a private temporary folder, removed on leaving (Ctrl+C too)."""
    root = tempfile.mkdtemp(prefix="kit-download-")
    owner = os.getpid()
    try:
        yield unpack(path, root)
    finally:
        if os.getpid() == owner:  # a forked worker leaving this frame must not remove the parent's files
            shutil.rmtree(root, ignore_errors=True)


def unpack(path: str, root: str) -> Unpacked:
    """Unpack `path` into the empty folder `root`; raises ArchiveError for an archive that cannot be used."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
            plan, skipped = _plan(members)
            result = Unpacked(root, skipped)
            folders = _Folders(root)
            try:
                for info, parts in plan:
                    _write_member(archive, info, folders, parts)
            finally:
                folders.close()
            return result
    except ArchiveError:
        raise
    except UnicodeDecodeError:
        raise ArchiveError("a member's name is not valid UTF-8 although the zip says it is") from None
    except (zipfile.BadZipFile, zlib.error, EOFError, ValueError) as exc:
        raise ArchiveError(f"the zip is corrupt or truncated ({_short(exc)})") from None
    except NotImplementedError as exc:
        raise ArchiveError(f"the zip uses a compression this Python cannot read ({_short(exc)})") from None
    except OSError as exc:
        raise ArchiveError(f"the zip cannot be read or unpacked ({exc.strerror or _short(exc)})") from None


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:200]


def _plan(members: list[zipfile.ZipInfo]) -> tuple[list[tuple[zipfile.ZipInfo, tuple[str, ...]]], list[tuple[str, str]]]:
    """The members to write, each with its path as components, after every check that needs no data."""
    if len(members) > MAX_MEMBERS:
        raise ArchiveError(f"the zip holds {len(members)} members; at most {MAX_MEMBERS} are unpacked")
    total = 0
    seen: dict[tuple[str, ...], str] = {}
    plan: list[tuple[zipfile.ZipInfo, tuple[str, ...]]] = []
    skipped: list[tuple[str, str]] = []
    for info in members:
        name = info.filename
        shown = _shown(name)
        if info.flag_bits & 0x1:
            raise ArchiveError(f"the zip is encrypted (member {shown}); download it again without a password")
        parts = member_parts(name)  # raises for absolute paths and ".."
        if not parts or parts[0] in IGNORED:
            continue
        kind = stat.S_IFMT(info.external_attr >> 16)
        is_dir = name.endswith(("/", "\\")) or kind == stat.S_IFDIR
        if kind == stat.S_IFLNK:
            skipped.append((shown, "it is a symbolic link inside the zip; links are never unpacked"))
            continue
        if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
            skipped.append((shown, "it is not a regular file inside the zip (a device, FIFO or socket)"))
            continue
        bad = next((p for p in parts if _CONTROL.search(p) or len(p.encode("utf-8", "surrogatepass")) > MAX_COMPONENT), None)
        if bad is not None:
            why = "is too long" if len(bad.encode("utf-8", "surrogatepass")) > MAX_COMPONENT else "holds control characters"
            skipped.append((shown, f"its name {why}; such a member is not unpacked"))
            continue
        if len(parts) > MAX_DEPTH:
            skipped.append((shown, f"it is nested more than {MAX_DEPTH} folders deep; it is not unpacked"))
            continue
        for depth in range(1, len(parts) + 1):  # a file and a folder of one name collide as well
            prefix = parts[:depth]
            role = "dir" if depth < len(parts) or is_dir else "file"
            if prefix in seen and (role == "file" or seen[prefix] == "file"):
                raise ArchiveError(f"the zip holds two members named {_shown('/'.join(prefix))}; it cannot be unpacked safely")
            seen[prefix] = role if prefix not in seen else seen[prefix]
        if is_dir:
            plan.append((info, parts + ("",)))
            continue
        if info.file_size > MAX_MEMBER:
            raise ArchiveError(
                f"member {shown} unpacks to {info.file_size} bytes; at most {MAX_MEMBER} are allowed (a zip bomb?)"
            )
        if info.file_size > RATIO_FROM and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            raise ArchiveError(
                f"member {shown} unpacks to {info.file_size // max(info.compress_size, 1)} times its "
                f"packed size; at most {MAX_RATIO} is allowed (a zip bomb?)"
            )
        total += info.file_size
        if total > MAX_TOTAL:
            raise ArchiveError(f"the zip unpacks to more than {MAX_TOTAL} bytes (a zip bomb?)")
        plan.append((info, parts))
    return plan, skipped


def member_parts(name: str) -> tuple[str, ...]:
    """A member's path as components; raises ArchiveError for one that is absolute or climbs out."""
    if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name):
        raise ArchiveError(f"the zip holds a member with an absolute path ({_shown(name)}); it cannot be unpacked safely")
    parts = tuple(p for p in re.split(r"[/\\]", name) if p not in ("", "."))
    if ".." in parts:
        raise ArchiveError(f"the zip holds a member that climbs out of its folder ({_shown(name)}); it cannot be unpacked safely")
    return parts


def _shown(name: str) -> str:
    """A member's name for a one-line message: control characters and surrogates written out."""
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", name)
    return repr(text[:200] + ("..." if len(text) > 200 else ""))


class _Folders:
    """The folders members are written into, made once and opened one component at a time, never through a link.

    The folder of the last member stays open: an LMS zip lists a student's files together, so
    most members need no folder opened at all (opening and making folders was most of the time).
    """

    def __init__(self, root: str):
        self.root = os.open(root, _DIR_FLAGS)
        self.made: set[tuple[str, ...]] = set()
        self.last: tuple[tuple[str, ...], int] | None = None

    def open(self, folders: tuple[str, ...]) -> int:
        if self.last is not None and self.last[0] == folders:
            return self.last[1]
        self._forget()
        fd = os.dup(self.root)
        try:
            for depth, part in enumerate(folders, 1):
                if folders[:depth] not in self.made:
                    try:
                        os.mkdir(part, 0o700, dir_fd=fd)
                    except FileExistsError:
                        pass
                    self.made.add(folders[:depth])
                inner = os.open(part, _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = inner
        except BaseException:
            os.close(fd)
            raise
        self.last = (folders, fd)
        return fd

    def _forget(self) -> None:
        if self.last is not None:
            os.close(self.last[1])
            self.last = None

    def close(self) -> None:
        self._forget()
        os.close(self.root)


def _write_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, folders: _Folders, parts: tuple[str, ...]) -> None:
    """One member written below the unpacking folder (a folder member: only made)."""
    parent = folders.open(parts[:-1])
    if parts[-1] == "":
        return
    fd = os.open(parts[-1], _NEW_FILE, 0o600, dir_fd=parent)
    written = 0
    with os.fdopen(fd, "wb") as out, archive.open(info) as member:
        while True:
            chunk = member.read(CHUNK)
            if not chunk:
                break
            written += len(chunk)
            # zipfile stops at the declared size; counted anyway, as the caps were checked on it.
            if written > info.file_size or written > MAX_MEMBER:
                raise ArchiveError(f"member {_shown(info.filename)} holds more than it declares (a zip bomb?)")
            out.write(chunk)
