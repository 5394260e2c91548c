"""Every LMS the kit knows, and the engine's way to them: which one a download or a roster is, by name.

A new LMS is a module of this package with a subclass of `adapter.LMS`, listed in ADAPTERS
(and in DETECTION, where its names should be tried), and its golden downloads under tests/lms/.
Another program can `register` one without changing the kit.
"""

from __future__ import annotations

from pathlib import Path

from grader.lms.adapter import LMS, Detection, Entry
from grader.lms.canvas import Canvas
from grader.lms.folder import Folder
from grader.lms.github_classroom import GitHubClassroom
from grader.lms.gradescope import Gradescope
from grader.lms.moodle import Moodle
from grader.reports.roster import Roster, RosterError, Table, parse_table, read_table, refuse_duplicates

# As --from lists them, and the order a roster's header is tried in. The fallback comes last and takes anything.
ADAPTERS: list[LMS] = [Canvas(), Moodle(), Gradescope(), GitHubClassroom(), Folder()]
# The order a download's names are tried in: the first adapter that answers has it. Gradescope's metadata
# file settles it, and a Moodle name anywhere outranks Canvas-like ones (one file's name can read as both).
# An adapter not listed here is tried after these, before the fallback.
DETECTION = ("gradescope", "moodle", "canvas", "github-classroom")


def fallback() -> LMS:
    return ADAPTERS[-1]


def names() -> list[str]:
    """The layouts --from accepts."""
    return [a.name for a in ADAPTERS]


def get(name: str) -> LMS:
    for adapter in ADAPTERS:
        if adapter.name == name:
            return adapter
    raise KeyError(name)


def register(adapter: LMS) -> None:
    """Add an LMS, before the fallback: --from, detection and rosters then know it."""
    if adapter.name in names():
        raise ValueError(f"an LMS named {adapter.name!r} is registered already")
    ADAPTERS.insert(len(ADAPTERS) - 1, adapter)


def detect(top: list[Entry], children: dict[str, list[Entry]]) -> Detection:
    """The layout of a download from its top-level entries (and, for folders, what each holds)."""
    ranked = sorted(ADAPTERS[:-1], key=lambda a: DETECTION.index(a.name) if a.name in DETECTION else len(DETECTION))
    for adapter in [*ranked, fallback()]:
        found = adapter.detect(top, children)
        if found is not None:
            return found
    raise AssertionError("the fallback recognises every download")


def read_roster(path: Path) -> Roster:
    """The roster in `path`, its LMS recognised from its header."""
    return recognise(read_table(path))


def parse_roster(data: bytes, path: str = "roster") -> Roster:
    return recognise(parse_table(data, path))


def recognise(table: Table) -> Roster:
    """The roster a table is, read by the first adapter that knows its header; RosterError if none does."""
    for adapter in ADAPTERS:
        roster = adapter.read_roster(table)
        if roster is not None:
            roster.warnings[:0] = table.warnings
            refuse_duplicates(roster)
            return roster
    shown = ", ".join(repr(h[:40]) for h in table.header[:8])
    known = " nor ".join(a.roster_header for a in ADAPTERS if a.roster_header)
    raise RosterError(f"the roster {table.path} is not a gradebook this kit knows: its header ({shown}) is neither {known}")


def of_roster(roster: Roster) -> LMS:
    """The adapter that read `roster`, which writes its gradebook back."""
    for adapter in ADAPTERS:
        if adapter.roster_kind == roster.kind:
            return adapter
    raise KeyError(roster.kind)
