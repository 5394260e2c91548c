"""LMS downloads: which layout a folder has, and who each submission belongs to.

Pure functions over names and metadata (nothing here opens a file): `intake` lists the
download safely and calls these. Layouts, as each LMS documents its download:

- canvas: flat files `<login>[_LATE]_<user id>_<submission id>_<original name>`; a file
  uploaded again gets `-N` added to its original name (`solution-1.py`), the highest N the latest.
- moodle: a folder per student `<Full Name>_<participant id>_assignsubmission_file_/` (and
  `_assignsubmission_onlinetext_/` folders holding onlinetext.html, which are not code); older
  Moodles put the same prefix on flat file names.
- gradescope: `submission_metadata.yml` and a folder `submission_<id>/` per submission.
- github-classroom: a repository folder per student, `<assignment>-<username>/`.
- folder: anything else, graded as a plain folder.

Names are read with patterns anchored to what the LMS itself writes, and a name that can be
read as more than one student's is read as nobody's (see `resolve`): a student chooses their
name and their files' names, so either may hold another student's id. Two submissions that
claim one student are both refused (`Student.contested`), never one picked.
"""

from __future__ import annotations

import fnmatch
import keyword
import os
import re
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from grader.core.safe_text import path_text

LAYOUTS = ("canvas", "moodle", "gradescope", "github-classroom", "folder")
METADATA = "submission_metadata.yml"
SUFFIXES = (".py", ".ipynb")
MAX_HELPERS = 20
MAX_SUBMITTERS = 50  # a Gradescope group larger than this is cut (its metadata is student-shaped data too)
FIELD_LIMIT = 300  # characters kept of any identity field

# Whether a name looks like Canvas's (for detection); `canvas_readings` reads it.
CANVAS = re.compile(r"^(?P<login>.+?)(?:_LATE|_late)?_(?P<user>\d+)_(?P<sub>\d+)_(?P<original>.+)$", re.S)
# What Canvas writes after the login (and `_LATE`): `_<user id>_<submission id>_<original name>`.
CANVAS_TAIL = re.compile(r"_(?P<user>\d+)_(?P<sub>\d+)_(?P<original>.+)", re.S)
LATE_FLAGS = ("_LATE", "_late")  # Canvas has written both
# Canvas's "-N" on a resubmitted file: before the suffix (`solution-2.py`), or at the very end.
RESUBMITTED = re.compile(r"^(?P<base>.+?)-(?P<n>\d{1,4})(?P<suffix>\.[^.]*)?$", re.S)
# A folder's name is all Moodle's: the id is the one next to the `_assignsubmission_` at its end.
MOODLE_DIR = re.compile(r"^(?P<name>.+)_(?P<id>\d+)_assignsubmission_(?P<plugin>[a-z]+)_?$", re.S)
# A flat file's name is Moodle's prefix and the student's own file name (`moodle_readings`).
MOODLE_FILE = re.compile(r"^(?P<name>.+?)_(?P<id>\d+)_assignsubmission_(?P<plugin>[a-z]+)_(?P<original>.+)$", re.S)
MOODLE_TAIL = re.compile(r"_(?P<id>\d+)_assignsubmission_(?P<plugin>[a-z]+)_(?P<original>.+)", re.S)
GRADESCOPE_DIR = re.compile(r"^submission_(?P<id>\d+)$")
GITHUB_USER = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$")
REPO_MARKERS = (".git", ".github", "README.md", "README", "README.rst", "README.txt", ".gitignore")
MODULE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
# Modules a helper may never replace: the standard library (sys.stdlib_module_names) and these.
RESERVED = frozenset(
    {
        "grader",
        "pytest",
        "_pytest",
        "hypothesis",
        "submission",
        "jail_child",
        "copydetect",
        "sitecustomize",
        "usercustomize",
        "conftest",
        "__main__",
        "builtins",
    }
)
TEST_NAMES = ("test_*.py", "*_test.py", "tests.py", "test.py", "conftest.py", "setup.py", "test_*.ipynb")
TEST_FOLDERS = {"tests", "test", ".github", "testing"}


@dataclass(frozen=True)
class Identity:
    """Who a submission belongs to, as far as the layout says (None where it does not)."""

    name: str | None = None
    lms_id: str | None = None
    login: str | None = None
    email: str | None = None
    late: bool | None = None
    submitted_at: str | None = None
    layout: str = "folder"
    path: str | None = None  # the submission's path inside the download (its folder, or its file)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    def display(self) -> str | None:
        """The name every view shows: the person's name, else their login."""
        return self.name or self.login


@dataclass
class Entry:
    """One entry of the download, by its path components below the download's folder."""

    parts: tuple[str, ...]
    kind: str  # "file", "dir", or "other" (a link, FIFO, device: never read)
    reason: str = ""  # for "other": why it is not read


@dataclass
class Student:
    """One submission of the download: whose it is, and its entries (files below its folder, or its files)."""

    identity: Identity
    files: list[tuple[str, ...]] = field(default_factory=list)
    module_of: dict[tuple[str, ...], str] = field(default_factory=dict)  # a file's name as the student gave it
    problems: list[Entry] = field(default_factory=list)
    note: str = ""
    base: tuple[str, ...] = ()  # the student's folder (empty for flat layouts)
    contested: str = ""  # why it is not graded: its name is ambiguous, or another submission claims the same student


@dataclass(frozen=True)
class Reading:
    """One way to read an entry's name: whose it is (the name or login as written, and the LMS id), and the rest."""

    who: str
    lms_id: str
    parts: dict[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class Detection:
    layout: str
    sure: bool
    why: str


# ---------------------------------------------------------------- detection


def detect(top: list[Entry], children: dict[str, list[Entry]]) -> Detection:
    """The layout of a download from its top-level entries (and, for folders, what each holds)."""
    files = [e.parts[-1] for e in top if e.kind == "file"]
    dirs = [e.parts[-1] for e in top if e.kind == "dir"]
    if METADATA in files:
        return Detection("gradescope", True, f"it holds {METADATA}")
    if dirs and sum(bool(GRADESCOPE_DIR.match(d)) for d in dirs) == len(dirs):
        return Detection("gradescope", False, f"every folder is submission_<id> but there is no {METADATA}")
    moodle = sum(bool(MOODLE_DIR.match(d)) for d in dirs) + sum(bool(MOODLE_FILE.match(f)) for f in files)
    if moodle:
        sure = moodle == len(dirs) + len([f for f in files if f.endswith(SUFFIXES)])
        return Detection("moodle", sure, "its entries are named <Full Name>_<id>_assignsubmission_...")
    code = [f for f in files if f.endswith(SUFFIXES)]
    canvas = sum(bool(CANVAS.match(f)) for f in code)
    if code and canvas == len(code) and not dirs:
        return Detection("canvas", True, "every file is named <login>_<user id>_<submission id>_<name>")
    if code and canvas * 2 > len(code):
        return Detection("canvas", False, f"{canvas} of {len(code)} files are named as Canvas names them")
    if dirs and not code:
        prefix = assignment_prefix(dirs)
        if prefix is not None:
            marked = sum(any(c.parts[-1] in REPO_MARKERS for c in children.get(d, [])) for d in dirs)
            if len(dirs) == 1 and not marked:
                return Detection("folder", True, "no LMS layout recognised")  # one folder named a-b is no evidence
            return Detection(
                "github-classroom",
                marked * 2 >= len(dirs),
                f"every folder is named {prefix}<username>" + ("" if marked else ", though none looks like a repository"),
            )
    return Detection("folder", True, "no LMS layout recognised")


def assignment_prefix(dirs: list[str]) -> str | None:
    """GitHub Classroom's `<assignment>-`, shared by every folder, the rest of each a username."""
    if len(dirs) < 2:
        single = dirs[0] if dirs else ""
        # One repository alone: the assignment is all before the last hyphen (a username can hold hyphens too).
        head, _, user = single.rpartition("-")
        return head + "-" if head and GITHUB_USER.match(user) else None
    common = os.path.commonprefix(dirs)
    cut = common.rfind("-")
    if cut <= 0:
        return None
    prefix = common[: cut + 1]
    return prefix if all(GITHUB_USER.match(d[len(prefix) :]) for d in dirs) else None


# ---------------------------------------------------------------- identity, layout by layout


def clip(value: Any) -> str | None:
    """An identity field as text, one line, bounded; None for nothing."""
    if value is None or isinstance(value, (dict, list)):
        return None
    text = " ".join(str(value).split())[:FIELD_LIMIT]
    return text or None


def canvas_readings(filename: str) -> list[Reading]:
    """Every way to read a Canvas file name `<login>[_LATE]_<user id>_<submission id>_<original name>`.

    A login and an original name can both hold `_<digits>_`, so a name can have several
    readings; `resolve` chooses among them, or none.
    """
    readings = []
    for at in (i for i, c in enumerate(filename) if c == "_"):
        tail = CANVAS_TAIL.fullmatch(filename, at)
        if tail is None:
            continue
        login, late = filename[:at], filename[:at].endswith(LATE_FLAGS)
        login = login[: -len("_LATE")] if late else login
        if not login:
            continue
        original = tail["original"]
        base, version = resubmission(original)
        readings.append(
            Reading(
                login,
                tail["user"],
                {"late": late, "submission": tail["sub"], "original": original, "base": base, "version": version},
            )
        )
    return readings


def canvas_name(filename: str) -> dict | None:
    """The parts of a Canvas file name that can be read only one way, or None."""
    readings = canvas_readings(filename)
    if len(readings) != 1:
        return None
    (reading,) = readings
    return {"login": reading.who, "user": reading.lms_id, **reading.parts}


def resubmission(original: str) -> tuple[str, int]:
    """`solution-2.py` -> (`solution.py`, 2); a name without Canvas's `-N` is version 0."""
    match = RESUBMITTED.match(original)
    if not match:
        return original, 0
    return match["base"] + (match["suffix"] or ""), int(match["n"])


def canvas_students(entries: list[Entry]) -> tuple[list[Student], list[Entry]]:
    """Flat files grouped by student (login and user id); for each name, only its latest upload."""
    options = [canvas_readings(e.parts[-1]) if len(e.parts) == 1 else [] for e in entries]
    students: dict[tuple[str, str], Student] = {}
    latest: dict[tuple[str, str], dict[str, tuple[int, tuple[str, ...]]]] = {}
    others: list[Entry] = []
    unread: list[Student] = []
    for entry, readings, reading in zip(entries, options, resolve(options)):
        if not readings:
            others.append(entry)
            continue
        if reading is None:
            unread.append(_unreadable(entry, readings, "canvas", "user id"))
            continue
        key = (reading.who, reading.lms_id)
        student = students.get(key)
        if student is None:
            student = students[key] = Student(
                Identity(login=clip(reading.who), lms_id=reading.lms_id, late=False, layout="canvas")
            )
        if entry.kind != "file":
            student.problems.append(entry)
            continue
        if reading.parts["late"]:
            student.identity = _with(student.identity, late=True)
        versions = latest.setdefault(key, {})
        base, version = reading.parts["base"], reading.parts["version"]
        if base not in versions or version > versions[base][0]:
            versions[base] = (version, entry.parts)
    for key, student in students.items():
        for base, (_, parts) in sorted(latest.get(key, {}).items()):
            student.files.append(parts)
            student.module_of[parts] = base
    found = list(students.values())
    _contest(found, lambda s: [s.identity.lms_id or ""], "Canvas user id")
    return found + unread, others


def moodle_readings(entry: Entry) -> list[Reading]:
    """Every way to read a Moodle name: a folder's one (anchored at its end), a flat file's each `_<id>_assignsubmission_`.

    Moodle writes a full name with its underscores made spaces, but a download is not
    trusted to: either the name or the student's own file name may hold `_<id>_assignsubmission_`.
    """
    leaf = entry.parts[-1]
    if entry.kind == "dir":
        folder = MOODLE_DIR.match(leaf)
        return [Reading(folder["name"], folder["id"], {"plugin": folder["plugin"], "folder": True})] if folder else []
    readings = []
    for at in (i for i, c in enumerate(leaf) if c == "_"):
        tail = MOODLE_TAIL.fullmatch(leaf, at)
        if tail is not None and at > 0:
            readings.append(Reading(leaf[:at], tail["id"], {"plugin": tail["plugin"], "original": tail["original"]}))
    return readings


def moodle_students(
    top: list[Entry], below: Callable[[tuple[str, ...]], list[Entry]]
) -> tuple[list[Student], list[Entry], list[str]]:
    """A student per `_assignsubmission_file_` folder (and per prefix of flat files); online-text folders noted."""
    students: dict[tuple[str, ...], Student] = {}
    others: list[Entry] = []
    ignored: list[str] = []
    unread: list[Student] = []
    options = [moodle_readings(e) for e in top]
    for entry, readings, reading in zip(top, options, resolve(options)):
        if not readings:
            others.append(entry)
            continue
        if reading is None:
            unread.append(_unreadable(entry, readings, "moodle", "participant"))
            continue
        if reading.parts["plugin"] != "file":
            ignored.append(entry.parts[-1])
            continue
        if reading.parts.get("folder"):  # a folder is a claim of its own: two folders for one id are contested
            found = students[entry.parts] = Student(
                Identity(name=clip(reading.who), lms_id=reading.lms_id, layout="moodle", path="/".join(entry.parts)),
                base=entry.parts,
            )
            _take(found, below(entry.parts))
            continue
        found = students.setdefault(
            ("", reading.who, reading.lms_id),
            Student(Identity(name=clip(reading.who), lms_id=reading.lms_id, layout="moodle")),
        )
        if entry.kind == "file":
            found.files.append(entry.parts)
            found.module_of[entry.parts] = reading.parts["original"]
        else:
            found.problems.append(entry)
    claims = list(students.values())
    _contest(claims, lambda s: [s.identity.lms_id or ""], "participant")
    return claims + unread, others, ignored


def gradescope_students(
    top: list[Entry], below: Callable[[tuple[str, ...]], list[Entry]], metadata: dict | None
) -> tuple[list[Student], list[Entry]]:
    """A student per `submission_<id>/` folder, named from submission_metadata.yml's `:submitters:`."""
    students: list[Student] = []
    others: list[Entry] = []
    for entry in top:
        leaf = entry.parts[-1]
        if entry.kind != "dir" or not GRADESCOPE_DIR.match(leaf):
            if leaf != METADATA:
                others.append(entry)
            continue
        record = _symbols(metadata.get(leaf)) if isinstance(metadata, dict) else {}
        submitters = (
            [_symbols(s) for s in (record.get("submitters") or [])[:MAX_SUBMITTERS] if isinstance(s, dict)]
            if isinstance(record.get("submitters"), list)
            else []
        )

        def joined(key: str) -> str | None:
            values = [clip(s.get(key)) for s in submitters]
            return clip(", ".join(v for v in values if v)) if any(values) else None

        late = record.get("late")
        identity = Identity(
            name=joined("name"),
            lms_id=joined("sid"),
            email=joined("email"),
            login=None,
            late=late if isinstance(late, bool) else None,
            submitted_at=_timestamp(record.get("created_at")),
            layout="gradescope",
            path=leaf,
        )
        found = Student(identity, base=entry.parts)
        if not submitters:
            found.note = f"no submitters for {leaf}: {METADATA} is missing, unreadable or does not list it"
        _take(found, below(entry.parts))
        students.append(found)
    # A student in two submissions' :submitters: (by SID, or e-mail): neither submission is theirs for sure.
    _contest(students, _submitter_keys, "student")
    return students, others


def _submitter_keys(student: Student) -> list[str]:
    identity = student.identity
    sids = [f"SID {x}" for x in (identity.lms_id or "").split(", ") if x]
    emails = [f"e-mail {x.casefold()}" for x in (identity.email or "").split(", ") if x]
    return sids + emails


def parse_metadata(data: bytes) -> dict:
    """submission_metadata.yml as plain data: YAML's safe subset, Ruby's tags read as plain mappings.

    Raises ValueError when it is not YAML or not a mapping. Keys like `:submitters:` are Ruby
    symbols, which YAML reads as strings starting with a colon (see `_symbols`).
    """
    import yaml

    class Loader(yaml.CSafeLoader if hasattr(yaml, "CSafeLoader") else yaml.SafeLoader):  # type: ignore[misc]
        pass

    def plain(loader: Any, suffix: str, node: Any) -> Any:
        # `!ruby/hash:...` and such name Ruby classes: only their data is read, as YAML's own kinds.
        if isinstance(node, yaml.MappingNode):
            return loader.construct_mapping(node, deep=True)
        if isinstance(node, yaml.SequenceNode):
            return loader.construct_sequence(node, deep=True)
        return loader.construct_scalar(node)

    Loader.add_multi_constructor("!", plain)
    Loader.add_multi_constructor("tag:", plain)
    try:
        document = yaml.load(data, Loader=Loader)
    except yaml.YAMLError as exc:
        raise ValueError(" ".join(str(exc).split())[:200]) from None
    except (RecursionError, MemoryError):
        raise ValueError("it is nested too deeply") from None
    if not isinstance(document, dict):
        raise ValueError("it is not a mapping of submission_<id> keys")
    return document


def _symbols(record: Any) -> dict:
    """A mapping whose keys may be Ruby symbols (`:name`), as keys without the colon."""
    if not isinstance(record, dict):
        return {}
    return {str(k).lstrip(":"): v for k, v in record.items()}


def _timestamp(value: Any) -> str | None:
    if value is None:
        return None
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return clip(value)


def github_students(top: list[Entry], below: Callable[[tuple[str, ...]], list[Entry]]) -> tuple[list[Student], list[Entry]]:
    """A student per repository folder `<assignment>-<username>/`."""
    dirs = [e for e in top if e.kind == "dir"]
    prefix = assignment_prefix([e.parts[-1] for e in dirs]) or ""
    students, others = [], [e for e in top if e.kind != "dir"]
    for entry in dirs:
        leaf = entry.parts[-1]
        found = Student(Identity(login=clip(leaf[len(prefix) :] or leaf), layout="github-classroom", path=leaf), base=entry.parts)
        _take(found, below(entry.parts))
        students.append(found)
    # GitHub's usernames ignore case: `hw-Bob` and `hw-bob` are one account's.
    _contest(students, lambda s: [(s.identity.login or "").casefold()], "GitHub account")
    return students, others


# ---------------------------------------------------------------- whose is each name


def resolve(options: list[list[Reading]]) -> list[Reading | None]:
    """The reading of each entry's name, or None when it could be more than one student's.

    A name read only one way says whose it is. A name read several ways is read the one way
    left after dropping those whose id another entry's unambiguous name gives to someone else
    (Eve's `Eve_123456_assignsubmission_file_777_900_...` beside Bob's `Bob_123456_...` is
    Eve's, participant 900); if more than one is left, or none, it is nobody's. Agreeing with
    another entry never decides: a student can copy another's whole prefix into their own name.
    """
    given: dict[str, set[str]] = {}
    for readings in options:
        if len(readings) == 1:
            given.setdefault(readings[0].lms_id, set()).add(readings[0].who)
    chosen: list[Reading | None] = []
    for readings in options:
        if len(readings) == 1:
            chosen.append(readings[0])
            continue
        left = [r for r in readings if given.get(r.lms_id, {r.who}) == {r.who}]
        chosen.append(left[0] if len(left) == 1 else None)
    return chosen


def _unreadable(entry: Entry, readings: list[Reading], layout: str, what: str) -> Student:
    """An entry whose name could be several students': a row of its own, graded for nobody."""
    ids = sorted({r.lms_id for r in readings}, key=lambda x: (len(x), x))
    shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
    student = Student(
        Identity(layout=layout, path="/".join(entry.parts)),
        base=entry.parts if entry.kind == "dir" else (),
        contested=(
            f"its name can be read as more than one student's ({what} {shown}): it is graded for nobody; "
            "check in the LMS whose it is"
        ),
    )
    if entry.kind == "file":
        student.files.append(entry.parts)
    elif entry.kind == "other":
        student.problems.append(entry)
    return student


def _contest(students: list[Student], keys: Callable[[Student], list[str]], what: str) -> None:
    """Every submission that claims a student another one claims too is refused, with the others named."""
    claims: dict[str, list[Student]] = {}
    for student in students:
        for key in dict.fromkeys(keys(student)):
            if key:
                claims.setdefault(key, []).append(student)
    for key, claimants in claims.items():
        if len(claimants) < 2:
            continue
        names = sorted(
            (_shown(c.identity.display() or c.identity.path or "?") for c in claimants), key=lambda n: (n.casefold(), n)
        )
        listed = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
        for student in claimants:
            if not student.contested:
                student.contested = (
                    f"{len(claimants)} submissions claim {what} {_shown(key)} ({listed}): none of them is graded, "
                    "since the download cannot say which is theirs; check in the LMS"
                )


def _shown(text: str) -> str:
    """Student text in a message: a name that is not UTF-8 made text, and a long one cut."""
    text = path_text(text)
    return text if len(text) <= 80 else text[:79] + "…"


def _take(student: Student, entries: list[Entry]) -> None:
    """The entries below a student's folder: files to choose from, and what cannot be read."""
    for inner in entries:
        if inner.kind == "file":
            student.files.append(inner.parts)
        elif inner.kind == "other":
            student.problems.append(inner)


def _with(identity: Identity, **changes: Any) -> Identity:
    return Identity(**{**asdict(identity), **changes})


# ---------------------------------------------------------------- display names


def display_names(students: list[Student]) -> list[str]:
    """Each student's name in every view: unique and the same on every run of the same download."""
    wanted = [s.identity.display() or s.identity.path or "?" for s in students]
    counts: dict[str, int] = {}
    for name in wanted:
        counts[name] = counts.get(name, 0) + 1
    names = []
    for student, name in zip(students, wanted):
        if counts[name] > 1:  # two students of one name: their id tells them apart
            extra = student.identity.lms_id or student.identity.login or student.identity.path
            if extra and extra != name:
                name = f"{name} ({extra})"
        names.append(name)
    return names


# ---------------------------------------------------------------- which file is the submission


def is_test_like(parts: tuple[str, ...]) -> bool:
    """Tests, fixtures and packaging beside the solution: never graded when another file could be."""
    leaf = parts[-1].lower()
    return any(fnmatch.fnmatchcase(leaf, p) for p in TEST_NAMES) or any(p.lower() in TEST_FOLDERS for p in parts[:-1])


@dataclass(frozen=True)
class Pick:
    chosen: tuple[str, ...] | None
    note: str = ""


def pick(
    candidates: list[tuple[str, ...]],
    defines: Callable[[tuple[str, ...]], bool],
    function: str,
    glob: str | None = None,
    shown: Callable[[tuple[str, ...]], str] = "/".join,
) -> Pick:
    """The one file to grade among a student's `.py`/`.ipynb` files (paths relative to their folder).

    An exercise's glob names it; else the files that define `function` (tests and setup files
    only when nothing else is there). Ties are broken the same way every time (the shallowest,
    then by name) and said in the note, never silently.
    """
    code = sorted((c for c in candidates if c[-1].endswith(SUFFIXES)), key=lambda c: (len(c), c))
    if not code:
        return Pick(None)
    note = ""
    if glob:
        named = [c for c in code if fnmatch.fnmatchcase(c[-1], glob) or fnmatch.fnmatchcase("/".join(c), glob)]
        if named:
            code = named
        else:
            note = f"no file matches the exercise's file pattern {glob!r}; "
    plain = [c for c in code if not is_test_like(c)] or code
    if len(plain) == 1:
        return Pick(plain[0], note.rstrip("; ") if note else "")
    defining = [c for c in plain if defines(c)]
    if len(defining) == 1:
        return Pick(defining[0], note.rstrip("; ") if note else "")
    if defining:
        names = ", ".join(shown(c) for c in defining[:5]) + (", ..." if len(defining) > 5 else "")
        return Pick(defining[0], f"{note}{len(defining)} files define {function} ({names}): graded {shown(defining[0])}")
    return Pick(plain[0], f"{note}no file defines {function}: graded {shown(plain[0])} of {len(plain)} files")


def module_problem(name: str) -> str:
    """Why a helper file cannot be offered as module `name`, or "" if it can."""
    if not MODULE_NAME.match(name) or keyword.iskeyword(name):
        return "its name is not a valid module name"
    if name in sys.stdlib_module_names or name in RESERVED or name.startswith("_"):
        return "its name would shadow a module of Python or of the grader"
    return ""
