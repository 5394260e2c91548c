"""`meteor-kit grade` on each golden LMS download, as a folder and as a zip, through the real CLI."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from grader.lms import registry

LMS = Path(__file__).parent / "lms"
# Every LMS the registry knows but the plain folder (the last): a new LMS is tested here by its fixtures alone.
LAYOUTS = tuple(adapter.name for adapter in registry.ADAPTERS[:-1])
# The downloads that attack identities: a name holding another student's id, two submissions claiming one.
ATTACKS = sorted(str(p.parent.relative_to(LMS)) for p in LMS.glob("*/*/expected.json") if p.parent.name != "basic")


def zipped(folder: Path, target: Path) -> Path:
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                z.write(path, path.relative_to(folder).as_posix())
    return target


def grade(meteor_kit: Path, what: Path, out: Path, *extra: str) -> tuple[dict, subprocess.CompletedProcess]:
    result = subprocess.run(
        [str(meteor_kit), "grade", str(what), "--out", str(out), "--jobs", "2", *extra],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr
    document = json.loads((out / "results.json").read_text())
    return {r["submission"]: r for r in document["submissions"]}, result


@pytest.fixture(scope="module")
def runs(meteor_kit, tmp_path_factory):
    """Each download graded as a folder and as a zip; then every picked file alone, as a plain folder."""
    work = tmp_path_factory.mktemp("lms")
    graded = {}
    for layout in LAYOUTS:
        download = LMS / layout / "basic" / "download"
        graded[layout, "folder"] = grade(meteor_kit, download, work / layout / "out-folder")
        graded[layout, "zip"] = grade(meteor_kit, zipped(download, work / f"{layout}.zip"), work / layout / "out-zip")
    plain = work / "plain"
    plain.mkdir()
    for layout in LAYOUTS:
        expected = json.loads((LMS / layout / "basic" / "expected.json").read_text())["students"]
        for index, (_name, want) in enumerate(sorted(expected.items())):
            if "path" in want and not want.get("helpers"):
                shutil.copy(LMS / layout / "basic" / "download" / want["path"], plain / f"{layout}-{index}.py")
    graded["plain"] = grade(meteor_kit, plain, work / "out-plain")
    return graded


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("form", ["folder", "zip"])
def test_every_student_is_named_and_identified_as_the_download_says(runs, layout, form):
    results, run = runs[layout, form]
    expected = json.loads((LMS / layout / "basic" / "expected.json").read_text())["students"]
    assert sorted(results) == sorted(expected)
    for name, want in expected.items():
        got = results[name]
        assert got["student"] == want["student"], name
        assert list(got["student"]) == ["name", "lms_id", "login", "email", "late", "submitted_at", "layout", "path"]
        if "path" in want:
            assert got["path"] == want["path"] and got["status"] == "graded", (name, got["message"])
        if want.get("status"):
            assert got["status"] == want["status"] and want["message"] in got["message"], name
        if want.get("full_marks"):  # helper modules imported inside the jail, for those that have them
            assert got["score"] == got["max_score"] > 0, (name, got["message"])
        assert (want.get("note", "\0") in got["note"]) == ("note" in want), (name, got["note"])
    for _name, want in expected.items():
        if "note" in want:
            assert want["note"] in run.stdout  # the terminal summary shows the note


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_zip_and_the_folder_it_unpacks_to_grade_alike(runs, layout):
    folder, _ = runs[layout, "folder"]
    archive, _ = runs[layout, "zip"]
    fields = ("score", "status", "passed", "path", "student", "note")
    assert {n: [r[f] for f in fields] for n, r in folder.items()} == {n: [r[f] for f in fields] for n, r in archive.items()}


def test_scores_equal_those_of_the_same_files_graded_as_a_plain_folder(runs):
    plain, _ = runs["plain"]
    compared = 0
    for layout in LAYOUTS:
        results, _ = runs[layout, "zip"]
        expected = json.loads((LMS / layout / "basic" / "expected.json").read_text())["students"]
        for index, (name, want) in enumerate(sorted(expected.items())):
            if "path" in want and not want.get("helpers"):
                alone = plain[f"{layout}-{index}.py"]
                assert (results[name]["score"], results[name]["passed"]) == (alone["score"], alone["passed"]), name
                compared += 1
    assert compared >= 10


def test_grades_csv_and_the_report_show_the_person(runs):
    canvas_out = Path(runs["canvas", "folder"][1].args[4])
    with open(canvas_out / "grades.csv", newline="") as f:
        rows = {r["submission"]: r for r in csv.DictReader(f)}
    assert list(next(iter(rows.values())))[:6] == ["submission", "score", "max_score", "status", "passed", "tests"]
    assert rows["martinezbob"]["late"] == "true" and rows["martinezbob"]["lms_id"] == "23456"
    assert rows["leeanna"]["late"] == "false" and rows["leeanna"]["layout"] == "canvas"
    assert "2 files define meteor_score" in rows["okaforjo"]["note"]
    moodle_out = Path(runs["moodle", "folder"][1].args[4])
    report = (moodle_out / "report.html").read_text()
    assert "Bob Martinez" in report and "Alex Kim (123460)" in report and "meteor.py (2)" not in report
    page = next(p for p in (canvas_out / "report").iterdir() if "martinezbob" in p.name).read_text()
    assert "LMS id 23456" in page and "<b>late</b>" in page
    assert (
        "2 submitted late" not in runs["canvas", "folder"][1].stdout and "1 submitted late" in runs["canvas", "folder"][1].stdout
    )


def test_from_folder_grades_a_download_as_a_plain_folder(meteor_kit, tmp_path):
    results, _ = grade(meteor_kit, LMS / "moodle" / "basic" / "download", tmp_path / "out", "--from", "folder")
    assert "Bob Martinez_123456_assignsubmission_file_/meteor.py" in results
    assert results["Bob Martinez_123456_assignsubmission_file_/meteor.py"]["student"]["layout"] == "folder"


@pytest.mark.parametrize("stop", ["SIGINT", "SIGTERM"])
def test_ctrl_c_or_a_termination_removes_the_unpacked_zip(meteor_kit, tmp_path, stop):
    import os
    import signal

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    scratch.chmod(0o777)  # the jail's own temporary files may land here too
    archive = zipped(LMS / "moodle" / "basic" / "download", tmp_path / "moodle.zip")
    with zipfile.ZipFile(archive, "a") as z:  # graded first, and slow to load: the run is surely still going
        z.writestr("Aaron Slow_100_assignsubmission_file_/meteor.py", "import time\ntime.sleep(30)\n")
    process = subprocess.Popen(
        [str(meteor_kit), "grade", str(archive), "--out", str(tmp_path / "out"), "--jobs", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(scratch)},
    )
    # Stopped once grading is under way (the first result is in, the slow one; six are left).
    head = []
    for line in process.stderr:
        head.append(line)
        if line.startswith("graded 1/7"):
            break
    assert list(scratch.glob("kit-download-*/*_assignsubmission_file_"))  # unpacked there, while it runs
    process.send_signal(getattr(signal, stop))
    _, rest = process.communicate(timeout=120)
    stderr = "".join(head) + rest
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert not list(scratch.glob("kit-download-*"))


def test_running_again_on_the_zip_keeps_every_result_and_who_it_is(meteor_kit, tmp_path, runs):
    download = LMS / "canvas" / "basic" / "download"
    first, _ = runs["canvas", "zip"]
    out = tmp_path / "out"
    shutil.copytree(Path(runs["canvas", "zip"][1].args[4]), out)
    again, run = grade(meteor_kit, zipped(download, tmp_path / "again.zip"), out)
    assert f"{len(first)} submission(s) unchanged since the last run" in run.stderr
    assert all(r["reused"] for r in again.values())
    assert {n: (r["student"], r["note"], r["score"]) for n, r in again.items()} == {
        n: (r["student"], r["note"], r["score"]) for n, r in first.items()
    }
    # A changed helper module changes what the submission does: it is graded again.
    changed = tmp_path / "changed"
    shutil.copytree(download, changed)
    helper = changed / "chenwei_22222_600002_tokens.py"
    helper.write_text(helper.read_text().replace("text.lower().split()", "text.split()"))
    third, run = grade(meteor_kit, changed, out)
    assert [n for n, r in third.items() if not r["reused"]] == ["chenwei"]
    assert third["chenwei"]["score"] < third["chenwei"]["max_score"]


def test_a_hostile_download_is_graded_with_every_odd_member_a_row_and_every_name_escaped(meteor_kit, tmp_path):
    import stat

    from tests.lms.make_fixtures import CORRECT, TOKENS, USES_TOKENS

    link = zipfile.ZipInfo("Link Ln_73_assignsubmission_file_/meteor.py")
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    archive = tmp_path / "hostile.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("Eve <img src=x onerror=alert(1)>_70_assignsubmission_file_/meteor.py", CORRECT)
        z.writestr("Mal\x1b[2J_71_assignsubmission_file_/meteor.py", CORRECT)
        z.writestr("Os Shadow_72_assignsubmission_file_/meteor.py", "import os\n" + USES_TOKENS)
        z.writestr("Os Shadow_72_assignsubmission_file_/tokens.py", TOKENS)
        z.writestr("Os Shadow_72_assignsubmission_file_/os.py", "raise SystemExit('shadowed')\n")
        z.writestr(link, "/etc/shadow")
    results, run = grade(meteor_kit, archive, tmp_path / "out")
    eve = results["Eve <img src=x onerror=alert(1)>"]
    assert eve["score"] == eve["max_score"] and eve["student"]["lms_id"] == "70"
    shadow = results["Os Shadow"]
    assert shadow["score"] == shadow["max_score"] and "os.py cannot be imported" in shadow["note"]
    skipped = {n: r for n, r in results.items() if r["status"] == "error"}
    assert len(skipped) == 2
    assert any("control characters" in r["message"] for r in skipped.values())
    assert any("symbolic link" in r["message"] for r in skipped.values())
    report = (tmp_path / "out" / "report.html").read_text()
    assert "<img src=x" not in report and "&lt;img src=x onerror=alert(1)&gt;" in report
    assert "\x1b" not in run.stdout + run.stderr


@pytest.mark.parametrize("scenario", ATTACKS)
def test_no_file_is_graded_as_another_students_and_a_contested_one_is_an_error_row_everywhere(meteor_kit, tmp_path, scenario):
    import html

    expected = json.loads((LMS / scenario / "expected.json").read_text())["students"]
    download = LMS / scenario / "download"
    folder, run = grade(meteor_kit, download, tmp_path / "out")
    archive, _ = grade(meteor_kit, zipped(download, tmp_path / "download.zip"), tmp_path / "out-zip")
    fields = ("score", "status", "path", "student", "note", "message")
    assert {n: [r[f] for f in fields] for n, r in folder.items()} == {n: [r[f] for f in fields] for n, r in archive.items()}
    assert sorted(folder) == sorted(expected)
    with open(tmp_path / "out" / "grades.csv", newline="") as f:
        rows = {r["submission"]: r for r in csv.DictReader(f)}
    report = (tmp_path / "out" / "report.html").read_text()
    for name, want in expected.items():
        got = folder[name]
        assert got["student"] == want["student"], name
        if want.get("status") == "error":  # graded for nobody, and every output says why
            assert got["status"] == "error" and got["score"] == 0 and want["message"] in got["message"], name
            assert rows[name]["status"] == "error" and want["message"] in rows[name]["note"], name
            assert html.escape(want["message"]) in report and name in run.stdout, name
        else:
            assert got["status"] == "graded" and got["path"] == want["path"], (name, got["message"])
        if want.get("full_marks"):  # the victim's own file is graded, not the impostor's
            assert got["score"] == got["max_score"] > 0, name
        if want.get("wrong"):  # the impostor's file stays the impostor's
            assert 0 <= got["score"] < got["max_score"], name
