"""A second exercise (word error rate, in tests/exercises/wer) runs on the same engine, untouched: check, grade, the page."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from grader.cli import serve
from tests.conftest import KIT_ROOT
from tests.web_site import fingerprints, leaks, site_blobs

WER = KIT_ROOT / "tests" / "exercises" / "wer"
CATALOGUE = KIT_ROOT / "tests" / "exercises" / "wer-catalogue"
WRONG = sorted((CATALOGUE / "wrong").glob("*.py"))
CORRECT = sorted((CATALOGUE / "correct").glob("*.py"))
KIT = [sys.executable, "-m", "grader.cli"]
CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
]

# What only one exercise knows: its function, its parameters and its terms. The engine names none of them.
EXERCISE_NAMES = re.compile(
    r"meteor(?!-kit)|meteor_score|word_error_rate|\bwer\b|\balpha\b|\bbeta\b|\bgamma\b|fmean|"
    r"candidate_tokens|referenceTokens|candidateTokens|hypothesis\)|\(reference, candidate",
    re.IGNORECASE,
)


def mistake_of(path: Path) -> str:
    """The MISTAKE a catalogue file declares, read without running it."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "MISTAKE":
            return ast.literal_eval(node.value)
    raise LookupError(path)


def kit(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([*KIT, *args], capture_output=True, text=True, timeout=timeout, cwd=KIT_ROOT)


@pytest.fixture(scope="module")
def checked() -> dict[str, dict]:
    """`check --exercise --json` of every file of the second catalogue, by file name."""
    reports = {}
    for path in CORRECT + WRONG:
        done = kit("check", "--exercise", str(WER), "--json", str(path))
        assert done.returncode in (0, 1), done.stderr
        reports[path.name] = json.loads(done.stdout)
    return reports


def test_check_names_each_mistake_from_the_exercises_own_models(checked):
    for path in WRONG:
        report = checked[path.name]
        assert report["score"] < report["max_score"], path.name
        assert report["diagnosis"]["mistake"] == mistake_of(path), (path.name, report["diagnosis"])
        assert "word_error_rate(" in report["diagnosis"]["text"]


def test_check_gives_the_correct_solutions_full_marks_and_no_diagnosis(checked):
    for path in CORRECT:
        report = checked[path.name]
        assert report["passed"] == len(report["tests"]) and report["score"] == report["max_score"] > 0, path.name
        assert report["diagnosis"] is None


def test_a_structured_value_is_judged_through_the_sandbox(checked):
    # The detail dict crosses the jail as a dict: the correct solutions pass the tests that judge it.
    names = {t["name"]: t["status"] for t in checked["two_rows.py"]["tests"]}
    assert names["test_detail_counts_errors_and_words"] == "pass"
    assert names["test_detail_matches_the_reference"] == "pass"
    assert names["test_statement_example[detail]"] == "pass"


def test_grade_scores_the_catalogue_as_check_does(tmp_path, checked):
    shutil.copytree(CATALOGUE, tmp_path / "class")
    done = kit("grade", "--exercise", str(WER), str(tmp_path / "class"), "--out", str(tmp_path / "out"), "--jobs", "2")
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["exercise"] == "wer"
    graded = {Path(s["submission"]).name: s for s in results["submissions"]}
    assert set(graded) == {p.name for p in CORRECT + WRONG}
    for name, result in graded.items():
        assert (result["score"], result["max_score"]) == (checked[name]["score"], checked[name]["max_score"]), name
    for path in WRONG:
        assert graded[path.name]["diagnosis"]["mistake"] == mistake_of(path)


def test_the_page_of_the_second_exercise_runs_its_tests_in_chromium(tmp_path):
    site = tmp_path / "site"
    done = kit("build-web", "--exercise", str(WER), "--out", str(site))
    assert done.returncode == 0, done.stderr
    assert shutil.which(CHROMIUM), f"{CHROMIUM} is missing: apt-get install chromium (make system does it)"
    server, url = serve.serve_in_thread(site)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(url)
            page.evaluate("window.kit.ready")
            page.evaluate("window.kit.setRunBudget(300)")
            assert "word_error_rate" in page.evaluate("window.kit.getCode()")
            page.evaluate("(src) => window.kit.setCode(src)", (WER / "solutions" / "reference.py").read_text())
            report = page.evaluate("window.kit.runTests()")
            assert report["tests"] and all(t["status"] == "pass" for t in report["tests"]), report["tests"]
            assert {t["tier"] for t in report["tests"]} == {"examples", "hidden", "properties"}
            assert "test_detail_counts_errors_and_words" in {t["name"] for t in report["tests"]}
            page.evaluate("(src) => window.kit.setCode(src)", (CATALOGUE / "wrong" / "positional.py").read_text())
            wrong = page.evaluate("window.kit.runTests()")
            assert any(t["status"] != "pass" for t in wrong["tests"])
            assert wrong["diagnosis"]["mistake"] == "positional"
            tried = page.evaluate("window.kit.tryIt('a b c d', 'x a b c d')")
            assert tried["status"] == "ok" and tried["value"] == "1.25"
            assert errors == []
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    names = [name for name, _ in site_blobs(site)]
    assert not [n for n in names if "test_private" in n or "solutions/" in n or "misconceptions" in n]
    # The models' sentences ship in the diagnosis table, by design; their code never does.
    shipped = [
        *(KIT_ROOT / "grader" / "core").glob("*.py"),
        KIT_ROOT / "web" / "py" / "page_session.py",
        *(WER / "problem").glob("*.py"),
        *(p for p in (WER / "hidden_tests").glob("*.py") if p.name != "test_private.py"),
        site / "py" / "diagnosis-table.json",
    ]
    assert len(fingerprints(WER / "solutions" / "misconceptions.py", shipped)) >= 10
    assert leaks(site, fingerprints(WER / "solutions" / "misconceptions.py", shipped)) == []


# The engine's text files: its Python, the page's code, tools, styles and settings.
ENGINE_TEXT = (".py", ".js", ".mjs", ".html", ".css", ".json", ".txt", ".md", ".toml")
# What is not the engine's own source: npm's packages, bytecode, and what a build or a run writes
# (web/dist/, and web/py/replay.json, which page_session.py records under CPython).
NOT_SOURCE = {"node_modules", "__pycache__", "dist", "build"}
WRITTEN_BY_A_RUN = {KIT_ROOT / "web" / "py" / "replay.json"}


def engine_files() -> list[Path]:
    """Every text file of grader/ and web/ the kit ships or builds from."""
    return [
        path
        for root in (KIT_ROOT / "grader", KIT_ROOT / "web")
        for path in sorted(root.rglob("*"))
        if path.is_file()
        and path.suffix in ENGINE_TEXT
        and not NOT_SOURCE & set(path.relative_to(root).parts)
        and path not in WRITTEN_BY_A_RUN
    ]


def test_the_engine_names_no_exercise():
    found = []
    for path in engine_files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if EXERCISE_NAMES.search(line):
                found.append(f"{path.relative_to(KIT_ROOT)}:{number}: {line.strip()}")
    assert found == []


def test_the_grep_reads_all_of_web_and_grader():
    read = {path.relative_to(KIT_ROOT).as_posix() for path in engine_files()}
    assert {"web/py/page_session.py", "web/src/results.js", "web/tools/run-node.mjs", "web/package.json"} <= read
    assert {"grader/cli/main.py", "grader/core/exercise.py", "grader/sandbox/child.py"} <= read
    assert not [name for name in read if "node_modules" in name or name == "web/py/replay.json"]


def test_the_grep_would_see_an_exercise_name():
    assert EXERCISE_NAMES.search("def meteor_score(reference, candidate, alpha=0.9):")
    assert EXERCISE_NAMES.search("word_error_rate(reference, hypothesis)")
    assert not EXERCISE_NAMES.search('print("meteor-kit grade: interrupted")')


def test_explain_without_one_in_the_seam_says_so():
    done = kit("explain", "--exercise", str(WER), "a b", "a c")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "meteor-kit explain: the exercise 'wer' has no explain ([seam] explain in exercise.toml)"
    ]


def test_an_exercise_folder_without_its_metadata_is_a_usage_error(tmp_path):
    done = kit("check", "--exercise", str(tmp_path), str(CORRECT[0]))
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "no problem/exercise.toml" in done.stderr


def test_an_exercise_is_read_once_from_its_folder_and_found_from_its_own_files(monkeypatch, tmp_path):
    from grader.core import exercise

    kit, wer = exercise.load(KIT_ROOT), exercise.load(WER)
    assert (kit.function, wer.function) == ("meteor_score", "word_error_rate")
    assert exercise.load(WER) is wer and wer.root == WER.resolve()
    monkeypatch.chdir(WER.parent)
    assert exercise.load("wer") is wer  # a relative folder is read from where the command runs
    # Its tests and seam modules find it wherever it is, the page included: by the folder that holds them.
    assert exercise.holding(WER / "hidden_tests" / "test_hidden.py") is wer
    assert exercise.holding(KIT_ROOT / "solutions" / "misconceptions.py") is kit
    with pytest.raises(LookupError):
        exercise.holding(tmp_path / "test_alone.py")
    # Its caches are its own, in the kit's cache folder.
    assert wer.cache != kit.cache and wer.cache.parent == kit.cache.parent == exercise.CACHE
