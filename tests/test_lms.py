"""LMS layouts: detection, identities, the file graded among a student's files, helper modules."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from grader.core.submission import LoadError
from grader.judging.discovery import prepare
from grader.judging.intake import discover_all, helper_modules
from grader.judging.pick import Pick, pick
from grader.lms.adapter import Detection, Entry, Identity, Student
from grader.lms.canvas import canvas_name, canvas_readings, canvas_students, resubmission
from grader.lms.claims import Reading, resolve
from grader.lms.github_classroom import assignment_prefix
from grader.lms.gradescope import parse_metadata
from grader.lms.moodle import moodle_readings, moodle_students
from grader.lms.registry import detect
from grader.sandbox.host import SandboxedSubmission

LMS = Path(__file__).parent / "lms"
# Every golden download: tests/lms/<layout>/<scenario>/ (the basic ones, and the attacks on identities).
SCENARIOS = sorted(str(p.parent.relative_to(LMS)) for p in LMS.glob("*/*/expected.json"))


def entries(*names: str) -> list[Entry]:
    return [Entry((n.rstrip("/"),), "dir" if n.endswith("/") else "file") for n in names]


def specs_of(folder: Path, layout: str | None = None, glob: str | None = None) -> tuple[dict, list[str]]:
    told: list[str] = []
    specs = discover_all([str(folder)], layout, told.append, "meteor_score", glob)
    return {s.name: s for s in specs}, told


# ---------------------------------------------------------------- names


@pytest.mark.parametrize(
    "filename, login, late, user, submission, original, base, version",
    [
        ("martinezbob_LATE_23456_678902_meteor.py", "martinezbob", True, "23456", "678902", "meteor.py", "meteor.py", 0),
        ("leeanna_11111_600001_meteor-2.py", "leeanna", False, "11111", "600001", "meteor-2.py", "meteor.py", 2),
        (
            "leeanna_11111_600001_my_meteor_v2-13.ipynb",
            "leeanna",
            False,
            "11111",
            "600001",
            "my_meteor_v2-13.ipynb",
            "my_meteor_v2.ipynb",
            13,
        ),
        ("de_la_cruz_maria_LATE_7_8_a_1_2.py", "de_la_cruz_maria", True, "7", "8", "a_1_2.py", "a_1_2.py", 0),
    ],
)
def test_a_canvas_file_name_gives_login_late_flag_ids_and_version(
    filename, login, late, user, submission, original, base, version
):
    parsed = canvas_name(filename)
    assert parsed == {
        "login": login,
        "late": late,
        "user": user,
        "submission": submission,
        "original": original,
        "base": base,
        "version": version,
    }


@pytest.mark.parametrize("filename", ["meteor.py", "alice_meteor.py", "alice_12_meteor.py", "_1_2_x.py"])
def test_names_that_are_not_canvas_names_are_not_read_as_such(filename):
    assert canvas_name(filename) is None


def test_a_canvas_resubmission_without_a_suffix_is_numbered_at_the_end():
    assert resubmission("Makefile-3") == ("Makefile", 3) and resubmission("meteor.py") == ("meteor.py", 0)


def test_canvas_keeps_only_the_latest_upload_of_each_file_and_the_late_flag_of_any():
    students, others = canvas_students(
        entries("bob_1_9_meteor.py", "bob_1_9_meteor-1.py", "bob_LATE_1_9_meteor-2.py", "bob_1_9_helper.py", "notes.txt")
    )
    assert [e.parts for e in others] == [("notes.txt",)]
    (bob,) = students
    assert bob.identity == Identity(login="bob", lms_id="1", late=True, layout="canvas")
    assert sorted(bob.files) == [("bob_1_9_helper.py",), ("bob_LATE_1_9_meteor-2.py",)]
    assert bob.module_of[("bob_LATE_1_9_meteor-2.py",)] == "meteor.py"


def test_a_canvas_name_with_ids_in_its_login_or_original_name_has_every_reading():
    readings = canvas_readings("mal_23456_1_x_902_557_meteor.py")
    assert [(r.who, r.lms_id, r.parts["original"]) for r in readings] == [
        ("mal", "23456", "x_902_557_meteor.py"),
        ("mal_23456_1_x", "902", "meteor.py"),
    ]
    assert canvas_name("mal_23456_1_x_902_557_meteor.py") is None  # not one reading: not read as one


def test_a_flat_moodle_name_with_a_second_participant_id_has_both_readings():
    readings = moodle_readings(Entry(("Eve_123456_assignsubmission_file_777_900_assignsubmission_file_m.py",), "file"))
    assert [(r.who, r.lms_id) for r in readings] == [("Eve", "123456"), ("Eve_123456_assignsubmission_file_777", "900")]
    folder = moodle_readings(Entry(("Eve_123456_assignsubmission_file_777_900_assignsubmission_file_",), "dir"))
    assert [(r.who, r.lms_id) for r in folder] == [("Eve_123456_assignsubmission_file_777", "900")]


@pytest.mark.parametrize(
    "flat",
    [
        "Eve_123456_assignsubmission_file_777_900_assignsubmission_file_meteor.py",  # Bob's id in Eve's name
        "Eve_900_assignsubmission_file_x_123456_assignsubmission_file_meteor.py",  # in her file's name
    ],
)
def test_a_flat_moodle_file_that_could_be_bobs_is_never_bobs(flat):
    bob = "Bob Martinez_123456_assignsubmission_file_meteor.py"
    students, _, _ = moodle_students(entries(bob, flat), lambda parts: [])
    owners = {s.identity.lms_id: s.files for s in students if not s.contested}
    assert owners == {"123456": [(bob,)], "900": [(flat,)]}  # Bob's id given to Bob: the other reading is Eve's
    alone, _, _ = moodle_students(entries(flat), lambda parts: [])  # no file of Bob's to say which: nobody's
    assert [(s.identity.lms_id, bool(s.contested)) for s in alone] == [(None, True)]


def test_resolve_never_chooses_the_reading_that_agrees_with_another_entry():
    # Eve copied Bob's whole prefix into her name: the reading that is Bob's agrees with Bob's file, and is refused still.
    bob = Reading("Bob", "1")
    eve = [Reading("Bob", "1"), Reading("Bob_1_assignsubmission_file_x", "9")]
    assert resolve([[bob], eve]) == [bob, None]
    assert resolve([[bob], [Reading("Eve", "1"), eve[1]]]) == [bob, eve[1]]


def test_two_github_repositories_of_one_account_in_two_cases_are_both_refused(tmp_path):
    # Made here, not committed: a clone on a case-insensitive disk could not hold both folders.
    for user in ("Bob", "bob", "carol"):
        (tmp_path / f"meteor-{user}").mkdir()
        (tmp_path / f"meteor-{user}" / "README.md").write_text("x\n")
        (tmp_path / f"meteor-{user}" / "meteor.py").write_text("def meteor_score(r, c, **k):\n    return 0.0\n")
    specs, _ = specs_of(tmp_path)
    assert sorted(specs) == ["Bob", "bob", "carol"]
    for name in ("Bob", "bob"):
        assert specs[name].path is None and "2 submissions claim GitHub account bob (Bob, bob)" in specs[name].problem
    assert specs["carol"].path is not None and not specs["carol"].problem


# ---------------------------------------------------------------- detection


@pytest.mark.parametrize(
    "top, layout, sure",
    [
        (["submission_metadata.yml", "submission_1/", "submission_2/"], "gradescope", True),
        (["submission_1/", "submission_2/"], "gradescope", False),
        (["Ann Lee_12_assignsubmission_file_/", "Bo Wu_13_assignsubmission_onlinetext_/"], "moodle", True),
        (["Ann Lee_12_assignsubmission_file_meteor.py"], "moodle", True),
        (["a_1_2_meteor.py", "b_LATE_3_4_meteor.py"], "canvas", True),
        (["a_1_2_meteor.py", "b_LATE_3_4_meteor.py", "extra.py"], "canvas", False),
        (["alice.py", "bob.py"], "folder", True),
        (["alice/", "bob/"], "folder", True),
        (["hw1-alice/", "hw1-bob/"], "github-classroom", False),
        (["hw-1-alice/", "hw-1-bob-smith/"], "github-classroom", False),
        (["solo-run/"], "folder", True),
    ],
)
def test_a_layout_is_recognised_from_its_names(top, layout, sure):
    found = detect(entries(*top), {})
    assert (found.layout, found.sure) == (layout, sure)


def test_repository_folders_make_github_classroom_sure():
    top = entries("meteor-alice/", "meteor-bob/")
    children = {
        "meteor-alice": [Entry(("meteor-alice", ".github"), "dir")],
        "meteor-bob": [Entry(("meteor-bob", "README.md"), "file")],
    }
    assert detect(top, children) == Detection("github-classroom", True, "every folder is named meteor-<username>")


def test_the_assignment_prefix_leaves_usernames_with_hyphens_whole():
    assert assignment_prefix(["hw-1-alice", "hw-1-bob-smith"]) == "hw-1-"
    assert assignment_prefix(["alice", "bob"]) is None


# ---------------------------------------------------------------- Gradescope's metadata


def test_gradescope_metadata_is_read_with_ruby_symbols_and_ruby_tags_as_plain_data():
    document = parse_metadata((LMS / "gradescope" / "basic" / "download" / "submission_metadata.yml").read_bytes())
    record = document["submission_222222"]
    assert record[":submitters"][0] == {":name": "Tom Weber", ":sid": "2002", ":email": "tom@example.edu"}
    assert record[":results"] == {"score": 0.0, "tests": []}  # a !ruby/hash tag: its data only


@pytest.mark.parametrize(
    "text",
    [
        "!!python/object/apply:os.system ['touch /tmp/meteor-pwned']\n",
        "x: !!python/name:os.system\n",
    ],
)
def test_gradescope_metadata_never_makes_python_objects(text):
    try:
        document = parse_metadata(text.encode())
    except ValueError:
        document = None
    assert not os.path.exists("/tmp/meteor-pwned")
    assert document is None or all(isinstance(v, (str, dict, list)) for v in document.values())


@pytest.mark.parametrize("text", [b"- a\n- b\n", b"key: [unclosed\n", b"\xff\xfe"])
def test_gradescope_metadata_that_is_not_a_mapping_is_refused(text):
    with pytest.raises(ValueError):
        parse_metadata(text)


def test_gradescope_without_readable_metadata_names_submissions_by_folder(tmp_path):
    (tmp_path / "submission_9").mkdir()
    (tmp_path / "submission_9" / "meteor.py").write_text("def meteor_score(r, c, **k):\n    return 0.0\n")
    (tmp_path / "submission_metadata.yml").write_text("- not\n- a mapping\n")
    specs, told = specs_of(tmp_path)
    assert list(specs) == ["submission_9"] and any("cannot be read" in line for line in told)
    assert (
        specs["submission_9"].student["layout"] == "gradescope" and "no submitters for submission_9" in specs["submission_9"].note
    )


# ---------------------------------------------------------------- the file graded


def defines_from(defining: set[str]):
    return lambda parts: parts[-1] in defining


def test_the_file_that_defines_the_function_is_graded_and_tests_are_never_picked():
    found = pick(
        [("test_meteor.py",), ("meteor.py",), ("conftest.py",), ("setup.py",)],
        defines_from({"test_meteor.py", "meteor.py"}),
        "meteor_score",
    )
    assert found == Pick(("meteor.py",), "")
    found = pick([("tests", "meteor_check.py"), ("src", "meteor.py"), ("README.md",)], defines_from(set()), "meteor_score")
    assert found.chosen == ("src", "meteor.py")


def test_a_test_file_alone_is_still_graded():
    assert pick([("test_meteor.py",)], defines_from(set()), "meteor_score").chosen == ("test_meteor.py",)


def test_two_files_that_define_it_are_a_deterministic_pick_with_a_note():
    found = pick([("b.py",), ("a.py",), ("helper.py",)], defines_from({"a.py", "b.py"}), "meteor_score")
    assert found == Pick(("a.py",), "2 files define meteor_score (a.py, b.py): graded a.py")


def test_no_file_defining_it_is_said():
    found = pick([("x.py",), ("y.py",)], defines_from(set()), "meteor_score")
    assert found.chosen == ("x.py",) and "no file defines meteor_score" in found.note


def test_the_exercise_glob_names_the_file_even_over_one_that_defines_the_function():
    found = pick([("a.py",), ("meteor_final.py",)], defines_from({"a.py"}), "meteor_score", glob="meteor*.py")
    assert found == Pick(("meteor_final.py",), "")
    found = pick([("a.py",), ("b.py",)], defines_from({"b.py"}), "meteor_score", glob="meteor*.py")
    assert found.chosen == ("b.py",) and "no file matches the exercise's file pattern 'meteor*.py'" in found.note


def test_the_file_graded_is_found_by_parsing_never_by_running(tmp_path):
    folder = tmp_path / "Ann Lee_12_assignsubmission_file_"
    folder.mkdir()
    marker = tmp_path / "ran"
    (folder / "a_runner.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\nfrom b_impl import go\n")
    (folder / "b_impl.py").write_text("if True:\n    def meteor_score(r, c, alpha=0.9, beta=3, gamma=0.5):\n        return 0.0\n")
    specs, _ = specs_of(tmp_path)
    assert specs["Ann Lee"].where.endswith("b_impl.py") and not marker.exists()


def test_a_file_that_imports_the_function_counts_as_defining_it():
    import ast

    from grader.judging.intake import _defined_in

    assert _defined_in(ast.parse("from helpers import meteor_score\n").body, "meteor_score")
    assert _defined_in(ast.parse("try:\n    pass\nexcept Exception:\n    meteor_score = None\n").body, "meteor_score")
    assert not _defined_in(ast.parse("def f():\n    def meteor_score(): pass\n").body, "meteor_score")


# ---------------------------------------------------------------- helper modules


def test_helper_names_that_shadow_python_or_the_grader_are_refused():
    student = Student(
        Identity(layout="moodle"),
        files=[
            ("s", n)
            for n in (
                "meteor.py",
                "os.py",
                "sys.py",
                "pytest.py",
                "grader.py",
                "my-helper.py",
                "_private.py",
                "tokens.py",
                "class.py",
            )
        ],
        base=("s",),
    )
    helpers, refused = helper_modules(student, ("s", "meteor.py"))
    assert helpers == [("tokens", ("s", "tokens.py"))]
    assert len(refused) == 7 and all("cannot be imported" in r for r in refused)


def test_helpers_are_only_the_files_beside_the_graded_one_and_at_most_twenty():
    files = [("s", "meteor.py"), ("s", "sub", "deep.py"), *[("s", f"h{i:02}.py") for i in range(25)]]
    helpers, refused = helper_modules(Student(Identity(), files=files, base=("s",)), ("s", "meteor.py"))
    assert [h[0] for h in helpers] == [f"h{i:02}" for i in range(20)] and "more than 20" in refused[-1]


@pytest.mark.parametrize("layout", ["moodle", "github-classroom"])
def test_a_helper_that_is_a_link_is_never_read(tmp_path, layout):
    folder = tmp_path / ("Ann Lee_12_assignsubmission_file_" if layout == "moodle" else "hw-ann")
    folder.mkdir()
    (folder / "meteor.py").write_text(
        "from tokens import x\ndef meteor_score(r, c, alpha=0.9, beta=3, gamma=0.5):\n    return x\n"
    )
    (folder / "tokens.py").symlink_to("/etc/shadow")
    if layout == "github-classroom":
        (folder / "README.md").write_text("x")
    specs, _ = specs_of(tmp_path, layout)
    (spec,) = specs.values()
    assert spec.helpers == () and prepare(spec).modules == {}


def jailed(source: str, modules: dict) -> SandboxedSubmission:
    return SandboxedSubmission("submission.py", source=source, modules=modules)


def test_a_helper_module_is_importable_inside_the_jail():
    source = "from tokens import tokenize\nimport tokens\ndef meteor_score(r, c, **k):\n    return float(len(tokenize(r))) + tokens.BONUS\n"
    with jailed(source, {"tokens": "BONUS = 0.5\ndef tokenize(t):\n    return t.split()\n"}) as box:
        assert box.meteor_score("a b c", "") == 3.5


def test_a_helper_can_never_shadow_the_standard_library_even_if_sent():
    # The trusted side refuses such names; the jail refuses them again, and its finder comes last.
    source = "import os, json\nimport sys\ndef meteor_score(r, c, **k):\n    return 1.0 if hasattr(os, 'getpid') and not hasattr(json, 'owned') else 0.0\n"
    modules = {"os": "owned = True\n", "json": "owned = True\n", "sys": "owned = True\n", "../x": "owned = True\n", "_x": ""}
    with jailed(source, modules) as box:
        assert box.meteor_score("a", "b") == 1.0


def test_a_helper_that_fails_to_import_is_a_load_error_naming_it():
    with pytest.raises(LoadError, match="ZeroDivisionError"):
        jailed("import broken\ndef meteor_score(r, c, **k):\n    return 0.0\n", {"broken": "1 / 0\n"})


def test_a_missing_helper_is_a_load_error_naming_the_module():
    with pytest.raises(LoadError, match="No module named 'absent'"):
        jailed("import absent\ndef meteor_score(r, c, **k):\n    return 0.0\n", {"tokens": "x = 1\n"})


def test_helpers_reach_the_jail_under_debian_python_too(tmp_path):
    """The same import through a venv of Debian's /usr/bin/python3.11 (dist-packages, no site-packages)."""
    venv = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3.11", "-m", "venv", "--without-pip", str(venv)], check=True)
    packages = [p for p in sys.path if p.endswith("-packages") and Path(p).is_dir()]
    kit = str(Path(__file__).resolve().parent.parent)
    (venv / "lib" / "python3.11" / "site-packages" / "kit.pth").write_text(
        "import site; " + "; ".join(f"site.addsitedir({p!r})" for p in [*packages, kit]) + "\n"
    )
    script = (
        "import json, sys\n"
        "from grader.sandbox.host import SandboxedSubmission, isolation\n"
        "src = 'from tokens import n\\ndef meteor_score(r, c, **k):\\n    return n(r)\\n'\n"
        "with SandboxedSubmission('s.py', source=src, modules={'tokens': 'def n(t):\\n    return float(len(t.split()))\\n', 'os': 'x=1'}) as box:\n"
        "    print(json.dumps([isolation(), sys.base_prefix, box.meteor_score('a b', '')]))\n"
    )
    result = subprocess.run(
        [str(venv / "bin" / "python"), "-c", script], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == ["bubblewrap", "/usr", 2.0]


# ---------------------------------------------------------------- intake over the golden downloads


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_each_golden_download_gives_its_identities_and_files(scenario):
    expected = json.loads((LMS / scenario / "expected.json").read_text())
    specs, _ = specs_of(LMS / scenario / "download")
    assert sorted(specs) == sorted(expected["students"])
    for name, want in expected["students"].items():
        spec = specs[name]
        assert spec.student == want["student"], name
        if "path" in want:
            assert spec.where == want["path"] and not spec.problem, name
        if want.get("status") == "error":
            assert want["message"] in spec.problem, name
        assert (want.get("note", "\0") in spec.note) == ("note" in want), (name, spec.note)
        if want.get("helpers"):
            assert [m for m, _ in spec.helpers if m == "tokens"] == ["tokens"], name


def test_moodle_online_text_folders_are_ignored_with_a_note():
    specs, told = specs_of(LMS / "moodle" / "basic" / "download")
    assert told == ["meteor-kit grade: 1 Moodle online-text folder(s) ignored: onlinetext.html is not code"]
    assert not any("onlinetext" in s.where for s in specs.values())


def test_an_unsure_detection_says_what_it_chose_in_one_line(tmp_path):
    for user in ("ann", "bo"):
        (tmp_path / f"hw1-{user}").mkdir()
        (tmp_path / f"hw1-{user}" / "meteor.py").write_text("def meteor_score(r, c, **k):\n    return 0.0\n")
    specs, told = specs_of(tmp_path)
    assert sorted(specs) == ["ann", "bo"] and len(told) == 1 and "read as a github-classroom download" in told[0]
    specs, told = specs_of(tmp_path, "folder")
    assert sorted(specs) == ["hw1-ann", "hw1-bo"] and told == []


def test_from_overrides_detection_and_odd_entries_become_rows_of_their_own(tmp_path):
    (tmp_path / "a_1_2_meteor.py").write_text("def meteor_score(r, c, **k):\n    return 0.0\n")
    (tmp_path / "stray.py").write_text("def meteor_score(r, c, **k):\n    return 0.0\n")
    specs, _ = specs_of(tmp_path, "canvas")
    assert specs["a"].student["lms_id"] == "1"
    assert specs["stray.py"].student == Identity(layout="canvas", path="stray.py").as_json()
    assert "does not follow the canvas layout" in specs["stray.py"].note


def test_a_plain_folder_is_discovered_as_before_with_a_folder_identity(tmp_path):
    (tmp_path / "alice.py").write_text("x = 1\n")
    (tmp_path / "bob").mkdir()
    (tmp_path / "bob" / "meteor.py").write_text("x = 1\n")
    specs, told = specs_of(tmp_path)
    assert sorted(specs) == ["alice.py", "bob"] and told == []
    assert specs["bob"].student == Identity(layout="folder", path="bob/meteor.py").as_json()


def test_hostile_names_in_a_download_stay_text(tmp_path):
    folder = tmp_path / "Eve\x1b[2J_66_assignsubmission_file_"
    folder.mkdir()
    (folder / "meteor.py").write_text("def meteor_score(r, c, **k):\n    return 0.0\n")
    (tmp_path / "Bo_67_assignsubmission_file_").mkdir()
    (tmp_path / "Bo_67_assignsubmission_file_" / "meteor.py").symlink_to("/etc/shadow")
    specs, _ = specs_of(tmp_path)
    assert specs["Eve\x1b[2J"].student["name"] == "Eve\x1b[2J"  # kept as data; every view escapes it
    assert "symbolic link" in specs["Bo"].problem and specs["Bo"].path is None


def test_the_exercise_can_name_the_file_graded_with_a_glob(kit_root):
    import tomllib

    from grader.core import exercise

    data = tomllib.loads((kit_root / "problem" / "exercise.toml").read_text())
    assert exercise.parse(data).submission_file is None
    assert exercise.parse({**data, "submission": {"file": "meteor*.py"}}).submission_file == "meteor*.py"


def test_the_exercise_glob_picks_the_file_in_a_download(tmp_path):
    folder = tmp_path / "Ann Lee_12_assignsubmission_file_"
    folder.mkdir()
    for name in ("draft.py", "meteor_final.py"):
        (folder / name).write_text("def meteor_score(r, c, alpha=0.9, beta=3, gamma=0.5):\n    return 0.0\n")
    specs, _ = specs_of(tmp_path)
    assert specs["Ann Lee"].where.endswith("draft.py") and "2 files define" in specs["Ann Lee"].note
    specs, _ = specs_of(tmp_path, glob="meteor*.py")
    assert specs["Ann Lee"].where.endswith("meteor_final.py") and specs["Ann Lee"].note == ""


def test_one_student_naming_a_file_as_another_lms_does_does_not_change_the_layout_of_the_download(tmp_path):
    code = "def meteor_score(r, c, **k):\n    return 0.0\n"
    for login, number in (("ann", 11), ("bo", 12), ("cy", 13)):
        (tmp_path / f"{login}_{number}_9{number}_meteor.py").write_text(code)
    (tmp_path / "eve_14_914_x_5_assignsubmission_file_y.py").write_text(code)  # a Moodle name, inside a Canvas one
    specs, _ = specs_of(tmp_path)
    assert all(s.student["layout"] == "canvas" for s in specs.values())
    assert specs["ann"].student["lms_id"] == "11" and "eve" in specs
