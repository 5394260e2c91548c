"""GitHub Classroom: a folder per student's repository, `<assignment>-<username>/`, as its clone tools make them.

No roster or gradebook of its own: a CSV keyed by login is read by the plain fallback.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable

from grader.lms.adapter import LMS, SUFFIXES, Detection, Download, Entry, Identity, Layout, Student, clip
from grader.lms.claims import contest

GITHUB_USER = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$")
REPO_MARKERS = (".git", ".github", "README.md", "README", "README.rst", "README.txt", ".gitignore")


class GitHubClassroom(LMS):
    name = "github-classroom"
    title = "GitHub Classroom"

    def detect(self, top: list[Entry], children: dict[str, list[Entry]]) -> Detection | None:
        dirs = [e.parts[-1] for e in top if e.kind == "dir"]
        code = [e for e in top if e.kind == "file" and e.parts[-1].endswith(SUFFIXES)]
        prefix = assignment_prefix(dirs) if dirs and not code else None
        if prefix is None:
            return None
        marked = sum(any(c.parts[-1] in REPO_MARKERS for c in children.get(d, [])) for d in dirs)
        if len(dirs) == 1 and not marked:
            return None  # one folder named a-b is no evidence
        return Detection(
            self.name,
            marked * 2 >= len(dirs),
            f"every folder is named {prefix}<username>" + ("" if marked else ", though none looks like a repository"),
        )

    def students(self, download: Download) -> Layout:
        students, others = github_students(download.top, download.below)
        return Layout(students, others)


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


def github_students(top: list[Entry], below: Callable[[tuple[str, ...]], list[Entry]]) -> tuple[list[Student], list[Entry]]:
    """A student per repository folder `<assignment>-<username>/`."""
    dirs = [e for e in top if e.kind == "dir"]
    prefix = assignment_prefix([e.parts[-1] for e in dirs]) or ""
    students, others = [], [e for e in top if e.kind != "dir"]
    for entry in dirs:
        leaf = entry.parts[-1]
        found = Student(Identity(login=clip(leaf[len(prefix) :] or leaf), layout="github-classroom", path=leaf), base=entry.parts)
        found.take(below(entry.parts))
        students.append(found)
    # GitHub's usernames ignore case: `hw-Bob` and `hw-bob` are one account's.
    contest(students, lambda s: [(s.identity.login or "").casefold()], "GitHub account")
    return students, others
