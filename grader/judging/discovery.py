"""Finding a class's submissions and reading their code, as root, in a folder students wrote.

Nothing here follows a symbolic link, opens anything but a regular file, or reads more than
`MAX_BYTES`: a link to the reference or to /etc/shadow, a FIFO or a device is listed as a
submission that could not be graded, with the reason. Directories are opened one component
at a time below the folder named on the command line, each with O_NOFOLLOW, so a directory
swapped for a link after discovery is refused too. A submission's identity is its path
relative to that folder.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader.core.notebook import NotebookError, extract
from grader.core.safe_text import for_terminal, path_text
from grader.core.submission import LoadError
from grader.lms.adapter import Identity

MAX_BYTES = 1_000_000
SUFFIXES = (".py", ".ipynb")
MAX_DEPTH = 12  # folders nested deeper than this are reported, not walked
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO that slipped past discovery returns at once, and fstat refuses it.
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


class UsageError(Exception):
    """Bad arguments: the command stops before grading anything."""


@dataclass(frozen=True)
class Spec:
    """One submission to grade: its name in the reports and the file holding it."""

    name: str
    path: Path | None
    problem: str = ""  # why it cannot be graded at all, found before anything runs
    where: str = ""  # its path relative to the folder named on the command line, as text
    root: str | None = None  # that folder; the file is opened from it one component at a time
    parts: tuple[str, ...] = field(default=())
    student: dict | None = None  # who it belongs to (grader/lms/adapter.py's Identity, as JSON)
    note: str = ""  # what a reader of every view should know (an ambiguous pick of the file graded)
    helpers: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (module name, parts below root): importable beside it


def who(spec: Spec, note: str = "") -> dict:
    """The fields that say whose a result is: the file graded, the student, and any note on the pick."""
    return {
        "path": spec.where or (path_text(str(spec.path)) if spec.path else ""),
        "student": spec.student or Identity(path=spec.where or None).as_json(),  # a plain folder's
        "note": "; ".join(n for n in (spec.note, note) if n),
    }


def helper_note(note: str, spec: Spec) -> str:
    """The part of a kept result's `note` that came from reading its helpers (the rest comes from the spec)."""
    return note.removeprefix(spec.note).lstrip("; ") if spec.note else note


# ---------------------------------------------------------------- discovery


def discover(paths: list[str]) -> list[Spec]:
    """The submissions under `paths`, in a deterministic order, each with a unique name."""
    specs: list[Spec] = []
    for text in paths:
        plain = os.path.normpath(text)  # "class/" names the folder itself, never a link's target
        try:
            info = os.lstat(plain)
        except OSError:
            raise UsageError(f"no such file or directory: {text}") from None
        name = path_text(os.path.basename(plain))
        if stat.S_ISLNK(info.st_mode):
            specs.append(_problem(name, _link_reason(None, plain)))
        elif stat.S_ISDIR(info.st_mode):
            found = _walk_top(plain)
            if not found:
                raise UsageError(f"no .py or .ipynb submission in {text}")
            specs += found
        elif not plain.endswith(SUFFIXES):
            raise UsageError(f"{text} is not a .py or .ipynb file")
        else:
            specs.append(file_spec(plain, info))
    return _unique_names(specs)


def file_spec(text: str, info: os.stat_result | None = None) -> Spec:
    """One file named on the command line (`grade`'s or `check`'s), refused if it is a link or not a file."""
    plain = os.path.normpath(text)
    name = path_text(os.path.basename(plain))
    try:
        info = info or os.lstat(plain)
    except OSError as exc:
        return _problem(name, f"cannot read the file: {exc.strerror}")
    if stat.S_ISLNK(info.st_mode):
        return _problem(name, _link_reason(None, plain))
    if not stat.S_ISREG(info.st_mode):
        return _problem(name, _kind_reason(info.st_mode))
    return Spec(name, Path(plain), where=name, root=os.path.dirname(plain) or ".", parts=(os.path.basename(plain),))


def _walk_top(top: str) -> list[Spec]:
    try:
        fd = os.open(top, _DIR_FLAGS)
    except OSError as exc:
        name = path_text(os.path.basename(top))
        return [_problem(name, f"cannot open the directory: {exc.strerror}")]
    try:
        return _expand(top, fd, (), top=True)
    finally:
        os.close(fd)


def _expand(root: str, fd: int, parts: tuple[str, ...], top: bool = False) -> list[Spec]:
    """A directory holding one file and nothing else is that submission; otherwise each entry is one."""
    here = "/".join(path_text(p) for p in parts) or path_text(os.path.basename(root))
    try:
        with os.scandir(fd) as listing:
            entries = sorted((e for e in listing if not e.name.startswith((".", "__"))), key=lambda e: e.name)
    except OSError as exc:
        return [_problem(here, f"cannot list the directory: {exc.strerror}")]
    files: list[str] = []
    subdirs: list[str] = []
    problems: list[Spec] = []
    for entry in entries:
        rel = (*parts, entry.name)
        where = "/".join(path_text(p) for p in rel)
        try:
            mode = entry.stat(follow_symlinks=False).st_mode
        except OSError as exc:
            problems.append(_problem(where, f"cannot read the entry: {exc.strerror}"))
            continue
        if stat.S_ISLNK(mode):
            problems.append(_problem(where, _link_reason(fd, entry.name)))
        elif stat.S_ISDIR(mode):
            subdirs.append(entry.name)
        elif stat.S_ISREG(mode):
            if entry.name.endswith(SUFFIXES):
                files.append(entry.name)
        else:
            problems.append(_problem(where, _kind_reason(mode)))
    if len(files) == 1 and not subdirs and not problems:
        rel = (*parts, files[0])
        name = path_text(files[0]) if top else here
        return [Spec(name, Path(root, *rel), where="/".join(path_text(p) for p in rel), root=root, parts=rel)]
    if not files and not subdirs and not problems:
        return [] if top else [_problem(here, "the directory holds no .py or .ipynb file")]
    specs = []
    for name in files:
        rel = (*parts, name)
        where = "/".join(path_text(p) for p in rel)
        specs.append(Spec(where, Path(root, *rel), where=where, root=root, parts=rel))
    specs += problems
    for name in subdirs:
        rel = (*parts, name)
        where = "/".join(path_text(p) for p in rel)
        if len(rel) > MAX_DEPTH:
            specs.append(_problem(where, f"folders nested more than {MAX_DEPTH} deep are not searched"))
            continue
        try:
            sub = os.open(name, _DIR_FLAGS, dir_fd=fd)
        except OSError as exc:
            specs.append(_problem(where, f"cannot open the directory: {exc.strerror}"))
            continue
        try:
            specs += _expand(root, sub, rel)
        finally:
            os.close(sub)
    return specs


def _problem(where: str, reason: str) -> Spec:
    """A row that cannot be graded, named by its path, with the reason."""
    return Spec(where, None, reason, where=where)


def _link_reason(dir_fd: int | None, name: str) -> str:
    """Why a link is not graded; its target is read as text only, never opened."""
    try:
        target = os.readlink(name, dir_fd=dir_fd)
    except OSError:
        target = "?"
    shown = for_terminal(path_text(target), one_line=True)  # the reason stays one line
    if len(shown) > 200:
        shown = shown[:200] + "..."
    return f"it is a symbolic link (to {shown}); grading never follows links, so submit the file itself"


def _kind_reason(mode: int) -> str:
    kinds = [
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ]
    kind = next((text for test, text in kinds if test(mode)), "not a regular file")
    return f"it is {kind}, not a regular file"


def _unique_names(specs: list[Spec]) -> list[Spec]:
    """Names are paths relative to each folder; two folders on the command line may still share one."""
    seen: dict[str, int] = {}
    unique = []
    for spec in specs:
        seen[spec.name] = seen.get(spec.name, 0) + 1
        name = spec.name if seen[spec.name] == 1 else f"{spec.name} ({seen[spec.name]})"
        unique.append(dataclasses.replace(spec, name=name))
    return unique


# ---------------------------------------------------------------- reading one submission


SOURCE_LIMIT = 200_000  # characters of code kept in results.json per submission


@dataclass
class Prepared:
    source: str = ""
    filename: str = ""
    problem: str = ""
    notebook: Any = None
    modules: dict[str, str] = field(default_factory=dict)  # helper modules beside it: name -> source
    note: str = ""  # helpers that could not be offered


class ReadError(Exception):
    """The file cannot be read as a submission; the message is the one-line reason."""


def prepare(spec: Spec) -> Prepared:
    """The code to run, or a one-line reason it cannot run. Reads bytes only, never runs them."""
    if spec.problem or spec.path is None:
        return Prepared(problem=spec.problem or "nothing to read")
    try:
        data = read_capped(spec)
        source, notebook = source_of(data, spec.path.suffix)
    except ReadError as exc:
        return Prepared(problem=str(exc))
    modules, note = _helpers(spec)
    return Prepared(source, path_text(spec.path.name), notebook=notebook, modules=modules, note=note)


def _helpers(spec: Spec) -> tuple[dict[str, str], str]:
    """The helper modules' code, read as the submission is; together at most SOURCE_LIMIT characters."""
    modules: dict[str, str] = {}
    left_out: list[str] = []
    total = 0
    for module, parts in spec.helpers:
        try:
            code = decode_python(read_capped(Spec(module, Path(spec.root or ".", *parts), root=spec.root, parts=parts)))
        except ReadError as exc:
            left_out.append(f"{module}: {exc}")
            continue
        if total + len(code) > SOURCE_LIMIT:
            left_out.append(f"{module}: the helper files together exceed {SOURCE_LIMIT} characters")
            continue
        total += len(code)
        modules[module] = code
    return modules, ("helper modules not offered: " + "; ".join(left_out)) if left_out else ""


def read_capped(spec: Spec) -> bytes:
    """The file's bytes, read through descriptors that never follow a link, at most MAX_BYTES."""
    root, parts = (spec.root, spec.parts) if spec.root is not None else (str(spec.path.parent), (spec.path.name,))
    try:
        with _opened(root, parts) as fd:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise ReadError(_kind_reason(info.st_mode))
            chunks, size = [], 0
            while size <= MAX_BYTES:  # the size stat reports is not trusted: /proc files say 0
                chunk = os.read(fd, min(1 << 20, MAX_BYTES + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
    except OSError as exc:
        raise ReadError(f"cannot read the file: {exc.strerror}") from None
    if size > MAX_BYTES:
        # stat's size is only quoted, never trusted: a file that grows, or /proc's, reports less.
        quoted = f"{info.st_size / 1e6:.1f} MB" if info.st_size > MAX_BYTES else f"more than {MAX_BYTES // 1_000_000} MB"
        raise ReadError(f"the file is {quoted}; a submission may be at most {MAX_BYTES // 1_000_000} MB")
    return b"".join(chunks)


@contextmanager
def _opened(root: str, parts: tuple[str, ...]) -> Iterator[int]:
    try:
        fds = [os.open(root, _DIR_FLAGS)]
    except OSError:
        if os.path.islink(root):  # a file named on the command line, in a folder that is a link
            raise ReadError(f"its folder {_link_reason(None, root).removeprefix('it ')}") from None
        raise
    try:
        for index, part in enumerate(parts):
            try:
                fds.append(os.open(part, _DIR_FLAGS if index < len(parts) - 1 else _FILE_FLAGS, dir_fd=fds[-1]))
            except OSError:
                # O_NOFOLLOW refused a link (ELOOP, or ENOTDIR for a directory): say so.
                if stat.S_ISLNK(os.stat(part, dir_fd=fds[-1], follow_symlinks=False).st_mode):
                    raise ReadError(_link_reason(fds[-1], part)) from None
                raise
        yield fds[-1]
    finally:
        for fd in fds:
            os.close(fd)


def source_of(data: bytes, suffix: str) -> tuple[str, Any]:
    """The Python code in a file's bytes (a notebook's code cells), and the notebook if it is one."""
    if not data.strip():
        raise ReadError("the file is empty")
    if suffix == ".ipynb":
        try:
            text = data.decode("utf-8-sig")  # JSON is UTF-8; a BOM is tolerated, as Jupyter does
        except UnicodeDecodeError as exc:
            raise ReadError(f"the notebook is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
        try:
            script = extract(text)
        except NotebookError as exc:
            raise ReadError(str(exc)) from None
        return script.source, script
    return decode_python(data), None


def decode_python(data: bytes) -> str:
    """Source bytes decoded as CPython decodes a .py file: a UTF-8 BOM, a PEP 263 coding line, any newlines."""
    try:
        return importlib.util.decode_source(data)
    except SyntaxError as exc:  # "unknown encoding: x", "encoding problem: utf-8 with BOM"
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as undecodable:  # a first line that is not UTF-8 and names no encoding
            raise ReadError(_not_text(undecodable)) from None
        raise ReadError(f"the file's coding line cannot be used ({exc.msg})") from None
    except UnicodeDecodeError as exc:
        raise ReadError(_not_text(exc)) from None
    except (LookupError, ValueError) as exc:  # a codec that is not a text encoding (rot13), or fails oddly
        raise ReadError(f"the file's coding line cannot be used ({exc})") from None


def _not_text(exc: UnicodeDecodeError) -> str:
    label = "UTF-8" if exc.encoding.replace("_", "-").startswith("utf-8") else exc.encoding
    return (
        f"the file is not {label} text ({exc.reason} at byte {exc.start}); save it as UTF-8, "
        "or declare its encoding on its first line (# -*- coding: latin-1 -*-)"
    )


def read_source(path: Path) -> str:
    """The code of a submission file, read as `grade` reads it (no links, capped, decoded as CPython does)."""
    prepared = prepare(file_spec(str(path)))
    if prepared.problem:
        raise LoadError(prepared.problem)
    return prepared.source
