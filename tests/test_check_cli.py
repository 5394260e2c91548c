"""`meteor-kit check`: what a person sees at the terminal, and the JSON report, run through the real command."""

from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import warnings
from pathlib import Path

import pytest
from conftest import BIN, KIT_ROOT, load_module

WRONG = KIT_ROOT / "tests" / "catalogue" / "wrong"
GOLDEN = KIT_ROOT / "tests" / "golden"
TIERS = ["examples", "hidden", "properties", "private"]
TEST_KEYS = {"name", "tier", "status", "message", "output", "score", "max_score"}
STATUSES = {"pass", "fail", "error", "timeout", "not_run"}

with warnings.catch_warnings():
    warnings.simplefilter("ignore", pytest.PytestUnknownMarkWarning)
    HIDDEN_CASES = load_module(KIT_ROOT / "hidden_tests" / "test_hidden.py", "kit_test_hidden_cli").CASES


@functools.cache
def check(path: Path | str, *options: str) -> subprocess.CompletedProcess:
    """Run `meteor-kit check` once per argument list; several tests read the same run."""
    return subprocess.run(
        [str(BIN / "meteor-kit"), "check", str(path), *options],
        cwd=KIT_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )


def check_json(path: Path | str, *options: str) -> dict:
    done = check(path, "--json", *options)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    return json.loads(done.stdout)


def hidden_inputs() -> set[str]:
    return {text for case in HIDDEN_CASES for text in (case.reference, case.candidate) if len(text) > 3}


def write(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / name
    path.write_text(source, encoding="utf-8")
    return path


# ---------------------------------------------------------------- the reference


def test_the_reference_passes_and_every_tier_is_counted():
    done = check(KIT_ROOT / "solutions" / "reference.py")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    for tier in TIERS:
        counts = [line for line in done.stdout.splitlines() if line.strip().startswith(f"{tier}: ")]
        assert len(counts) == 1, tier
        passed, total = counts[0].split(": ")[1].removesuffix(" passed").split("/")
        assert passed == total and int(total) > 0
    last = done.stdout.strip().splitlines()[-1]
    assert last.endswith(" points") and "passed" in last
    marks = {line.split()[0] for line in done.stdout.splitlines() if line.startswith("    ") and line.strip()}
    assert marks == {"✓"}


def test_the_json_report_has_the_schema():
    report = check_json(KIT_ROOT / "solutions" / "reference.py")
    assert {"submission", "status", "message", "duration", "score", "max_score", "passed", "tests"} <= set(report)
    assert report["status"] == "graded" and report["submission"] == "reference.py"
    assert report["passed"] == len(report["tests"]) and report["score"] == report["max_score"] > 0
    for test in report["tests"]:
        assert set(test) == TEST_KEYS
        assert test["status"] in STATUSES and test["tier"] in TIERS
        assert isinstance(test["output"], str) and len(test["output"]) <= 500
        assert 0 <= test["score"] <= test["max_score"]
    assert sum(t["max_score"] for t in report["tests"]) == report["max_score"]


# ---------------------------------------------------------------- a wrong solution


def test_a_wrong_solution_exits_1_and_shows_expected_got_and_the_rule():
    done = check(WRONG / "no_lowercase.py")
    assert done.returncode == 1
    out = done.stdout
    assert "test_statement_example[worked_example]" in out
    assert "meteor_score('Rain falls gently from the sky', 'Gentle rain drops from the sky'): expected 0.625, got 0.491" in out
    start = out.index("\n  hidden: ")
    end = out.find("\n\n  ", start + 1)
    hidden = out[start : end if end != -1 else None]
    assert "test_rule[uppercase_reference]" in hidden
    assert "expected 0.981, got 0.0 [rule: Tokens: lowercase each text with str.lower()]" in hidden


@pytest.mark.parametrize("name", ["characters_not_tokens", "crash_on_empty", "returns_string", "no_lowercase"])
def test_a_hidden_test_never_shows_its_input(name):
    report = check_json(WRONG / f"{name}.py", "--tiers", "hidden")
    failed = [t for t in report["tests"] if t["status"] != "pass"]
    assert failed and all(t["tier"] == "hidden" for t in report["tests"])
    secrets = hidden_inputs()
    for test in failed:
        assert "[rule: " in test["message"], test
        assert "expected " in test["message"], test
        leaked = [s for s in secrets if s in test["message"] or s in test["name"]]
        assert leaked == [], (test["name"], leaked)
    text = check(WRONG / f"{name}.py", "--tiers", "hidden").stdout
    assert [s for s in secrets if s in text] == []


def test_a_hidden_test_that_crashes_names_the_rule_and_the_expected_value():
    report = check_json(WRONG / "crash_on_empty.py", "--tiers", "hidden")
    crash = next(t for t in report["tests"] if t["name"] == "test_rule[empty_candidate]")
    assert crash["status"] == "error"
    assert crash["message"].startswith("expected 0.0, but meteor_score raised ZeroDivisionError: division by zero")
    assert "[rule: Nothing to match: the score is 0.0]" in crash["message"]
    assert 'File "crash_on_empty.py", line' in crash["message"]


@pytest.mark.pinned_hypothesis
def test_the_json_of_a_wrong_solution_matches_its_golden_file():
    report = check_json(WRONG / "gamma_hardcoded.py")
    # The duration varies; the diagnosis has tests of its own.
    stable = {k: v for k, v in report.items() if k not in ("duration", "diagnosis")}
    golden = GOLDEN / "check_gamma_hardcoded.json"
    if os.environ.get("METEOR_UPDATE_GOLDEN"):
        golden.write_text(json.dumps(stable, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    assert stable == json.loads(golden.read_text(encoding="utf-8"))


def test_a_wrong_solution_gets_the_points_of_what_it_passes():
    report = check_json(WRONG / "gamma_hardcoded.py")
    assert report["status"] == "graded" and 0 < report["score"] < report["max_score"]
    assert report["score"] == sum(t["max_score"] for t in report["tests"] if t["status"] == "pass")
    assert {t["tier"] for t in report["tests"] if t["status"] == "fail"} == set(TIERS)


# ---------------------------------------------------------------- files that do not get that far


@pytest.mark.parametrize("make", ["missing", "directory"])
def test_a_path_that_is_not_a_file_is_a_clear_error_with_exit_2(tmp_path, make):
    path = tmp_path / "student.py" if make == "missing" else tmp_path
    done = check(path)
    assert done.returncode == 2 and done.stdout == ""
    assert ("no such file" if make == "missing" else "is a directory") in done.stderr
    assert str(path) in done.stderr and "Traceback" not in done.stderr


def test_the_starter_errors_in_every_test_with_a_readable_message():
    report = check_json(KIT_ROOT / "problem" / "starter.py")
    assert report["status"] == "graded" and report["score"] == 0
    assert {t["tier"] for t in report["tests"]} == set(TIERS)
    for test in report["tests"]:
        assert test["status"] == "error", test
        # A twin's message leaves out the exception's text, which could carry its unseen input.
        raised = (
            "NotImplementedError" if test["name"].startswith("test_twin[") else "NotImplementedError: write meteor_score here"
        )
        assert f"meteor_score raised {raised}" in test["message"]
        assert "Traceback" not in test["message"] and "site-packages" not in test["message"]
        if test["tier"] == "hidden":
            assert test["message"].startswith("expected ") and "[rule: " in test["message"], test


def test_a_syntax_error_reports_its_line(tmp_path):
    path = write(tmp_path, "broken.py", "def meteor_score(reference, candidate):\n    x = (1,\n    return x\n")
    done = check(path)
    assert done.returncode == 1
    assert "could not load the submission: syntax error on line 2" in done.stdout
    report = check_json(path)
    assert report["status"] == "error" and report["message"].startswith("could not load the submission: syntax error")
    assert report["tests"] and all(t["status"] == "error" and "line 2" in t["message"] for t in report["tests"])


def test_a_file_without_meteor_score_suggests_a_close_name(tmp_path):
    path = write(tmp_path, "typo.py", "def meteor_scor(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n    return 0.0\n")
    report = check_json(path)
    assert report["status"] == "error" and report["score"] == 0
    assert "no function named 'meteor_score' is defined; did you mean to name 'meteor_scor' 'meteor_score'?" in report["message"]


def test_printed_output_appears_per_test_cut_to_500_characters(tmp_path):
    source = (
        "calls = 0\n\n\n"
        "def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n"
        "    global calls\n"
        "    calls += 1\n"
        "    print(f'call {calls}: ' + 'x' * 2000)\n"
        "    return -1.0\n"
    )
    path = write(tmp_path, "chatty.py", source)
    report = check_json(path, "--tiers", "examples,hidden")
    outputs = [t["output"] for t in report["tests"]]
    assert all(o.startswith("call ") and "xxxx" in o and len(o) <= 500 for o in outputs)
    assert all("cut" in o for o in outputs)
    assert len({o.split(":")[0] for o in outputs}) == len(outputs)  # each test shows its own call's output
    text = check(path, "--tiers", "examples,hidden").stdout
    assert text.count("printed: call ") == len(report["tests"])


def test_a_function_whose_answers_change_from_call_to_call_is_told_so_without_the_kits_files(tmp_path):
    # Hypothesis calls such a test flaky and quotes the traceback it expected: the kit's paths.
    # A counter rather than random: it fails one call in seven, the same way on every run.
    source = tmp_path / "counter.py"
    source.write_text(
        "calls = []\n\ndef meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n"
        "    calls.append(1)\n    return 0.5 if len(calls) % 7 else 1.0\n"
    )
    report = json.loads(check(source, "--json", "--tiers", "properties").stdout)
    told = [t for t in report["tests"] if "tried again" in t["message"]]
    assert told, [t["message"][:200] for t in report["tests"]]
    for test in report["tests"]:
        assert str(KIT_ROOT) not in test["message"] and "Traceback" not in test["message"]
        assert "Flaky" not in test["message"]
    assert all(t["status"] == "fail" for t in told)
    assert "randomness" in told[0]["message"] and "meteor_score(" in told[0]["message"]


def _python(code: str) -> subprocess.CompletedProcess:
    # Started with Ctrl+C at its default, as from a terminal: a pytest-xdist worker ignores SIGINT,
    # and a child inheriting that would never get Python's KeyboardInterrupt handler.
    return subprocess.run(
        [str(BIN / "python"), "-c", code],
        cwd=KIT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def test_ctrl_c_while_the_command_starts_is_one_line_and_exit_130():
    # As the `meteor-kit` program, a Ctrl+C during the imports ends it at once, without a traceback.
    done = _python(
        "import os, signal, sys, time\nsys.argv[0] = 'meteor-kit'\nimport grader.cli\n"
        "os.kill(os.getpid(), signal.SIGINT)\ntime.sleep(30)\n"
    )
    assert (done.returncode, done.stderr) == (130, "meteor-kit: interrupted\n")


def test_ctrl_c_in_a_command_is_one_line_and_exit_130():
    done = _python(
        "import sys\nsys.argv[0] = 'meteor-kit'\nimport grader.cli.check as c, grader.cli.main as m\n"
        "def stopped(args):\n    raise KeyboardInterrupt\n"
        "c.cmd_check = stopped\nsys.exit(m.main(['check', 'solutions/reference.py']))\n"
    )
    assert (done.returncode, done.stderr) == (130, "meteor-kit: interrupted\n")


def test_importing_the_cli_in_another_program_leaves_its_ctrl_c_alone():
    done = _python("import signal, grader.cli.main\nprint(signal.getsignal(signal.SIGINT) is signal.default_int_handler)")
    assert done.stdout.strip() == "True", done.stderr


def test_pytest_on_the_hidden_tests_without_the_kits_plugin_says_how_to_install_it():
    done = subprocess.run(
        [
            str(BIN / "python"),
            "-m",
            "pytest",
            "hidden_tests",
            "-q",
            "-x",
            "-p",
            "no:meteor-kit-sandbox",
            "-p",
            "no:cacheprovider",
        ],
        cwd=KIT_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 4, done.stdout[-2000:]
    assert "the kit's pytest plugin (grader.judging.tests_sandbox) is not installed" in done.stdout
    assert "KeyError" not in done.stdout + done.stderr
