"""Writes the golden LMS downloads under tests/lms/<layout>/<scenario>/download/ (run once; the files are committed).

Every name, id and address is invented, laid out as each LMS documents its download; the code
comes from tests/catalogue/. Each scenario's expected.json says who each submission belongs to.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent
CATALOGUE = HERE.parent / "catalogue"
CORRECT = (CATALOGUE / "correct" / "functional.py").read_text()
COUNTER = (CATALOGUE / "correct" / "counter_based.py").read_text()
NO_LOWER = (CATALOGUE / "wrong" / "no_lowercase.py").read_text()
NO_ROUND = (CATALOGUE / "wrong" / "two_decimals.py").read_text()
# A correct solution split in two: the graded file imports its helper module.
TOKENS = '"""Helper module: the tokens of a text."""\n\n\ndef tokenize(text):\n    return text.lower().split()\n'
USES_TOKENS = CORRECT.replace("from itertools import groupby\n", "from itertools import groupby\n\nfrom tokens import tokenize\n").replace(
    "ref, cand = (text.lower().split() for text in (reference, candidate))", "ref, cand = tokenize(reference), tokenize(candidate)")
STUDENT_TEST = "from meteor import meteor_score\n\n\ndef test_identical():\n    assert meteor_score('a b', 'a b') > 0.9\n"
STUB_TEST = "def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n    return 1.0  # a test double\n"
README = "# METEOR assignment\n\nImplement meteor_score in meteor.py.\n"
WORKFLOW = "name: GitHub Classroom Workflow\non: [push]\njobs:\n  build:\n    runs-on: ubuntu-latest\n"


def student(name=None, lms_id=None, login=None, email=None, late=None, submitted_at=None, layout="folder", path=None):
    return {"name": name, "lms_id": lms_id, "login": login, "email": email, "late": late,
            "submitted_at": submitted_at, "layout": layout, "path": path}


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)


def scenario(layout: str, name: str, files: dict, expected: dict) -> None:
    folder = HERE / layout / name
    shutil.rmtree(folder, ignore_errors=True)
    write(folder / "download", files)
    (folder / "expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")


def canvas() -> None:
    files = {
        "martinezbob_LATE_23456_678902_meteor.py": CORRECT,
        "leeanna_11111_600001_meteor.py": NO_LOWER,
        "leeanna_11111_600001_meteor-1.py": NO_ROUND,
        "leeanna_11111_600001_meteor-2.py": COUNTER,
        "chenwei_22222_600002_solution.py": USES_TOKENS,
        "chenwei_22222_600002_tokens.py": TOKENS,
        "chenwei_22222_600002_test_meteor.py": STUB_TEST,
        "okaforjo_33333_600003_a.py": NO_LOWER,
        "okaforjo_33333_600003_b.py": CORRECT,
        "nkeyssam_44444_600004_meteor.zip": b"PK\x05\x06" + bytes(18),
    }
    expected = {
        "layout": "canvas",
        "students": {
            "martinezbob": {"student": student(login="martinezbob", lms_id="23456", late=True, layout="canvas",
                                               path="martinezbob_LATE_23456_678902_meteor.py"),
                            "path": "martinezbob_LATE_23456_678902_meteor.py", "full_marks": True},
            "leeanna": {"student": student(login="leeanna", lms_id="11111", late=False, layout="canvas",
                                           path="leeanna_11111_600001_meteor-2.py"),
                        "path": "leeanna_11111_600001_meteor-2.py", "full_marks": True},
            "chenwei": {"student": student(login="chenwei", lms_id="22222", late=False, layout="canvas",
                                           path="chenwei_22222_600002_solution.py"),
                        "path": "chenwei_22222_600002_solution.py", "full_marks": True, "helpers": True},
            "okaforjo": {"student": student(login="okaforjo", lms_id="33333", late=False, layout="canvas",
                                            path="okaforjo_33333_600003_a.py"),
                         "path": "okaforjo_33333_600003_a.py", "note": "2 files define meteor_score"},
            "nkeyssam": {"student": student(login="nkeyssam", lms_id="44444", late=False, layout="canvas",
                                            path="nkeyssam_44444_600004_meteor.zip"),
                         "status": "error", "message": "archives inside the download are not opened"},
        },
    }
    scenario("canvas", "basic", files, expected)


def moodle() -> None:
    files = {
        "Bob Martinez_123456_assignsubmission_file_/meteor.py": CORRECT,
        "Bob Martinez_123456_assignsubmission_file_/test_meteor.py": STUDENT_TEST,
        "Anna Lee_123457_assignsubmission_file_/solution.py": USES_TOKENS,
        "Anna Lee_123457_assignsubmission_file_/tokens.py": TOKENS,
        "Anna Lee_123457_assignsubmission_onlinetext_/onlinetext.html": "<p>I used a helper module.</p>\n",
        "Wei Chen_123458_assignsubmission_file_/notes.txt": "I could not finish.\n",
        "Alex Kim_123459_assignsubmission_file_/meteor.py": NO_LOWER,
        "Alex Kim_123460_assignsubmission_file_/work/meteor.py": COUNTER,
        "José Núñez_123461_assignsubmission_file_/meteor.py": NO_ROUND,
    }

    def m(name, pid, folder_path=None):
        return student(name=name, lms_id=pid, layout="moodle", path=folder_path or f"{name}_{pid}_assignsubmission_file_")

    expected = {
        "layout": "moodle",
        "students": {
            "Bob Martinez": {"student": m("Bob Martinez", "123456"),
                             "path": "Bob Martinez_123456_assignsubmission_file_/meteor.py", "full_marks": True},
            "Anna Lee": {"student": m("Anna Lee", "123457"), "helpers": True, "full_marks": True,
                         "path": "Anna Lee_123457_assignsubmission_file_/solution.py"},
            "Wei Chen": {"student": m("Wei Chen", "123458"), "status": "error", "message": "no .py or .ipynb file"},
            "Alex Kim (123459)": {"student": m("Alex Kim", "123459"),
                                  "path": "Alex Kim_123459_assignsubmission_file_/meteor.py"},
            "Alex Kim (123460)": {"student": m("Alex Kim", "123460"), "full_marks": True,
                                  "path": "Alex Kim_123460_assignsubmission_file_/work/meteor.py"},
            "José Núñez": {"student": m("José Núñez", "123461"),
                           "path": "José Núñez_123461_assignsubmission_file_/meteor.py"},
        },
    }
    scenario("moodle", "basic", files, expected)


METADATA = """\
submission_111111:
  :submitters:
  - :name: Priya Raman
    :sid: '2001'
    :email: priya@example.edu
  :created_at: 2026-10-01 09:15:02.123456000 -07:00
  :score: 0.0
  :status: processed
submission_222222:
  :submitters:
  - :name: Tom Weber
    :sid: '2002'
    :email: tom@example.edu
  :created_at: 2026-10-02 23:59:59.000000000 -07:00
  :results: !ruby/hash:ActiveSupport::HashWithIndifferentAccess
    score: 0.0
    tests: []
submission_333333:
  :submitters:
  - :name: Ada Obi
    :sid: '2003'
    :email: ada@example.edu
  - :name: Li Wu
    :sid: '2004'
    :email: li@example.edu
  :created_at: 2026-10-03 08:00:00.000000000 -07:00
"""


def gradescope() -> None:
    files = {
        "submission_metadata.yml": METADATA,
        "submission_111111/meteor.py": CORRECT,
        "submission_222222/solution.py": USES_TOKENS,
        "submission_222222/tokens.py": TOKENS,
        "submission_333333/meteor.py": NO_LOWER,
        "submission_333333/README.md": "Our group's work.\n",
    }
    expected = {
        "layout": "gradescope",
        "students": {
            "Priya Raman": {"student": student(name="Priya Raman", lms_id="2001", email="priya@example.edu", layout="gradescope",
                                               submitted_at="2026-10-01T09:15:02.123456-07:00", path="submission_111111"),
                            "path": "submission_111111/meteor.py", "full_marks": True},
            "Tom Weber": {"student": student(name="Tom Weber", lms_id="2002", email="tom@example.edu", layout="gradescope",
                                             submitted_at="2026-10-02T23:59:59-07:00", path="submission_222222"),
                          "path": "submission_222222/solution.py", "full_marks": True, "helpers": True},
            "Ada Obi, Li Wu": {"student": student(name="Ada Obi, Li Wu", lms_id="2003, 2004",
                                                  email="ada@example.edu, li@example.edu", layout="gradescope",
                                                  submitted_at="2026-10-03T08:00:00-07:00", path="submission_333333"),
                               "path": "submission_333333/meteor.py"},
        },
    }
    scenario("gradescope", "basic", files, expected)


def github_classroom() -> None:
    files = {
        "meteor-submissions/meteor-alice-w/README.md": README,
        "meteor-submissions/meteor-alice-w/.github/workflows/classroom.yml": WORKFLOW,
        "meteor-submissions/meteor-alice-w/tests/test_meteor.py": STUDENT_TEST,
        "meteor-submissions/meteor-alice-w/meteor.py": CORRECT,
        "meteor-submissions/meteor-bkowalski/README.md": README,
        "meteor-submissions/meteor-bkowalski/setup.py": "from setuptools import setup\nsetup(name='meteor')\n",
        "meteor-submissions/meteor-bkowalski/src/meteor.py": NO_LOWER,
        "meteor-submissions/meteor-carol99/README.md": README,
        "meteor-submissions/meteor-carol99/meteor.py": USES_TOKENS,
        "meteor-submissions/meteor-carol99/tokens.py": TOKENS,
        "meteor-submissions/meteor-carol99/conftest.py": "import pytest\n",
        "meteor-submissions/meteor-carol99/test_meteor.py": STUB_TEST,
    }

    def g(user):
        return student(login=user, layout="github-classroom", path=f"meteor-submissions/meteor-{user}")

    expected = {
        "layout": "github-classroom",
        "students": {
            "alice-w": {"student": g("alice-w"), "path": "meteor-submissions/meteor-alice-w/meteor.py", "full_marks": True},
            "bkowalski": {"student": g("bkowalski"), "path": "meteor-submissions/meteor-bkowalski/src/meteor.py"},
            "carol99": {"student": g("carol99"), "path": "meteor-submissions/meteor-carol99/meteor.py",
                        "full_marks": True, "helpers": True},
        },
    }
    scenario("github-classroom", "basic", files, expected)


# ---------------------------------------------------------------- identities that cannot be stolen
# Each scenario is an attack on whose a file is: a name or a file name that holds another
# student's id, two submissions that claim one student. `"status": "error"` rows are graded for
# nobody; `"wrong": true` rows must not get full marks (the impostor's file is not the victim's).


def refused(student_fields: dict, message: str) -> dict:
    return {"student": student_fields, "status": "error", "message": message}


def moodle_impostors() -> None:
    files = {
        "Bob Martinez_123456_assignsubmission_file_meteor.py": CORRECT,
        # Eve's full name holds Bob's id: Moodle would write spaces for her underscores, a forged download does not.
        "Eve_123456_assignsubmission_file_777_900_assignsubmission_file_meteor.py": NO_LOWER,
        # Mal's file name holds Bob's id.
        "Mal Ory_901_assignsubmission_file_x_123456_assignsubmission_file_meteor.py": NO_ROUND,
        # Either id could be Zed's, and no other file says which: nobody's.
        "Zed Doe_902_assignsubmission_file_y_555_assignsubmission_file_meteor.py": CORRECT,
    }

    def m(name, pid, file):
        return student(name=name, lms_id=pid, layout="moodle", path=file)

    zed = "Zed Doe_902_assignsubmission_file_y_555_assignsubmission_file_meteor.py"
    expected = {
        "layout": "moodle",
        "students": {
            "Bob Martinez": {"student": m("Bob Martinez", "123456", "Bob Martinez_123456_assignsubmission_file_meteor.py"),
                             "path": "Bob Martinez_123456_assignsubmission_file_meteor.py", "full_marks": True},
            "Eve_123456_assignsubmission_file_777": {
                "student": m("Eve_123456_assignsubmission_file_777", "900",
                             "Eve_123456_assignsubmission_file_777_900_assignsubmission_file_meteor.py"),
                "path": "Eve_123456_assignsubmission_file_777_900_assignsubmission_file_meteor.py", "wrong": True},
            "Mal Ory": {"student": m("Mal Ory", "901", "Mal Ory_901_assignsubmission_file_x_123456_assignsubmission_file_meteor.py"),
                        "path": "Mal Ory_901_assignsubmission_file_x_123456_assignsubmission_file_meteor.py", "wrong": True},
            zed: refused(student(layout="moodle", path=zed), "can be read as more than one student's (participant 555, 902)"),
        },
    }
    scenario("moodle", "impostors", files, expected)


def moodle_two_claims() -> None:
    files = {
        "Bob Martinez_123456_assignsubmission_file_/meteor.py": CORRECT,
        "Eve Adams_123456_assignsubmission_file_/meteor.py": NO_LOWER,
        # A folder's id is the one at its end, whatever the name before it holds.
        "Eve_123456_assignsubmission_file_777_900_assignsubmission_file_/meteor.py": NO_ROUND,
        "Ann Lee_123457_assignsubmission_file_/meteor.py": CORRECT,
    }

    def m(name, pid):
        return student(name=name, lms_id=pid, layout="moodle", path=f"{name}_{pid}_assignsubmission_file_")

    claim = "2 submissions claim participant 123456 (Bob Martinez, Eve Adams): none of them is graded"
    expected = {
        "layout": "moodle",
        "students": {
            "Bob Martinez": refused(m("Bob Martinez", "123456"), claim),
            "Eve Adams": refused(m("Eve Adams", "123456"), claim),
            "Eve_123456_assignsubmission_file_777": {
                "student": m("Eve_123456_assignsubmission_file_777", "900"), "wrong": True,
                "path": "Eve_123456_assignsubmission_file_777_900_assignsubmission_file_/meteor.py"},
            "Ann Lee": {"student": m("Ann Lee", "123457"), "full_marks": True,
                        "path": "Ann Lee_123457_assignsubmission_file_/meteor.py"},
        },
    }
    scenario("moodle", "two-claims", files, expected)


def canvas_impostors() -> None:
    files = {
        "martinezbob_23456_678902_meteor.py": CORRECT,
        # Eve's original file name holds Bob's user id.
        "eve_901_556_x_23456_7_meteor.py": NO_LOWER,
        # Mal's login holds it.
        "mal_23456_1_x_902_557_meteor.py": NO_ROUND,
        # Two files claim user 33333 under two logins.
        "okaforjo_33333_600003_meteor.py": CORRECT,
        "imposter_33333_600009_meteor.py": NO_LOWER,
        # Either id could be Zed's, and no other file says which.
        "zed_44444_1_solution_55555_2_meteor.py": CORRECT,
    }

    def c(login, user, file):
        return student(login=login, lms_id=user, late=False, layout="canvas", path=file)

    claim = "2 submissions claim Canvas user id 33333 (imposter, okaforjo): none of them is graded"
    zed = "zed_44444_1_solution_55555_2_meteor.py"
    expected = {
        "layout": "canvas",
        "students": {
            "martinezbob": {"student": c("martinezbob", "23456", "martinezbob_23456_678902_meteor.py"),
                            "path": "martinezbob_23456_678902_meteor.py", "full_marks": True},
            "eve": {"student": c("eve", "901", "eve_901_556_x_23456_7_meteor.py"),
                    "path": "eve_901_556_x_23456_7_meteor.py", "wrong": True},
            "mal_23456_1_x": {"student": c("mal_23456_1_x", "902", "mal_23456_1_x_902_557_meteor.py"),
                              "path": "mal_23456_1_x_902_557_meteor.py", "wrong": True},
            "okaforjo": refused(c("okaforjo", "33333", "okaforjo_33333_600003_meteor.py"), claim),
            "imposter": refused(c("imposter", "33333", "imposter_33333_600009_meteor.py"), claim),
            zed: refused(student(layout="canvas", path=zed), "can be read as more than one student's (user id 44444, 55555)"),
        },
    }
    scenario("canvas", "impostors", files, expected)


TWO_CLAIMS_METADATA = """\
submission_111111:
  :submitters:
  - :name: Priya Raman
    :sid: '2001'
    :email: priya@example.edu
submission_222222:
  :submitters:
  - :name: Eve Impostor
    :sid: '2001'
    :email: eve@example.edu
submission_333333:
  :submitters:
  - :name: Tom Weber
    :sid: '2002'
    :email: tom@example.edu
"""


def gradescope_two_claims() -> None:
    files = {
        "submission_metadata.yml": TWO_CLAIMS_METADATA,
        "submission_111111/meteor.py": CORRECT,
        "submission_222222/meteor.py": NO_LOWER,
        "submission_333333/meteor.py": CORRECT,
    }

    def g(name, sid, email, folder):
        return student(name=name, lms_id=sid, email=email, layout="gradescope", path=folder)

    claim = "2 submissions claim student SID 2001 (Eve Impostor, Priya Raman): none of them is graded"
    expected = {
        "layout": "gradescope",
        "students": {
            "Priya Raman": refused(g("Priya Raman", "2001", "priya@example.edu", "submission_111111"), claim),
            "Eve Impostor": refused(g("Eve Impostor", "2001", "eve@example.edu", "submission_222222"), claim),
            "Tom Weber": {"student": g("Tom Weber", "2002", "tom@example.edu", "submission_333333"),
                          "path": "submission_333333/meteor.py", "full_marks": True},
        },
    }
    scenario("gradescope", "two-claims", files, expected)


if __name__ == "__main__":
    canvas()
    moodle()
    gradescope()
    github_classroom()
    moodle_impostors()
    moodle_two_claims()
    canvas_impostors()
    gradescope_two_claims()
