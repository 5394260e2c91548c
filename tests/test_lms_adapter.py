"""The LMS seam: an LMS made up here plugs in through the registry alone, and `grade` reads and writes it."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from conftest import BIN, KIT_ROOT

from grader.core.results import SubmissionResult
from grader.lms import registry
from grader.lms.adapter import LMS, Detection, Download, Entry, Fill, Identity, Layout, Student
from grader.reports.gradebook import owners, score_for
from grader.reports.roster import Match, Roster, Table
from grader.reports.roster import Student as RosterStudent

LMS_FIXTURES = Path(__file__).parent / "lms"
# TinyLMS's download: flat files `<login>+<number>.py`.
TINY_NAME = re.compile(r"^(?P<login>[a-z]+)\+(?P<number>\d+)\.py$")


class TinyLMS(LMS):
    """An LMS no one wrote: its download, its roster (`tiny_id,tiny_name`), its gradebook and its feedback bundle."""

    name = "tinylms"
    title = "TinyLMS"
    roster_kind = "tinylms"
    roster_title = "TinyLMS roster"
    roster_header = "TinyLMS's (tiny_id, tiny_name)"
    gradebook_file = "gradebook-tinylms.csv"
    feedback_bundle = "feedback-tinylms.txt"

    def detect(self, top: list[Entry], children: dict[str, list[Entry]]) -> Detection | None:
        files = [e.parts[-1] for e in top if e.kind == "file"]
        if files and all(TINY_NAME.match(f) for f in files):
            return Detection(self.name, True, "every file is named <login>+<number>.py")
        return None

    def students(self, download: Download) -> Layout:
        read = Layout([])
        for entry in download.top:
            named = TINY_NAME.match(entry.parts[-1])
            if entry.kind != "file" or named is None:
                read.others.append(entry)
                continue
            student = Student(Identity(login=named["login"], lms_id=named["number"], layout=self.name))
            student.files.append(entry.parts)
            student.module_of[entry.parts] = "solution.py"
            read.students.append(student)
        return read

    def read_roster(self, table: Table) -> Roster | None:
        if table.header[:2] != ["tiny_id", "tiny_name"]:
            return None
        students = [
            RosterStudent(i, table.cell(row, "tiny_id"), table.cell(row, "tiny_name")) for i, row in enumerate(table.rows)
        ]
        return Roster(self.roster_kind, table.path, table.header, table.rows, students)

    def write_gradebook(
        self, roster: Roster, results: list[SubmissionResult], matched: Match, fill: Fill
    ) -> tuple[str, list[str]]:
        by_row = owners(results, matched)
        rows = [f"{s.lms_id},{score_for(by_row.get(s.row), 10.0, fill.missing)}" for s in roster.students]
        return "tiny_id,points\n" + "".join(f"{row}\n" for row in rows), []

    def write_feedback(self, pages: list[tuple[RosterStudent, str]]) -> bytes:
        return "".join(f"{student.lms_id}: {len(page)} characters\n" for student, page in pages).encode()


@pytest.fixture
def tiny(monkeypatch):
    """TinyLMS registered for this test only."""
    monkeypatch.setattr(registry, "ADAPTERS", list(registry.ADAPTERS))
    registry.register(TinyLMS())
    return registry.get("tinylms")


def test_a_registered_lms_is_detected_and_its_roster_recognised_before_the_fallback(tiny):
    top = [Entry(("ann+17.py",), "file"), Entry(("bob+18.py",), "file")]
    assert registry.detect(top, {}) == Detection("tinylms", True, "every file is named <login>+<number>.py")
    assert registry.detect([Entry(("ann.py",), "file")], {}).layout == "folder"  # the fallback still takes the rest
    roster = registry.parse_roster(b"tiny_id,tiny_name\n17,Ann\n")
    assert roster.kind == "tinylms" and registry.of_roster(roster) is tiny
    assert registry.names()[-2:] == ["tinylms", "folder"]


def test_two_lmses_of_one_name_are_refused(tiny):
    with pytest.raises(ValueError, match="registered already"):
        registry.register(TinyLMS())


PLUGGED_IN = """
import sys
sys.path.insert(0, {tests!r})
from test_lms_adapter import TinyLMS
from grader.lms import registry
registry.register(TinyLMS())
from grader.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def test_grade_reads_a_download_of_an_lms_plugged_in_from_outside_and_writes_its_gradebook(tmp_path):
    download = tmp_path / "download"
    download.mkdir()
    (download / "ann+17.py").write_text((KIT_ROOT / "solutions" / "reference.py").read_text())
    (download / "bob+18.py").write_text((KIT_ROOT / "tests" / "catalogue" / "wrong" / "no_clipping.py").read_text())
    roster = tmp_path / "roster.csv"
    roster.write_text("tiny_id,tiny_name\n17,Ann Lee\n18,Bob Martinez\n19,Chi Okafor\n")
    out = tmp_path / "out"
    script = PLUGGED_IN.format(tests=str(Path(__file__).parent))
    run = subprocess.run(
        [str(BIN / "python"), "-c", script, "grade", str(download), "--out", str(out), "--jobs", "1", "--roster", str(roster)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=KIT_ROOT,
    )
    assert run.returncode == 0, run.stderr
    results = {r["submission"]: r for r in json.loads((out / "results.json").read_text())["submissions"]}
    assert sorted(results) == ["ann", "bob"]
    assert results["ann"]["student"] == {
        "name": None,
        "lms_id": "17",
        "login": "ann",
        "email": None,
        "late": None,
        "submitted_at": None,
        "layout": "tinylms",
        "path": "ann+17.py",
    }
    ann, bob = results["ann"], results["bob"]
    assert ann["score"] == ann["max_score"] > bob["score"] and not ann["note"] and not bob["note"]
    expected = f"tiny_id,points\n17,10\n18,{round(bob['score'] / bob['max_score'] * 10, 2):g}\n19,0\n"
    assert (out / "gradebook-tinylms.csv").read_text() == expected
    bundle = (out / "feedback-tinylms.txt").read_text().splitlines()
    assert [line.split(":")[0] for line in bundle] == ["17", "18"]
    assert "roster (tinylms): 2 matched, 1 without a submission" in run.stdout
    assert "gradebook-tinylms.csv" in run.stdout and "feedback-tinylms.txt" in run.stdout


def test_the_engine_never_names_the_lms_plugged_in():
    named = [p for p in (KIT_ROOT / "grader").rglob("*.py") if "tinylms" in p.read_text(encoding="utf-8").casefold()]
    assert named == []


def test_every_lms_of_the_registry_but_the_fallback_has_golden_downloads():
    for adapter in registry.ADAPTERS[:-1]:
        assert (LMS_FIXTURES / adapter.name / "basic" / "expected.json").is_file(), adapter.name
        expected = json.loads((LMS_FIXTURES / adapter.name / "basic" / "expected.json").read_text())
        assert expected["layout"] == adapter.name


def test_canvas_is_named_by_its_own_module_and_the_registry_alone():
    """`grep -rni canvas grader/`, as issue 32 measured it (63 lines in five engine modules before the seam)."""
    naming = sorted(
        str(p.relative_to(KIT_ROOT / "grader")) for p in (KIT_ROOT / "grader").rglob("*.py") if "canvas" in p.read_text().lower()
    )
    assert naming == ["lms/canvas.py", "lms/registry.py"]


# The engine's parts that reach an LMS: through the interface, never by its name.
THROUGH_THE_SEAM = (
    "judging/intake.py",
    "judging/passback.py",
    "judging/pick.py",
    "judging/discovery.py",
    "judging/archive.py",
    "reports/roster.py",
    "reports/gradebook.py",
    "cli/merge.py",
    "lms/adapter.py",
    "lms/claims.py",
    "lms/folder.py",
)


@pytest.mark.parametrize("part", THROUGH_THE_SEAM)
def test_the_engine_reaches_every_lms_through_the_seam_never_by_its_name(part):
    text = (KIT_ROOT / "grader" / part).read_text().lower()
    for adapter in registry.ADAPTERS[:-1]:
        assert adapter.name not in text and adapter.title.lower() not in text, adapter.name
