"""The interface every LMS's adapter implements, and the data it reads a download into.

An adapter is asked, in the registry's order, whether a download looks like its LMS's
(`detect`); the one chosen says who each entry belongs to (`students`). With `--roster`, the
first adapter that recognises the export's header reads its students (`read_roster`), and the
same adapter writes the gradebook back (`write_gradebook`) and any feedback bundle its LMS
imports (`write_feedback`). Adapters read names and metadata only: `grader.judging.intake`
lists and reads the download safely and hands them what they need (`Download`).
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from grader.core.results import SubmissionResult
from grader.reports.roster import PLAIN_LAYOUT, Match, Roster, Table
from grader.reports.roster import Student as RosterStudent

SUFFIXES = (".py", ".ipynb")  # what can be graded
FIELD_LIMIT = 300  # characters kept of any identity field


@dataclass(frozen=True)
class Identity:
    """Who a submission belongs to, as far as the layout says (None where it does not)."""

    name: str | None = None
    lms_id: str | None = None
    login: str | None = None
    email: str | None = None
    late: bool | None = None
    submitted_at: str | None = None
    layout: str = PLAIN_LAYOUT
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

    def take(self, entries: list[Entry]) -> None:
        """The entries below the student's folder: files to choose from, and what cannot be read."""
        for inner in entries:
            if inner.kind == "file":
                self.files.append(inner.parts)
            elif inner.kind == "other":
                self.problems.append(inner)


@dataclass(frozen=True)
class Detection:
    layout: str
    sure: bool
    why: str


@dataclass
class Download:
    """A download as an adapter sees it: what intake listed and can read for it, and a line to tell the user."""

    top: list[Entry]  # the entries at its top (every one's parts start with those of the top's folder)
    below: Callable[[tuple[str, ...]], list[Entry]]  # everything under a folder, hidden entries left out
    read: Callable[[str, int], bytes | None]  # a regular file at the top, at most limit + 1 bytes; None: absent
    tell: Callable[[str], None]


@dataclass
class Layout:
    """What an adapter read from a download: its submissions, and the entries that do not follow its names."""

    students: list[Student]
    others: list[Entry] = field(default_factory=list)


@dataclass(frozen=True)
class Fill:
    """How to fill a gradebook: the assignment's column (an export of several), and a missing student's grade."""

    column: int | None = None
    missing: str = "zero"  # "zero" or "blank"


class LMS(abc.ABC):
    """One LMS: its download's layout, and (if it has one) its gradebook export, in and out."""

    name: ClassVar[str]  # the layout's name: --from's value, an identity's `layout`
    title: ClassVar[str]  # the LMS as people write it
    roster_kind: ClassVar[str | None] = None  # Roster.kind of the export it reads (None: it reads none)
    roster_title: ClassVar[str] = ""  # that export, as --roster's help names it
    roster_header: ClassVar[str] = ""  # how its header looks, for the error on a roster nobody recognises
    gradebook_file: ClassVar[str] = ""  # the gradebook it writes back
    has_assignments: ClassVar[bool] = False  # its export has a column per assignment: --assignment chooses one
    feedback_bundle: ClassVar[str] = ""  # the file `write_feedback` makes for the LMS to import ("": none)

    @abc.abstractmethod
    def detect(self, top: list[Entry], children: dict[str, list[Entry]]) -> Detection | None:
        """Whether a download, by the names of its top entries (and what each folder holds), is this LMS's; None: no sign."""

    @abc.abstractmethod
    def students(self, download: Download) -> Layout | None:
        """Who each entry of the download belongs to: a Student per submission, graded for nobody when unsure.

        None: the LMS has no layout of its own, and the download is discovered as a plain folder.
        """

    def read_roster(self, table: Table) -> Roster | None:
        """This LMS's gradebook export, or None when the header is not its."""
        return None

    def assignment_column(self, roster: Roster, wanted: str | None, exercise_id: str, title: str) -> int | None:
        """The column to fill, for an export with several assignments (`has_assignments`); RosterError if unclear."""
        return None

    def write_gradebook(
        self, roster: Roster, results: list[SubmissionResult], matched: Match, fill: Fill
    ) -> tuple[str, list[str]]:
        """The gradebook to import, from the roster this adapter read; and warnings for the summary."""
        raise NotImplementedError(f"{self.title} reads no gradebook export, so it writes none")

    def write_feedback(self, pages: list[tuple[RosterStudent, str]]) -> bytes:
        """`feedback_bundle`'s contents, from each matched student's feedback page (HTML)."""
        raise NotImplementedError(f"{self.title} imports no feedback bundle")


def clip(value: Any) -> str | None:
    """An identity field as text, one line, bounded; None for nothing."""
    if value is None or isinstance(value, (dict, list)):
        return None
    text = " ".join(str(value).split())[:FIELD_LIMIT]
    return text or None
