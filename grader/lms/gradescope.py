"""Gradescope: its "Export Submissions" download, `submission_metadata.yml` beside a folder per submission.

Who each submission is comes from the metadata's `:submitters:` (a group's members joined with
", "). Gradescope's grades export has no format of its own here: it is a CSV keyed by SID or
e-mail, which the plain fallback reads (grader/lms/folder.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from grader.lms.adapter import LMS, Detection, Download, Entry, Identity, Layout, Student, clip
from grader.lms.claims import contest

METADATA = "submission_metadata.yml"
METADATA_LIMIT = 50_000_000  # bytes of submission_metadata.yml read at most
GRADESCOPE_DIR = re.compile(r"^submission_(?P<id>\d+)$")
MAX_SUBMITTERS = 50  # a Gradescope group larger than this is cut (its metadata is student-shaped data too)


class Gradescope(LMS):
    name = "gradescope"
    title = "Gradescope"

    def detect(self, top: list[Entry], children: dict[str, list[Entry]]) -> Detection | None:
        files = [e.parts[-1] for e in top if e.kind == "file"]
        dirs = [e.parts[-1] for e in top if e.kind == "dir"]
        if METADATA in files:
            return Detection(self.name, True, f"it holds {METADATA}")
        if dirs and sum(bool(GRADESCOPE_DIR.match(d)) for d in dirs) == len(dirs):
            return Detection(self.name, False, f"every folder is submission_<id> but there is no {METADATA}")
        return None

    def students(self, download: Download) -> Layout:
        students, others = gradescope_students(download.top, download.below, _metadata(download))
        return Layout(students, others)


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
        found.take(below(entry.parts))
        students.append(found)
    # A student in two submissions' :submitters: (by SID, or e-mail): neither submission is theirs for sure.
    contest(students, _submitter_keys, "student")
    return students, others


def _submitter_keys(student: Student) -> list[str]:
    identity = student.identity
    sids = [f"SID {x}" for x in (identity.lms_id or "").split(", ") if x]
    emails = [f"e-mail {x.casefold()}" for x in (identity.email or "").split(", ") if x]
    return sids + emails


def _metadata(download: Download) -> dict | None:
    """submission_metadata.yml, parsed safely (no Python or Ruby object is ever made from it); None if unusable."""
    try:
        data = download.read(METADATA, METADATA_LIMIT)
    except OSError as exc:
        download.tell(f"meteor-kit grade: {METADATA} cannot be read ({exc.strerror}); students are named by folder")
        return None
    if data is None:
        return None
    if len(data) > METADATA_LIMIT:
        download.tell(f"meteor-kit grade: {METADATA} is larger than {METADATA_LIMIT} bytes; students are named by folder")
        return None
    try:
        return parse_metadata(data)
    except ValueError as exc:
        download.tell(f"meteor-kit grade: {METADATA} cannot be read ({exc}); students are named by folder")
        return None


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
