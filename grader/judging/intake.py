"""From what `grade` is given (a folder, a zip, files) to the submissions to grade, each with its student.

A download is listed once, safely (descriptors that never follow a link, as discovery reads
files), its LMS recognised by `registry.detect` (or named by `--from`) and its students read by
that LMS's adapter (grader/lms/), and each student's files narrowed to the one graded (`pick`,
reading code with `ast`, never running it), with the Python files beside it offered as helper
modules. A plain folder is discovered exactly as before.
"""

from __future__ import annotations

import ast
import dataclasses
import os
import signal
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from grader.core.safe_text import path_text
from grader.judging.archive import ArchiveError, is_zip, unpacked
from grader.judging.discovery import (
    _DIR_FLAGS,
    MAX_DEPTH,
    ReadError,
    Spec,
    UsageError,
    _kind_reason,
    _link_reason,
    _unique_names,
    discover,
    read_capped,
    source_of,
)
from grader.judging.pick import MAX_HELPERS, is_test_like, module_problem, pick
from grader.lms import registry
from grader.lms.adapter import SUFFIXES, Detection, Download, Entry, Identity, Layout, Student
from grader.lms.claims import display_names
from grader.reports.files import REPLACED

MAX_ENTRIES = 200_000
MAX_WRAPPERS = 3  # folders holding only one folder, gone through to find the layout

Downloads = dict[str, tuple[str, list[tuple[str, str]]]]  # a zip given -> (the folder it was unpacked into, what was skipped)


def _hidden(name: str) -> bool:
    return name.startswith((".", "__"))


class Listing:
    """Every entry below a folder, by the path of its parent; links and devices listed, never followed."""

    def __init__(self, root: str):
        self.root = root
        self.children: dict[tuple[str, ...], list[Entry]] = {}
        self.count = 0
        fd = os.open(root, _DIR_FLAGS)
        try:
            self._walk(fd, ())
        finally:
            os.close(fd)

    def _walk(self, fd: int, parts: tuple[str, ...]) -> None:
        try:
            with os.scandir(fd) as listing:
                items = sorted(listing, key=lambda e: e.name)
        except OSError:
            items = []
        entries = []
        for item in items:
            self.count += 1
            if self.count > MAX_ENTRIES:
                raise UsageError(f"the download holds more than {MAX_ENTRIES} files and folders")
            rel = (*parts, item.name)
            try:
                mode = item.stat(follow_symlinks=False).st_mode
            except OSError as exc:
                entries.append(Entry(rel, "other", f"cannot read the entry: {exc.strerror}"))
                continue
            if stat.S_ISLNK(mode):
                entries.append(Entry(rel, "other", _link_reason(fd, item.name)))
            elif stat.S_ISDIR(mode):
                entries.append(Entry(rel, "dir"))
                if _hidden(item.name) or len(rel) > MAX_DEPTH:
                    continue  # .git, __pycache__, __MACOSX: never part of a submission
                try:
                    sub = os.open(item.name, _DIR_FLAGS, dir_fd=fd)
                except OSError as exc:
                    entries[-1] = Entry(rel, "other", f"cannot open the directory: {exc.strerror}")
                    continue
                try:
                    self._walk(sub, rel)
                finally:
                    os.close(sub)
            elif stat.S_ISREG(mode):
                entries.append(Entry(rel, "file"))
            else:
                entries.append(Entry(rel, "other", _kind_reason(mode)))
        self.children[parts] = entries

    def top(self, base: tuple[str, ...] = ()) -> list[Entry]:
        return [e for e in self.children.get(base, []) if not _hidden(e.parts[-1])]

    def below(self, parts: tuple[str, ...]) -> list[Entry]:
        """Everything under `parts`, hidden entries left out."""
        found = []
        for entry in self.children.get(parts, []):
            if _hidden(entry.parts[-1]):
                continue
            found.append(entry)
            if entry.kind == "dir":
                found += self.below(entry.parts)
        return found

    def spec(self, parts: tuple[str, ...], name: str) -> Spec:
        return Spec(name, Path(self.root, *parts), where="/".join(path_text(p) for p in parts), root=self.root, parts=parts)


# ---------------------------------------------------------------- the entry point


def discover_all(
    paths: list[str],
    layout: str | None,
    tell: Callable[[str], None],
    exercise_function: str,
    file_glob: str | None,
    unpacked_roots: dict[str, tuple[str, list]] | None = None,
) -> list[Spec]:
    """The submissions to grade. `unpacked_roots` maps a zip given on the command line to its unpacked folder."""
    unpacked_roots = unpacked_roots or {}
    if len(paths) == 1 and (paths[0] in unpacked_roots or os.path.isdir(paths[0]) and not os.path.islink(paths[0])):
        text = paths[0]
        root, skipped = unpacked_roots.get(text, (os.path.normpath(text), []))
        specs = download(root, layout, tell, exercise_function, file_glob, plain=None if text in unpacked_roots else text)
        specs += [
            Spec(
                name,
                None,
                f"not unpacked from the zip: {why}",
                where=name,
                student=Identity(path=name).as_json(),
            )
            for name, why in skipped
        ]
        return _unique_names(specs)
    if unpacked_roots:
        raise UsageError("give a zip alone on the command line (one download at a time)")
    if layout not in (None, registry.fallback().name):
        raise UsageError(f"--from {layout} needs the download: one folder or one zip")
    return [_plain_identity(s) for s in discover(paths)]


def _plain_identity(spec: Spec) -> Spec:
    return dataclasses.replace(spec, student=Identity(path=spec.where or spec.name).as_json())


def download(
    root: str, layout: str | None, tell: Callable[[str], None], function: str, glob: str | None, plain: str | None
) -> list[Spec]:
    """The submissions of one download folder (`plain`: the folder as named on the command line, if it was one)."""
    listing = Listing(root)
    base: tuple[str, ...] = ()
    found = _detect(listing, base)
    nothing = registry.fallback().name
    # A zip of one folder (or a folder of one folder): the layout may be one level down.
    for _ in range(MAX_WRAPPERS):
        top = listing.top(base)
        if layout is not None or found.sure and found.layout != nothing or len(top) != 1 or top[0].kind != "dir":
            break
        deeper = _detect(listing, top[0].parts)
        if deeper.layout == nothing or not deeper.sure and found.layout != nothing:
            break
        base, found = top[0].parts, deeper
    if layout is None and not found.sure:
        tell(f"meteor-kit grade: read as a {found.layout} download ({found.why}); --from chooses another layout")
    adapter = registry.get(layout or found.layout)
    read = adapter.students(
        Download(listing.top(base), listing.below, lambda name, limit: _read_top(listing, base, name, limit), tell)
    )
    if read is None:  # no LMS's layout: a plain folder
        start = os.path.join(root, *base) if base else (plain or root)
        specs = discover([start]) if plain is not None or base else _discover_unpacked(root, listing)
        return [_plain_identity(s) for s in specs]
    return _students(listing, base, adapter.name, read, function, glob)


def _discover_unpacked(root: str, listing: Listing) -> list[Spec]:
    try:
        return discover([root])
    except UsageError:
        inner = [e.parts[-1] for e in listing.top() if e.kind == "file" and e.parts[-1].lower().endswith(".zip")]
        if inner:  # a zip of a zip: not opened, but said
            raise UsageError(
                f"the zip holds no .py or .ipynb file, only another zip ({path_text(inner[0])}); unzip that one and grade it"
            ) from None
        raise UsageError("no .py or .ipynb submission in the zip") from None


def _detect(listing: Listing, base: tuple[str, ...]) -> Detection:
    top = listing.top(base)
    children = {e.parts[-1]: listing.children.get(e.parts, []) for e in top if e.kind == "dir"}
    return registry.detect(top, children)


def _students(listing: Listing, base: tuple[str, ...], layout: str, read: Layout, function: str, glob: str | None) -> list[Spec]:
    students = list(read.students)
    for entry in read.others:  # what does not follow the layout's names: graded as itself, and said so
        if entry.kind == "dir" or entry.parts[-1].endswith(SUFFIXES) or entry.kind == "other":
            student = Student(
                Identity(layout=layout, path="/".join(entry.parts[len(base) :])),
                base=entry.parts if entry.kind == "dir" else entry.parts[:-1],
                note=f"its name does not follow the {layout} layout",
            )
            if entry.kind == "dir":
                student.take(listing.below(entry.parts))
            elif entry.kind == "file":
                student.files.append(entry.parts)
            else:
                student.problems.append(entry)
            students.append(student)
    names = display_names(students)
    order = sorted(range(len(students)), key=lambda i: (names[i].casefold(), names[i]))
    specs = [_spec_of(listing, students[i], names[i], function, glob) for i in order]
    return specs


def _spec_of(listing: Listing, student: Student, name: str, function: str, glob: str | None) -> Spec:
    """One student's submission: the file picked, the helpers beside it, or the reason there is none."""
    shown = lambda parts: "/".join(path_text(p) for p in parts)  # noqa: E731
    identity = student.identity
    if student.base:  # a folder per student: its path from the top of the download
        identity = dataclasses.replace(identity, path=shown(student.base))
    if student.contested:  # whose it is cannot be told: a row that says so, graded for nobody
        first = student.files[0] if student.files else student.problems[0].parts if student.problems else None
        if not student.base and first:
            identity = dataclasses.replace(identity, path=shown(first))
        note = "; ".join(n for n in (student.note, student.contested) if n)  # grades.csv and the report's chip too
        return Spec(name, None, student.contested, where=identity.path or name, student=identity.as_json(), note=note)
    # Files by their path in the student's folder; a flat layout's by the name the student gave them.
    local = {
        (student.module_of[p],) if p in student.module_of else p[len(student.base) :]: p
        for p in student.files
        if not any(_hidden(x) for x in p[len(student.base) :])
    }
    chosen = pick(list(local), lambda rel: defines(listing, local[rel], function), function, glob, shown)
    notes = [chosen.note] if chosen.note else []
    if chosen.chosen is None:
        why = _nothing_to_grade(student, local)
        where = identity.path or name
        if not student.base:  # flat files: the first of the student's files
            first = student.files[0] if student.files else student.problems[0].parts if student.problems else None
            identity = dataclasses.replace(identity, path=shown(first) if first else None)
            where = identity.path or name
        return Spec(name, None, why, where=where, student=identity.as_json(), note=student.note)
    parts = local[chosen.chosen]
    if not student.base:
        identity = dataclasses.replace(identity, path=shown(parts))
    helpers, refused = helper_modules(student, parts)
    notes += refused
    if student.note:
        notes.insert(0, student.note)
    spec = listing.spec(parts, name)
    return dataclasses.replace(spec, student=identity.as_json(), note="; ".join(notes), helpers=tuple(helpers))


def _nothing_to_grade(student: Student, local: dict) -> str:
    archives = [p[-1] for p in student.files if p[-1].lower().endswith((".zip", ".tar", ".gz", ".tgz", ".7z", ".rar"))]
    if archives:
        return (
            f"it holds an archive ({path_text(archives[0])}), not a .py or .ipynb file; archives inside the "
            "download are not opened: ask for the .py file itself"
        )
    if student.problems:
        first = student.problems[0]
        return f"{path_text(first.parts[-1])}: {first.reason}"
    if student.files:
        listed = ", ".join(path_text(p[-1]) for p in student.files[:5])
        return f"no .py or .ipynb file in the submission (it holds {listed})"
    return "the submission holds no file"


def helper_modules(student: Student, graded: tuple[str, ...]) -> tuple[list[tuple[str, tuple[str, ...]]], list[str]]:
    """The student's other .py files beside the graded one, as (module name, path); and what was refused."""
    helpers: list[tuple[str, tuple[str, ...]]] = []
    refused: list[str] = []
    taken: set[str] = set()
    graded_module = _module_name(student, graded)
    for parts in sorted(student.files, key=lambda p: p[-1]):
        if parts == graded or parts[:-1] != graded[:-1] or not parts[-1].endswith(".py") or _hidden(parts[-1]):
            continue
        module = _module_name(student, parts)
        problem = module_problem(module)
        if problem or module in taken or module == graded_module:
            if problem and not is_test_like((parts[-1],)):
                refused.append(f"{path_text(parts[-1])} cannot be imported ({problem})")
            continue
        if len(helpers) >= MAX_HELPERS:
            refused.append(f"more than {MAX_HELPERS} helper files: the rest cannot be imported")
            break
        taken.add(module)
        helpers.append((module, parts))
    return helpers, refused


def _module_name(student: Student, parts: tuple[str, ...]) -> str:
    original = student.module_of.get(parts, parts[-1])
    return original[:-3] if original.endswith(".py") else original


def defines(listing: Listing, parts: tuple[str, ...], function: str) -> bool:
    """Whether a file's code defines `function` at its top level; read and parsed, never run."""
    try:
        data = read_capped(listing.spec(parts, ""))
        source, _ = source_of(data, ".ipynb" if parts[-1].endswith(".ipynb") else ".py")
        tree = ast.parse(source)
    except (ReadError, SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return _defined_in(tree.body, function)


def _defined_in(body: list[ast.stmt], function: str) -> bool:
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == function:
            return True
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == function for t in targets):
                return True
        if isinstance(node, ast.ImportFrom) and any((a.asname or a.name) == function for a in node.names):
            return True
        # Definitions under `if`, `try` or `with` at the top level still run when the file loads.
        for block in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(node, block, None)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or not isinstance(inner, list):
                continue
            stmts = [s for h in inner for s in h.body] if block == "handlers" else inner
            if _defined_in(stmts, function):
                return True
    return False


def _read_top(listing: Listing, base: tuple[str, ...], name: str, limit: int) -> bytes | None:
    """A regular file at the top of the download, at most `limit` + 1 bytes; None if there is none by that name."""
    parts = (*base, name)
    if not any(e.parts == parts and e.kind == "file" for e in listing.children.get(base, [])):
        return None
    with os.fdopen(_open_below(listing.root, parts), "rb") as f:
        return f.read(limit + 1)


def _open_below(root: str, parts: tuple[str, ...]) -> int:
    fds = [os.open(root, _DIR_FLAGS)]
    try:
        for part in parts[:-1]:
            fds.append(os.open(part, _DIR_FLAGS, dir_fd=fds[-1]))
        fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fds[-1])
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise OSError(0, "not a regular file")
        return fd
    finally:
        for fd in fds:
            os.close(fd)


# ---------------------------------------------------------------- what the command is given, and where it writes


@contextmanager
def downloaded(paths: list[str]) -> Iterator[Downloads]:
    """The LMS download among `paths`, unpacked for as long as the class is graded (UsageError for a zip that is not one).

    A zip comes alone (one download at a time). A scheduler's SIGTERM (a time limit) ends the run
    as Ctrl+C does, so the unpacked zip is removed then too.
    """
    fake = next((text for text in paths if text.lower().endswith(".zip") and os.path.isfile(text) and not is_zip(text)), None)
    if fake is not None:
        raise UsageError(f"{fake} is not a zip archive (it does not start as one); download it again")
    zips = [text for text in paths if is_zip(text)]
    if len(zips) > 1 or zips and len(paths) > 1:
        raise UsageError("give a zip alone on the command line (one download at a time)")
    if not zips:
        yield {}
        return
    previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        with unpacked(zips[0]) as download:
            yield {zips[0]: (download.root, download.skipped)}
    except ArchiveError as exc:
        raise UsageError(f"{zips[0]}: {exc}") from None
    finally:
        signal.signal(signal.SIGTERM, previous)


def _terminated(*_: object) -> None:
    raise KeyboardInterrupt


def check_out(out: Path, paths: list[str]) -> None:
    """Refuse an --out that a later run would grade, or whose replaced folders hold submissions (UsageError)."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} exists and is not a directory")
    target = out.resolve()
    for text in paths:
        path = Path(text).resolve()
        if Path(text).is_dir() and (path == target or path in target.parents):
            raise UsageError(
                f"--out {out} is inside the class folder {text}: a later run would grade "
                "its own output as students; choose an --out outside it"
            )
        for replaced in REPLACED:  # each run replaces these folders whole
            if path == target / replaced or target / replaced in path.parents:
                raise UsageError(f"{text} is inside {out / replaced}, which every run replaces; move it out of --out")
