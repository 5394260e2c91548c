"""`meteor-kit check` and `pytest hidden_tests --submission` stop at the same total budget as `grade`."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time

from conftest import KIT_ROOT

from grader.cli.main import build_parser
from grader.core import exercise
from grader.judging.partial_run import catalogue

EXERCISE = exercise.load(KIT_ROOT)

# Just under the call timeout (2 s) on every call: without a total budget, a run takes hours.
SLOW = (
    "import time\n\ndef meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n    time.sleep(1.5)\n    return 0.0\n"
)
BUDGET = 4.0
BUDGET_TEXT = "not run: the submission used up its time budget of 4 s"
# Seconds of our own on top of the budget: the tests left are reported at once.
MARGIN = 4.0
# Starting Python, importing pytest and hypothesis, collecting the tests: before the budget counts.
STARTUP = 15.0


def test_check_stops_at_its_budget_and_reports_the_tests_left_not_run_with_the_reason(tmp_path, meteor_kit):
    path = tmp_path / "slow.py"
    path.write_text(SLOW)
    started = time.monotonic()
    run = subprocess.run(
        [meteor_kit, "check", path, "--budget", str(BUDGET), "--json"], capture_output=True, text=True, timeout=300
    )
    took = time.monotonic() - started
    assert run.returncode == 1, run.stderr
    report = json.loads(run.stdout)
    statuses = [t["status"] for t in report["tests"]]
    # Every test is reported, and all but the few the budget allowed were left out.
    assert len(statuses) == len(catalogue(EXERCISE).names) and statuses.count("not_run") >= len(statuses) - 10
    assert all(t["message"] == BUDGET_TEXT for t in report["tests"] if t["status"] == "not_run")
    assert report["duration"] < BUDGET + MARGIN, report["duration"]
    assert took < BUDGET + MARGIN + STARTUP, took


def test_pytest_with_a_submission_stops_at_its_budget(tmp_path):
    path = tmp_path / "slow.py"
    path.write_text(SLOW)
    started = time.monotonic()
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "hidden_tests",
            "--submission",
            str(path),
            "--budget",
            str(BUDGET),
            "-q",
            "-p",
            "no:cacheprovider",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=KIT_ROOT,
    )
    took = time.monotonic() - started
    assert run.returncode == 1, run.stdout[-2000:]
    assert run.stdout.count(BUDGET_TEXT) >= 50
    session = float(re.search(r" in ([0-9.]+)s", run.stdout.splitlines()[-1]).group(1))
    assert session < BUDGET + MARGIN + STARTUP / 2, run.stdout.splitlines()[-1]  # collection included
    assert took < BUDGET + MARGIN + STARTUP, took


def test_a_load_that_takes_longer_than_the_budget_is_cut_at_the_budget(tmp_path, meteor_kit):
    path = tmp_path / "loads_slowly.py"
    path.write_text(
        "import time\ntime.sleep(9)\n\ndef meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n    return 0.0\n"
    )
    started = time.monotonic()
    run = subprocess.run([meteor_kit, "check", path, "--budget", "2", "--json"], capture_output=True, text=True, timeout=300)
    took = time.monotonic() - started
    report = json.loads(run.stdout)
    assert report["status"] == "error" and "used up the time budget of 2 s" in report["message"], report["message"]
    assert took < 2 + MARGIN + STARTUP and report["duration"] < 2 + MARGIN


def test_the_budget_of_check_and_of_pytest_is_the_exercise_budget(tmp_path):
    budget = EXERCISE.budget
    assert build_parser(EXERCISE).parse_args(["check", str(KIT_ROOT / "solutions" / "reference.py")]).budget == budget
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "hidden_tests", "--help", "-p", "no:cacheprovider"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=KIT_ROOT,
    )
    assert re.search(rf"--budget=BUDGET\s+seconds the submission may use in all,.*\(default\s+{budget:g}", run.stdout, re.S)
