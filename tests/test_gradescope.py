"""The Gradescope autograder: its results format, the choice of upload, and the zip run in Gradescope's layout.

The layout tests rebuild Gradescope's container with bubblewrap: a fresh /autograder, the
system's /usr read-only, no network, root with Docker's default capabilities, apt-get stubbed
and /usr/bin/bwrap replaced by /bin/false (Gradescope's Docker does not let bubblewrap make
namespaces). setup.sh runs there once, then run_autograder once per submission, as Gradescope does.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from lms_results import typed

from grader.cli import autograder
from grader.core import exercise
from grader.judging.grade import Settings, Spec, grade_all
from grader.judging.upload import defines, pick
from grader.reports.gradescope import GRADER_FAILED, to_gradescope

EXERCISE = exercise.load(exercise.KIT_ROOT)
FUNCTION = EXERCISE.function
VISIBILITIES = {"hidden", "after_due_date", "after_published", "visible"}
# Root in Docker keeps these capabilities and no others (no CAP_SYS_ADMIN: no mounts, no namespaces).
DOCKER_CAPS = [
    "CAP_CHOWN",
    "CAP_DAC_OVERRIDE",
    "CAP_FSETID",
    "CAP_FOWNER",
    "CAP_MKNOD",
    "CAP_NET_RAW",
    "CAP_SETGID",
    "CAP_SETUID",
    "CAP_SETFCAP",
    "CAP_SETPCAP",
    "CAP_NET_BIND_SERVICE",
    "CAP_SYS_CHROOT",
    "CAP_KILL",
    "CAP_AUDIT_WRITE",
]

# Finds the kit by its path in Gradescope's layout, or through /proc, and answers with the reference.
CHEAT = """
import glob, importlib.util, os

def _reference():
    paths = ["/autograder/source/solutions/reference.py"]
    paths += [os.path.join(cwd, "solutions", "reference.py") for cwd in glob.glob("/proc/[0-9]*/cwd")]
    paths += glob.glob("/proc/[0-9]*/root/autograder/source/solutions/reference.py")
    for path in paths:
        try:
            spec = importlib.util.spec_from_file_location("stolen", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module.meteor_score
        except Exception:
            continue
    return None

STOLEN = _reference()

def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    return STOLEN(reference, candidate, alpha, beta, gamma) if STOLEN else 0.0
"""

CONSTANT = "def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n    return 0.0\n"

# Puts each input where a report could show it: printed, in a returned string, in an
# exception's text, in the name of a returned object's class.
LEAKER = """
def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    secret = "LEAK<" + repr((reference, candidate, alpha, beta, gamma)) + ">"
    print(secret)
    way = len(reference + candidate) % 3
    if way == 0:
        return secret
    if way == 1:
        raise ValueError(secret)
    return type("LEAK_" + "".join(c for c in reference if c.isalnum()), (), {})()
"""


def check_format(document: dict) -> None:
    """Gradescope's documented results.json: the fields it reads, with their types."""
    assert isinstance(document["score"], (int, float))
    assert isinstance(document["execution_time"], int) and document["execution_time"] >= 0
    assert isinstance(document["output"], str) and document["output"]
    assert document["stdout_visibility"] in VISIBILITIES
    for number, test in enumerate(document["tests"], start=1):
        assert set(test) == {"score", "max_score", "status", "name", "number", "output", "visibility"}
        assert isinstance(test["score"], (int, float)) and isinstance(test["max_score"], (int, float))
        assert 0 <= test["score"] <= test["max_score"]
        assert test["status"] in ("passed", "failed")
        assert test["number"] == str(number) and test["name"] and isinstance(test["output"], str)
        assert test["visibility"] in VISIBILITIES
    assert abs(document["score"] - sum(t["score"] for t in document["tests"])) < 1e-9


def max_score(document: dict) -> float:
    return sum(t["max_score"] for t in document["tests"])


# ---------------------------------------------------------------- the results format


def test_a_result_converts_to_gradescopes_format():
    result = {
        "submission": "a.py",
        "score": 1.0,
        "max_score": 4.0,
        "status": "graded",
        "message": "",
        "passed": 1,
        "duration": 1.4,
        "tests": [
            {"name": "t1", "tier": "examples", "status": "pass", "message": "", "output": "", "score": 1.0, "max_score": 1.0},
            {
                "name": "t2",
                "tier": "private",
                "status": "fail",
                "message": "expected 0.5, got 0.25",
                "output": "hi",
                "score": 0.0,
                "max_score": 3.0,
            },
        ],
    }
    converted = to_gradescope(typed(result), EXERCISE)
    check_format(converted)
    assert converted["score"] == 1.0 and converted["output"] == "1/2 tests passed"
    assert converted["stdout_visibility"] == "hidden"
    assert converted["tests"][1] == {
        "name": "private: t2",
        "number": "2",
        "score": 0.0,
        "max_score": 3.0,
        "status": "failed",
        "output": "expected 0.5, but it returned another number (details are not shown for tests whose input is secret)",
        "visibility": "after_published",
    }


def test_the_diagnosis_follows_the_summary():
    diagnosis = {"mistake": "no_clipping", "message": "Your scores match ...", "text": "Your scores match ... For example, x."}
    document = to_gradescope(typed({"score": 0.0, "message": "", "passed": 0, "tests": [], "diagnosis": diagnosis}), EXERCISE)
    assert document["output"] == "0/0 tests passed\n\nDiagnosis: Your scores match ... For example, x."
    assert (
        to_gradescope(typed({"score": 0.0, "message": "", "passed": 0, "tests": [], "diagnosis": None}), EXERCISE)["output"]
        == "0/0 tests passed"
    )


def test_printed_output_is_shown_for_the_examples_tier_only():
    tests = [
        {
            "name": f"t_{tier}",
            "tier": tier,
            "status": "fail",
            "message": "expected 0.5, got 0.25",
            "output": f"printed in {tier}",
            "score": 0.0,
            "max_score": 1.0,
        }
        for tier in ("examples", "hidden", "properties", "private")
    ]
    converted = to_gradescope(typed({"score": 0.0, "message": "", "passed": 0, "tests": tests}), EXERCISE)
    outputs = {t["name"]: t["output"] for t in converted["tests"]}
    assert outputs["examples: t_examples"] == "expected 0.5, got 0.25\nprinted:\nprinted in examples"
    for tier in ("hidden", "properties", "private"):
        assert "printed" not in outputs[f"{tier}: t_{tier}"]


@pytest.mark.parametrize(
    "message, status, shown",
    [
        (
            "expected 0.5, got 0.25 [rule: Tokens: lowercase each text with str.lower()]",
            "fail",
            "expected 0.5, got 0.25 [rule: Tokens: lowercase each text with str.lower()]",
        ),
        (
            "expected 0.812 or 0.813, got 0.8125 (not rounded to 3 decimals)",
            "fail",
            "expected 0.812 or 0.813, got 0.8125 (not rounded to 3 decimals)",
        ),
        (
            "expected 0.5, but meteor_score returned str 'the cat|a dog'; it must return a float [rule: x]",
            "fail",
            "expected 0.5, but it returned something that is not a float (details are not shown for tests whose input is secret)",
        ),
        (
            "expected 0.5, but raised ValueError: the cat\nTraceback ...\n  the cat",
            "error",
            "expected 0.5, but it raised an exception or crashed (details are not shown for tests whose input is secret)",
        ),
        (
            "meteor_score returned LEAK_thecat; it must return a float",
            "fail",
            "It returned something that is not a float (details are not shown for tests whose input is secret)",
        ),
        (
            "expected 0.5, got 0.25 [rule: x]\nthe cat",
            "fail",
            "expected 0.5, but it returned something that is not a float (details are not shown for tests whose input is secret)",
        ),
    ],
)
def test_a_hidden_tests_message_keeps_only_what_the_grader_wrote(message, status, shown):
    test = {"name": "t", "tier": "hidden", "status": status, "message": message, "output": "", "score": 0.0, "max_score": 2.0}
    assert (
        to_gradescope(typed({"score": 0.0, "message": "", "passed": 0, "tests": [test]}), EXERCISE)["tests"][0]["output"] == shown
    )


@pytest.mark.parametrize(
    "message",
    [
        "expected 0.5, got 0.116104101",  # a number can spell the input: "the"
        "expected 0.5, got 0.25 (not rounded to 3 decimals)",
        "expected 0.5, but raised ValueError: the cat",
    ],
)
def test_a_private_tests_message_keeps_no_value_the_submission_chose(message):
    test = {"name": "t", "tier": "private", "status": "fail", "message": message, "output": "", "score": 0.0, "max_score": 3.0}
    shown = to_gradescope(typed({"score": 0.0, "message": "", "passed": 0, "tests": [test]}), EXERCISE)["tests"][0]["output"]
    assert shown.startswith("expected 0.5, but ") and "0.116" not in shown and "0.25" not in shown and "cat" not in shown


def test_no_hidden_or_private_input_reaches_gradescope_from_a_leaking_submission(tmp_path):
    path = tmp_path / "leaker.py"
    path.write_text(LEAKER)
    ex = EXERCISE
    result = grade_all([Spec("leaker.py", path)], Settings(ex, ex.call_timeout, ex.budget), jobs=1)[0]
    # The leak is really there before conversion, so the test below can fail.
    assert any("LEAK" in t["message"] + t["output"] for t in result["tests"] if t["tier"] in ("hidden", "private"))
    document = to_gradescope(typed(result), EXERCISE)
    check_format(document)
    for test in document["tests"]:
        tier = test["name"].split(":")[0]
        if tier in ("hidden", "private"):
            assert "LEAK" not in test["output"], test
        if tier != "examples":
            assert "printed" not in test["output"], test
    assert any("printed:\nLEAK<" in t["output"] for t in document["tests"] if t["name"].startswith("examples:"))


@pytest.mark.parametrize(
    "message",
    [
        "the test run itself failed (pytest exit 3): INTERNALERROR> ... CASES = [('hush-42', ...)]",
        "the grader failed on this submission (KeyError: 'hush-42'); grade it again or alone with meteor-kit check",
    ],
)
def test_a_grader_failure_shows_the_student_no_detail(message):
    tests = [
        {"name": "t", "tier": tier, "status": "not_run", "message": message, "output": "", "score": 0.0, "max_score": 1.0}
        for tier in ("examples", "hidden", "properties", "private")
    ]
    document = to_gradescope(typed({"score": 0.0, "passed": 0, "tests": tests, "message": message}), EXERCISE)
    assert "hush-42" not in json.dumps(document)
    assert document["output"] == GRADER_FAILED and {t["output"] for t in document["tests"]} == {GRADER_FAILED}


def test_strings_are_valid_utf8_without_control_characters():
    test = {
        "name": "t\x1b[2J",
        "tier": "examples",
        "status": "fail",
        "message": "bad \udc80 \x07",
        "output": "\x1b]0;title\x07",
        "score": 0.0,
        "max_score": 1.0,
    }
    document = to_gradescope(typed({"score": 0.0, "message": "", "passed": 0, "tests": [test]}), EXERCISE)
    text = json.dumps(document, ensure_ascii=False)
    text.encode("utf-8")  # raises on a lone surrogate
    assert "\x1b" not in text and "\x07" not in text


# ---------------------------------------------------------------- which upload is graded


def _specs(folder: Path, files: dict[str, str | bytes]) -> list[Spec]:
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return [Spec(name, folder / name) for name in sorted(files)]


def test_the_upload_that_defines_the_function_is_graded_whatever_its_name(tmp_path):
    specs = _specs(tmp_path, {"meteor_notes.py": "NOTES = 1\n", "solution.py": CONSTANT, "util/helpers.py": "x = 2\n"})
    spec, problem, _ = pick(specs, FUNCTION, tmp_path)
    assert spec.path == tmp_path / "solution.py" and problem == ""


def test_several_uploads_defining_the_function_are_refused_with_their_names(tmp_path):
    specs = _specs(tmp_path, {"a.py": CONSTANT, "b.py": CONSTANT, "c.py": "x = 1\n"})
    spec, problem, _ = pick(specs, FUNCTION, tmp_path)
    assert spec is None and f"Several of your files define {FUNCTION}: a.py, b.py" in problem


def test_uploads_none_of_which_defines_the_function_are_refused_with_their_names(tmp_path):
    specs = _specs(tmp_path, {"a.py": "x = 1\n", "b.py": "def meteor(): pass\n"})
    spec, problem, _ = pick(specs, FUNCTION, tmp_path)
    assert spec is None and f"None of your files defines {FUNCTION} (found: a.py, b.py)" in problem


def test_a_students_own_test_file_importing_the_function_is_not_a_second_definition(tmp_path):
    specs = _specs(tmp_path, {"meteor.py": CONSTANT, "test_meteor.py": "from meteor import meteor_score\n"})
    spec, problem, _ = pick(specs, FUNCTION, tmp_path)
    assert spec.path == tmp_path / "meteor.py" and problem == ""


def test_a_lone_upload_is_graded_even_without_the_function(tmp_path):
    specs = _specs(tmp_path, {"a.py": "x = 1\n"})
    assert pick(specs, FUNCTION, tmp_path) == (specs[0], "", [])


def test_definitions_are_found_as_cpython_reads_the_file(tmp_path):
    bom = b"\xef\xbb\xbf" + CONSTANT.replace("\n", "\r\n").encode()
    latin = b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + CONSTANT.encode()
    notebook = json.dumps(
        {
            "cells": [{"cell_type": "code", "source": ["%timeit 1\n", CONSTANT]}],
            "metadata": {},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )
    broken = CONSTANT + "    return (\n"
    specs = _specs(
        tmp_path,
        {
            "bom.py": bom,
            "latin.py": latin,
            "nb.ipynb": notebook,
            "broken.py": broken,
            "imported.py": "from x import meteor_score\n",
            "nested.py": "if True:\n    def meteor_score(r, c): return 0.0\n",
            "inner.py": "def f():\n    def meteor_score(r, c): return 0.0\n",
            "comment.py": "# def meteor_score(r, c)\nx = 'def meteor_score'\n",
        },
    )
    found = {s.name for s in specs if defines(s.path, FUNCTION)}
    assert found == {"bom.py", "latin.py", "nb.ipynb", "broken.py", "nested.py"}


def test_a_link_or_a_fifo_is_never_read_to_find_the_function(tmp_path):
    target = tmp_path / "real.py"
    target.write_text(CONSTANT)
    (tmp_path / "link.py").symlink_to(target)
    os.mkfifo(tmp_path / "fifo.py")
    assert defines(target, FUNCTION)
    assert not defines(tmp_path / "link.py", FUNCTION)
    assert not defines(tmp_path / "fifo.py", FUNCTION)  # returns at once: a FIFO opened O_NONBLOCK


# Files Python cannot parse, each as `ast.parse` fails on it: MemoryError (the parser's stack),
# RecursionError (building the tree), SyntaxError, ValueError (a NUL byte), and a notebook that is not one.
UNPARSABLE = {
    "memory.py": "x = " + "-" * 100_000 + "1\n",
    "recursion.py": "x = " + "a." * 100_000 + "b\n",
    "parens.py": "x = " + "(" * 300 + ")" * 300 + "\n",
    "syntax.py": "def f(:\n",
    "nul.py": "x = 1\x00\n",
    "notebook.ipynb": "[" * 100_000 + "]" * 100_000,
}


@pytest.mark.parametrize("bad", sorted(UNPARSABLE))
def test_an_upload_python_cannot_parse_is_a_message_about_it_and_the_right_file_is_graded(tmp_path, bad):
    specs = _specs(tmp_path, {"solution.py": CONSTANT, bad: UNPARSABLE[bad]})
    chosen = pick(specs, FUNCTION, tmp_path)
    assert chosen.spec.path == tmp_path / "solution.py" and chosen.problem == ""
    (note,) = chosen.notes
    assert note.startswith(f"{bad} was not considered: ")
    assert ("the notebook" if bad.endswith(".ipynb") else "Python cannot read it") in note


def test_every_upload_that_cannot_be_parsed_is_named_when_none_defines_the_function(tmp_path):
    specs = _specs(tmp_path, {"a.py": "x = 1\n", **UNPARSABLE})
    chosen = pick(specs, FUNCTION, tmp_path)
    assert chosen.spec is None and f"None of your files defines {FUNCTION}" in chosen.problem
    assert sorted(note.split(" ", 1)[0] for note in chosen.notes) == sorted(UNPARSABLE)


def test_a_deeply_nested_second_upload_does_not_fail_the_autograder(tmp_path, kit_root, capsys):
    """Graded in Gradescope's /autograder layout: the file that grades alone grades the same beside it."""
    correct = (kit_root / "solutions" / "reference.py").read_text()
    documents = {}
    for case, files in {"alone": {"meteor.py": correct}, "beside": {"meteor.py": correct, **UNPARSABLE}}.items():
        root = tmp_path / case
        (root / "submission").mkdir(parents=True)
        for name, text in files.items():
            (root / "submission" / name).write_text(text)
        assert autograder.run(root, exercise.KIT_ROOT) == 0
        documents[case] = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
        check_format(documents[case])
    alone, beside = documents["alone"], documents["beside"]
    assert GRADER_FAILED not in beside["output"] and "Traceback" not in capsys.readouterr().out
    assert beside["score"] == alone["score"] == max_score(alone) > 0
    assert beside["output"].startswith("Graded meteor.py.")
    for name in UNPARSABLE:
        assert f"{name} was not considered" in beside["output"]


# ---------------------------------------------------------------- the zip in Gradescope's layout


@pytest.fixture(scope="module")
def archive(tmp_path_factory, meteor_kit) -> Path:
    path = tmp_path_factory.mktemp("export") / "autograder.zip"
    run = subprocess.run([str(meteor_kit), "export-gradescope", "--out", str(path)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return path


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory, archive) -> Path:
    return wheels_for(archive, tmp_path_factory.mktemp("wheelhouse"))


def wheels_for(archive: Path, folder: Path) -> Path:
    """The autograder's pinned requirements as wheels in `folder`, so setup.sh's pip runs without a network."""
    with zipfile.ZipFile(archive) as zf:
        (folder / "requirements.txt").write_bytes(zf.read("requirements.txt"))
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--only-binary=:all:",
            "-d",
            str(folder),
            "-r",
            str(folder / "requirements.txt"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    return folder


IN_THE_CONTAINER = "Gradescope runs setup.sh and run_autograder as root, in a container rebuilt here"


def container(autograder: Path, wheelhouse: Path, logs: Path, *command: str) -> subprocess.CompletedProcess:
    """`command` as Gradescope runs it: root in a Docker-like container whose /autograder is `autograder`."""
    assert shutil.which("bwrap"), "bubblewrap rebuilds Gradescope's container here: apt-get install bubblewrap"
    assert os.geteuid() == 0, "Gradescope runs setup.sh and run_autograder as root: run this test as root"
    stubs = logs / "stubs"
    stubs.mkdir(exist_ok=True)
    for name in ("apt-get", "add-apt-repository"):
        (stubs / name).write_text(f'#!/bin/sh\necho "{name} $*" >> /logs/apt.log\nexit 0\n')
        (stubs / name).chmod(0o755)
    caps = [arg for cap in DOCKER_CAPS for arg in ("--cap-add", cap)]
    argv = [
        shutil.which("bwrap"),
        "--ro-bind",
        "/usr",
        "/usr",
        "--ro-bind",
        "/etc",
        "/etc",
        *[arg for link in ("bin", "sbin", "lib", "lib64") for arg in ("--symlink", f"usr/{link}", f"/{link}")],
        "--ro-bind",
        "/bin/false",
        "/usr/bin/bwrap",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
        "--tmpfs",
        "/var",
        "--tmpfs",
        "/root",
        "--bind",
        str(autograder),
        "/autograder",
        "--ro-bind",
        str(wheelhouse),
        "/wheelhouse",
        "--bind",
        str(logs),
        "/logs",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-net",
        "--unshare-uts",
        "--die-with-parent",
        "--cap-drop",
        "ALL",
        *caps,
        "--clearenv",
        "--setenv",
        "PATH",
        "/logs/stubs:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "--setenv",
        "HOME",
        "/root",
        "--setenv",
        "LANG",
        "C.UTF-8",
        "--setenv",
        "PIP_NO_INDEX",
        "1",
        "--setenv",
        "PIP_FIND_LINKS",
        "/wheelhouse",
        "--chdir",
        "/autograder",
        "--",
        *command,
    ]
    return subprocess.run(argv, capture_output=True, text=True, timeout=900)


def unzip(archive: Path, folder: Path) -> None:
    """Unpack as unzip does: with the modes the zip records."""
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            zf.extract(info, folder)
            mode = info.external_attr >> 16 & 0o777
            if mode and not info.is_dir():
                (folder / info.filename).chmod(mode)


@pytest.fixture(scope="module")
def built(tmp_path_factory, archive, wheelhouse) -> tuple[Path, Path]:
    return build_image(archive, wheelhouse, tmp_path_factory.mktemp("gradescope"))


def build_image(archive: Path, wheelhouse: Path, base: Path) -> tuple[Path, Path]:
    """/autograder after Gradescope's image build (in `base`): the zip at source/, setup.sh run there; and its logs."""
    autograder, logs = base / "autograder", base / "logs"
    logs.mkdir()
    unzip(archive, autograder / "source")
    run = container(autograder, wheelhouse, logs, "bash", "-c", "cd /autograder/source && bash ./setup.sh")
    assert run.returncode == 0, run.stdout + run.stderr
    apt = (logs / "apt.log").read_text()
    assert "apt-get install" in apt and "python3.11" in apt
    # Gradescope copies run_autograder next to source/ and runs it from there.
    shutil.copy2(autograder / "source" / "run_autograder", autograder / "run_autograder")
    return autograder, logs


def run_autograder(built, wheelhouse, files: dict[str, str]) -> dict:
    autograder, logs = built
    for folder in ("submission", "results"):
        shutil.rmtree(autograder / folder, ignore_errors=True)
    (autograder / "submission").mkdir()
    for name, text in files.items():
        (autograder / "submission" / name).write_text(text)
    run = container(autograder, wheelhouse, logs, "/autograder/run_autograder")
    assert run.returncode == 0, run.stdout + run.stderr
    document = json.loads((autograder / "results" / "results.json").read_text(encoding="utf-8"))
    return document


@pytest.mark.pinned_hypothesis
def test_the_zip_holds_the_kit_at_its_root_with_executable_scripts(archive):
    with zipfile.ZipFile(archive) as zf:
        names = set(zf.namelist())
        assert {
            "setup.sh",
            "run_autograder",
            "requirements.txt",
            "grader/judging/grade.py",
            "grader/sandbox/child.py",
            "problem/exercise.toml",
            "hidden_tests/test_private.py",
            "solutions/reference.py",
        } <= names
        assert not any(name.startswith("source/") for name in names)
        for script in ("setup.sh", "run_autograder"):
            assert zf.getinfo(script).external_attr >> 16 & stat.S_IXUSR
        pins = zf.read("requirements.txt").decode().split()
    assert "pytest==9.0.3" in pins and "hypothesis==6.155.2" in pins
    assert all("==" in pin for pin in pins)


def test_the_export_refuses_an_environment_without_the_pinned_versions(tmp_path, monkeypatch):
    from importlib import metadata

    monkeypatch.setattr(metadata, "version", lambda name: "0.0.1")
    with pytest.raises(autograder.ExportError, match=r"0\.0\.1 is installed, but the kit needs [\w.-]+=="):
        autograder.export(tmp_path / "autograder.zip", EXERCISE)
    assert not (tmp_path / "autograder.zip").exists()


@pytest.mark.pinned_hypothesis
@pytest.mark.needs_root(IN_THE_CONTAINER)
def test_setup_leaves_the_kit_readable_by_root_only(built):
    autograder, _ = built
    source = autograder / "source"
    assert not source.stat().st_mode & 0o004 and not (source / "grader").stat().st_mode & 0o004
    for secret in ("solutions/reference.py", "hidden_tests/test_private.py", "solutions/misconceptions.py"):
        assert not (source / secret).stat().st_mode & 0o077, secret
    assert (autograder / "venv" / "bin" / "python").exists()


@pytest.mark.pinned_hypothesis
@pytest.mark.needs_root(IN_THE_CONTAINER)
def test_a_correct_upload_gets_full_marks_beside_a_decoy_named_meteor(built, wheelhouse, kit_root):
    reference = (kit_root / "solutions" / "reference.py").read_text()
    document = run_autograder(built, wheelhouse, {"solution.py": reference, "meteor_notes.py": "NOTES = 'draft'\n"})
    check_format(document)
    assert document["tests"] and all(t["status"] == "passed" for t in document["tests"])
    assert document["score"] == max_score(document) > 0
    assert document["output"].startswith("Graded solution.py.")


@pytest.mark.pinned_hypothesis
@pytest.mark.needs_root(IN_THE_CONTAINER)
def test_a_wrong_upload_gets_partial_marks(built, wheelhouse, kit_root):
    wrong = (kit_root / "solutions" / "reference.py").read_text().replace("candidate.lower()", "candidate")
    document = run_autograder(built, wheelhouse, {"meteor.py": wrong})
    check_format(document)
    assert 0 < document["score"] < max_score(document)
    failed = [t["name"] for t in document["tests"] if t["status"] == "failed"]
    assert "hidden: test_rule[uppercase_candidate]" in failed
    assert "\n\nDiagnosis: " in document["output"] and "lower" in document["output"].split("Diagnosis: ")[1]
    assert {t["visibility"] for t in document["tests"]} == {"visible", "after_published"}


def test_the_cheat_answers_right_wherever_it_can_read_the_kit(reference):
    scope: dict = {}
    exec(compile(CHEAT, "cheat.py", "exec"), scope)  # this process's cwd is the kit: /proc leads the cheat to it
    assert scope["STOLEN"] is not None
    assert scope["meteor_score"]("the cat sat", "The cat sat") == reference.meteor_score("the cat sat", "The cat sat") > 0


@pytest.mark.pinned_hypothesis
@pytest.mark.needs_root(IN_THE_CONTAINER)
def test_a_cheat_reading_the_kit_scores_no_more_than_a_constant(built, wheelhouse):
    constant = run_autograder(built, wheelhouse, {"meteor.py": CONSTANT})
    cheat = run_autograder(built, wheelhouse, {"meteor.py": CHEAT})
    for document in (constant, cheat):  # both really graded: a grader failure scores 0 too
        check_format(document)
        assert document["tests"] and GRADER_FAILED not in document["output"]
    assert any(t["status"] == "passed" for t in constant["tests"])  # 0.0 is right where nothing matches
    assert cheat["score"] <= constant["score"] < max_score(cheat)


@pytest.mark.pinned_hypothesis
@pytest.mark.needs_root(IN_THE_CONTAINER)
def test_an_empty_upload_is_explained(built, wheelhouse):
    document = run_autograder(built, wheelhouse, {})
    check_format(document)
    assert document["score"] == 0 and "Upload one .py or .ipynb file" in document["output"]


@pytest.mark.pinned_hypothesis
@pytest.mark.needs_root(IN_THE_CONTAINER)
def test_two_uploads_defining_the_function_are_explained(built, wheelhouse):
    document = run_autograder(built, wheelhouse, {"a.py": CONSTANT, "b.py": CONSTANT})
    check_format(document)
    assert document["score"] == 0 and "Several of your files define meteor_score: a.py, b.py" in document["output"]


@pytest.mark.pinned_hypothesis
@pytest.mark.needs_root(IN_THE_CONTAINER)
def test_an_upload_nested_too_deeply_beside_the_solution_is_explained_in_the_container(built, wheelhouse, kit_root):
    correct = (kit_root / "solutions" / "reference.py").read_text()
    document = run_autograder(built, wheelhouse, {"meteor.py": correct, "memory.py": UNPARSABLE["memory.py"]})
    check_format(document)
    assert document["score"] == max_score(document) > 0
    assert "memory.py was not considered: Python cannot read it (its code is nested too deeply)" in document["output"]


def test_results_json_is_written_even_when_the_grader_itself_fails(tmp_path, monkeypatch, capsys):
    def broken(root, ex):
        raise RuntimeError("grader bug")

    monkeypatch.setattr(autograder, "_grade", broken)
    assert autograder.run(tmp_path, exercise.KIT_ROOT) == 0
    document = json.loads((tmp_path / "results" / "results.json").read_text())
    check_format(document)
    assert document["score"] == 0 and "autograder failed" in document["output"]
    assert "RuntimeError: grader bug" in capsys.readouterr().out  # for the instructor, on hidden stdout


@pytest.mark.pinned_hypothesis
@pytest.mark.needs_root(IN_THE_CONTAINER)
def test_nothing_grading_writes_is_readable_by_the_submissions_uid(built, wheelhouse, kit_root):
    autograder, _ = built
    wrong = (kit_root / "solutions" / "reference.py").read_text().replace("candidate.lower()", "candidate")
    run_autograder(built, wheelhouse, {"meteor.py": wrong})  # runs hypothesis, the diagnosis, the private tier

    def reachable(path: Path) -> bool:  # every folder above it lets others through
        return all(parent.stat().st_mode & 0o001 for parent in path.parents if autograder in parent.parents)

    readable = []
    sandbox = autograder / "source" / "grader" / "sandbox"  # the jail's script and the module it imports
    for folder in (autograder / "source", autograder / "hypothesis"):
        for path in [folder, *folder.rglob("*")]:
            if path in (sandbox / "child.py", sandbox / "wire.py") or not reachable(path):
                continue
            if path.lstat().st_mode & 0o004:  # a file others can read, a folder others can list
                readable.append(f"{oct(path.lstat().st_mode & 0o777)} {path.relative_to(autograder)}")
    assert not readable
    assert reachable(autograder / "source" / "grader" / "sandbox" / "child.py")  # the check can see a reachable file


def test_an_upload_whose_name_is_not_utf8_is_graded_and_named_safely(tmp_path, capsys):
    folder = tmp_path / "submission"
    folder.mkdir()
    with open(os.path.join(os.fsencode(folder), b"caf\xe9.py"), "w") as f:
        f.write(CONSTANT)
    (folder / "notes.py").write_text("NOTES = 1\n")
    assert autograder.run(tmp_path, exercise.KIT_ROOT) == 0
    document = json.loads((tmp_path / "results" / "results.json").read_text(encoding="utf-8"))
    check_format(document)
    assert document["tests"] and document["output"].startswith("Graded caf\ufffd.py.")


def test_clean_replaces_exactly_the_control_and_surrogate_code_points():
    # Every code point of Unicode, against the definition: categories Cc and Cs, newline and tab kept.
    import sys
    import unicodedata

    from grader.reports.gradescope import clean

    every = "".join(chr(i) for i in range(sys.maxunicode + 1))
    expected = "".join(c if c in "\n\t" or unicodedata.category(c) not in ("Cc", "Cs") else "\ufffd" for c in every)
    assert clean(every) == expected
    assert clean("a\x00b\ud800c\n\td\x85") == "a\ufffdb\ufffdc\n\td\ufffd"
