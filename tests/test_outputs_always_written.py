"""Every output of a run is written whatever one of them meets: a name too long, a writer that fails."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lms_results import result

from grader.core import exercise
from grader.core.results import ClassRun, SubmissionResult
from grader.core.safe_text import NAME_BYTES, safe_name, unique_name
from grader.reports import class_report, files
from grader.reports.files import write_outputs
from grader.reports.progress import summary

KIT_ROOT = Path(__file__).resolve().parent.parent
EXERCISE = exercise.load(KIT_ROOT)
REFERENCE = KIT_ROOT / "solutions" / "reference.py"
# 3 and 4 bytes a character in UTF-8: the longest names a Linux file system holds (255 bytes).
CJK = "成"
WIDE = "\U00020000"
LONG_NAME = "学" * 300  # Gradescope's :name: is not a file name: nothing caps it at 255 bytes


def grade(meteor_kit: Path, *args: object) -> subprocess.CompletedProcess:
    return subprocess.run([str(meteor_kit), "grade", *map(str, args), "--jobs", "2"], capture_output=True, text=True, timeout=600)


def every_name_fits(out: Path) -> None:
    """Each path component below `out` fits in 255 bytes, and no staging folder (a dot folder) is left."""
    for folder, dirs, names in os.walk(out):
        for name in dirs + names:
            assert len(os.fsencode(name)) <= 255, name
        assert not [d for d in dirs if d.startswith(".")], (folder, dirs)


def links_resolve(out: Path) -> None:
    """Every page report.html links to exists."""
    report = (out / "report.html").read_text(encoding="utf-8")
    pages = re.findall(r'href="report/([^"]+)"', report)
    assert pages
    for page in pages:
        assert (out / "report" / page).is_file(), page


@pytest.fixture(scope="module")
def long_file_names(tmp_path_factory, meteor_kit):
    root = tmp_path_factory.mktemp("long_files")
    klass = root / "class"
    klass.mkdir()
    names = [CJK * 84 + ".py", CJK * 83 + "x.py", WIDE * 63 + ".py", "alice.py"]
    for name in names:
        assert len(name.encode()) <= 255
        shutil.copy(REFERENCE, klass / name)
    roster = root / "roster.csv"
    roster.write_text("Name,SID,Email\nAnn Lee,1001,ann@example.edu\n", encoding="utf-8")
    out = root / "out"
    return names, out, grade(meteor_kit, klass, "--out", out, "--roster", roster)


def test_the_longest_cjk_file_names_leave_every_output_written(long_file_names):
    names, out, run = long_file_names
    assert run.returncode == 0, run.stderr
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))["submissions"]
    assert sorted(r["submission"] for r in results) == sorted(names)
    assert all(r["score"] == r["max_score"] > 0 for r in results)
    assert len((out / "grades.csv").read_text(encoding="utf-8").splitlines()) == 1 + len(names)
    assert len(list((out / "gradescope").glob("*/results.json"))) == len(names)
    assert len(list((out / "report").glob("*.html"))) == len(names)
    assert len(list((out / "feedback").glob("*.md"))) == len(list((out / "feedback").glob("*.html"))) == len(names)
    every_name_fits(out)
    links_resolve(out)


@pytest.fixture(scope="module")
def long_gradescope_name(tmp_path_factory, meteor_kit):
    root = tmp_path_factory.mktemp("long_metadata")
    download = root / "download"
    for number in ("111111", "222222"):
        (download / f"submission_{number}").mkdir(parents=True)
        shutil.copy(REFERENCE, download / f"submission_{number}" / "meteor.py")
    (download / "submission_metadata.yml").write_text(
        "submission_111111:\n"
        "  :submitters:\n"
        f"  - :name: {LONG_NAME}\n"
        "    :sid: '2001'\n"
        "    :email: long@example.edu\n"
        "submission_222222:\n"
        "  :submitters:\n"
        "  - :name: Tom Weber\n"
        "    :sid: '2002'\n"
        "    :email: tom@example.edu\n",
        encoding="utf-8",
    )
    roster = root / "roster.csv"
    roster.write_text(f"Name,SID,Email\n{LONG_NAME},2001,long@example.edu\nTom Weber,2002,tom@example.edu\n", encoding="utf-8")
    out = root / "out"
    return out, grade(meteor_kit, download, "--out", out, "--roster", roster)


def test_a_long_name_in_gradescope_metadata_leaves_every_output_written(long_gradescope_name):
    out, run = long_gradescope_name
    assert run.returncode == 0, run.stderr
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))["submissions"]
    assert sorted(r["submission"] for r in results) == sorted([LONG_NAME, "Tom Weber"])
    assert len(list((out / "gradescope").glob("*/results.json"))) == 2
    assert len(list((out / "report").glob("*.html"))) == 2
    assert len(list((out / "feedback").glob("*.md"))) == 2
    every_name_fits(out)
    links_resolve(out)


@pytest.fixture(scope="module")
def blocked_outputs(tmp_path_factory, meteor_kit):
    """A run whose grades.csv and unmatched.csv cannot be written: a folder, not empty, holds each name."""
    root = tmp_path_factory.mktemp("blocked")
    klass = root / "class"
    klass.mkdir()
    shutil.copy(REFERENCE, klass / "alice.py")
    roster = root / "roster.csv"
    roster.write_text("Name,SID,Email\nAnn Lee,1001,ann@example.edu\n", encoding="utf-8")
    out = root / "out"
    for name in ("grades.csv", "unmatched.csv"):
        (out / name).mkdir(parents=True)
        (out / name / "kept").write_text("")
    return out, grade(meteor_kit, klass, "--out", out, "--roster", roster)


def test_a_writer_that_fails_is_named_everywhere_and_the_run_writes_the_rest(blocked_outputs):
    out, run = blocked_outputs
    assert run.returncode == 1, run.stderr
    document = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert [r["submission"] for r in document["submissions"]] == ["alice.py"]
    assert sorted(u["output"] for u in document["unwritten"]) == ["grades.csv", "unmatched.csv"]
    assert all("IsADirectoryError" in u["error"] for u in document["unwritten"])
    assert "NOT WRITTEN: grades.csv: IsADirectoryError" in run.stdout
    assert "NOT WRITTEN: unmatched.csv: IsADirectoryError" in run.stdout
    assert "written to" in run.stdout and ", grades.csv" not in run.stdout
    report = (out / "report.html").read_text(encoding="utf-8")
    banner = re.search(r'<div class="banner note" id="unwritten".*?</div>', report, re.S).group()
    assert "grades.csv: IsADirectoryError" in banner and "unmatched.csv: IsADirectoryError" in banner
    assert (out / "gradescope" / "alice.py" / "results.json").is_file() and (out / "report" / "alice.py.html").is_file()
    assert len(list((out / "feedback").iterdir())) == 2 and (out / "gradebook.csv").is_file()
    assert (out / "grades.csv" / "kept").exists()  # nothing of the instructor's is removed
    every_name_fits(out)


def test_a_folder_whose_writer_fails_keeps_the_last_run_and_leaves_no_staging_folder(tmp_path, monkeypatch):
    document = {"exercise": "meteor", "isolation": "bubblewrap", "submissions": [result("ann.py"), result("bob.py")]}
    write_outputs(tmp_path, ClassRun.from_json(document), EXERCISE)
    before = sorted(p.name for p in (tmp_path / "gradescope").iterdir())

    def refused(r: SubmissionResult, ex) -> dict:
        if r.submission == "bob.py":
            raise OSError(36, "File name too long")
        return {}

    def broken(_: dict, title: str) -> dict:
        raise RuntimeError("the pages broke")

    monkeypatch.setattr(files, "to_gradescope", refused)
    monkeypatch.setattr(class_report, "pages", broken)
    unwritten = write_outputs(
        tmp_path, ClassRun.from_json({**document, "submissions": [result("carl.py"), result("bob.py")]}), EXERCISE
    )
    assert [u.as_json() for u in unwritten] == [
        {"output": "gradescope/", "error": "OSError: [Errno 36] File name too long"},
        {"output": "report/", "error": "RuntimeError: the pages broke"},
    ]
    assert sorted(p.name for p in (tmp_path / "gradescope").iterdir()) == before  # the old folder, whole
    assert sorted(p.name for p in (tmp_path / "report").iterdir()) == ["ann.py.html", "bob.py.html"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    written = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert [r["submission"] for r in written["submissions"]] == ["carl.py", "bob.py"]
    assert written["unwritten"] == [u.as_json() for u in unwritten]
    assert "the pages broke" in (tmp_path / "report.html").read_text(encoding="utf-8")
    text = summary(ClassRun.from_json({**written, "duration": 1.0}), tmp_path)
    assert "NOT WRITTEN: report/: RuntimeError: the pages broke" in text
    assert "report.html" in text and "report/" not in text.split("NOT WRITTEN")[0]


def test_a_run_with_nothing_unwritten_says_nothing_of_it(tmp_path):
    assert (
        write_outputs(
            tmp_path,
            ClassRun.from_json({"exercise": "meteor", "isolation": "bubblewrap", "submissions": [result("a.py")]}),
            EXERCISE,
        )
        == []
    )
    assert "unwritten" not in json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert 'id="unwritten"' not in (tmp_path / "report.html").read_text(encoding="utf-8")


@given(st.text(min_size=1, max_size=400))
def test_a_safe_name_fits_in_its_bytes_and_is_one_plain_component(name):
    safe = safe_name(name)
    assert 0 < len(safe.encode()) <= NAME_BYTES
    assert "/" not in safe and "\0" not in safe and not safe.startswith(".")


@given(st.text(alphabet="成\U00020000a.", min_size=40, max_size=200), st.text(alphabet="成b", min_size=1, max_size=3))
def test_two_long_names_that_begin_alike_stay_two_names(head, tail):
    assert safe_name(head + tail) != safe_name(head + tail + "x")


def test_a_name_that_fits_is_kept_and_unique_names_ignore_case():
    assert safe_name("Ann Lee.py") == "Ann_Lee.py" and safe_name("../..") == "_.." and safe_name("") == "_"
    used: set[str] = set()
    assert [unique_name(n, used) for n in ("Ann", "ann", "ANN", "Bo")] == ["Ann", "ann-2", "ANN-3", "Bo"]


def test_staging_folders_a_killed_run_left_are_removed_and_nothing_else(tmp_path):
    left = [".report.ab_d1234", ".gradescope-old.zz9x8y7w", ".feedback.k2j3h4g5"]
    for name in [*left, ".notes", ".report.not-ours"]:
        (tmp_path / name).mkdir()
        (tmp_path / name / "page.html").write_text("")
    write_outputs(
        tmp_path, ClassRun.from_json({"exercise": "meteor", "isolation": "bubblewrap", "submissions": [result("a.py")]}), EXERCISE
    )
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == [".notes", ".report.not-ours"]
