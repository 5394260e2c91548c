"""The student's page as built: what it ships, what it must never ship, and how it is served."""

from __future__ import annotations

import gzip
import json
import math
import re
import shutil
import subprocess
import urllib.request
import warnings
import zipfile
from pathlib import Path

import pytest

from grader.cli import serve
from grader.export import web as web_build
from tests.conftest import load_module
from tests.web_site import EXERCISE, ROOT, built_site, fingerprints, leaks, shipped_sources, site_blobs


@pytest.fixture(scope="module")
def site() -> Path:
    return built_site()


@pytest.fixture(scope="module")
def page_data(site: Path) -> dict:
    html = (site / "index.html").read_text(encoding="utf-8")
    match = re.search(r'<script type="application/json" id="page-data">(.*?)</script>', html, re.S)
    assert match, "index.html has no page data"
    return json.loads(match.group(1).replace("<\\/", "</"))


def reference_prints() -> list[bytes]:
    prints = fingerprints(ROOT / "solutions" / "reference.py", shipped_sources())
    assert len(prints) >= 15, "too few lines of the reference to recognise it by"
    return prints


def test_no_file_of_the_site_contains_the_reference_solution(site):
    assert leaks(site, reference_prints()) == []


def test_no_file_of_the_site_contains_the_private_tier(site):
    prints = fingerprints(ROOT / "hidden_tests" / "test_private.py", shipped_sources())
    assert len(prints) >= 5
    assert leaks(site, prints) == []
    names = [name for name, _ in site_blobs(site)]
    assert not [n for n in names if "test_private" in n or "solutions/" in n or "reference.py" in n]


def test_no_file_of_the_site_contains_the_misconception_models(site):
    # The page gets the models' answers (py/diagnosis-table.json), never their code.
    prints = fingerprints(ROOT / "solutions" / "misconceptions.py", shipped_sources())
    assert len(prints) >= 50
    assert leaks(site, prints) == []
    names = [name for name, _ in site_blobs(site)]
    assert not [n for n in names if "misconceptions" in n or n.endswith("diagnose.py")]


def test_the_site_ships_the_diagnosis_table_the_cli_uses(site):
    from grader.judging.diagnose import browser_table

    shipped = json.loads((site / web_build.DIAGNOSIS_TABLE).read_text(encoding="utf-8"))
    assert shipped == browser_table(EXERCISE)
    assert "grader/core/diagnosis.py" in web_build.kit_files(EXERCISE)


def test_the_leak_check_finds_a_planted_reference(site, tmp_path):
    copy = tmp_path / "site"
    shutil.copytree(site / "py", copy / "py")
    with zipfile.ZipFile(copy / "py" / "kit.zip", "a") as z:
        z.write(ROOT / "solutions" / "reference.py", "grader/helpers.py")
    found = leaks(copy, reference_prints())
    assert found and all(where.startswith("py/kit.zip") for where in found)
    assert any(where.startswith("py/kit.zip!grader/helpers.py") for where in found)


def test_the_leak_check_reads_inside_the_memory_snapshot(site, tmp_path):
    copy = tmp_path / "site"
    (copy / "py").mkdir(parents=True)
    snapshot = gzip.decompress((site / web_build.SNAPSHOT).read_bytes())
    (copy / web_build.SNAPSHOT).write_bytes(gzip.compress(snapshot + (ROOT / "solutions" / "reference.py").read_bytes(), 1))
    found = leaks(copy, reference_prints())
    assert found and all(where.startswith(f"{web_build.SNAPSHOT}!gunzip") for where in found)


def test_the_page_starts_python_from_the_builds_snapshot(site):
    # As the page's worker does: restore Python's memory, then run the tests of the starter.
    done = subprocess.run(
        ["node", str(ROOT / "web" / "tools" / "run-node.mjs"), str(site), str(ROOT / "problem" / "starter.py")],
        capture_output=True,
        text=True,
        cwd=ROOT / "web",
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines[0]["snapshot"] is True, "Python started the long way"
    report = lines[1]["report"]
    assert len(report["tests"]) > 40
    assert {t["status"] for t in report["tests"]} == {"error"}, "the starter raises NotImplementedError in every test"
    assert "NotImplementedError" in report["tests"][0]["message"]


@pytest.mark.pinned_hypothesis
def test_the_site_ships_the_grader_and_the_browser_tiers_only(site):
    with zipfile.ZipFile(site / "py" / "kit.zip") as z:
        names = set(z.namelist())
    # replay.json: the property tests' examples, drawn by hypothesis once per kit version (grader/core/replay.py).
    assert names == set(web_build.kit_files(EXERCISE)) | {"page_session.py", "replay.json"}
    browser_test_files = {f"hidden_tests/test_{tier}.py" for tier in EXERCISE.browser_tiers}
    assert browser_test_files <= names


def test_the_site_is_self_contained(site):
    for name in (
        "index.html",
        "app.js",
        "app.css",
        "worker.js",
        "pyodide/pyodide.mjs",
        "pyodide/pyodide.asm.wasm",
        "py/stdlib.zip",
        "py/site-packages.zip",
        "py/hypothesis-cache.zip",
    ):
        assert (site / name).is_file(), name
    # Nothing the page loads points outside its own origin.
    for name in ("index.html", "app.js", "worker.js", "app.css"):
        text = (site / name).read_text(encoding="utf-8")
        assert not re.search(r"""(src|href)\s*=\s*["']https?://""", text), name
        assert "cdn.jsdelivr" not in text and "unpkg.com" not in text, name


def test_the_wheels_are_the_pinned_pytest_and_hypothesis(site):
    with zipfile.ZipFile(site / "py" / "site-packages.zip") as z:
        names = z.namelist()
    assert "pytest-9.0.3.dist-info/METADATA" in names
    assert "hypothesis-6.155.2.dist-info/METADATA" in names
    # Precompiled: bytecode only, no sources to compile on the student's machine.
    assert any(n.endswith("_pytest/python.pyc") for n in names)
    assert not [n for n in names if n.endswith(".py")]


def test_the_page_has_a_breakdown_of_every_statement_example(page_data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tier mark is registered by hidden_tests' conftest
        examples = load_module(ROOT / "hidden_tests" / "test_examples.py", "examples_for_web_test").EXAMPLES
    by_key = {e.get("key"): e for e in page_data["examples"]}
    assert set(examples) <= set(by_key)
    assert len(page_data["examples"]) > len(examples), "a few more examples are chosen at build time"
    for key, (reference, candidate, params, exact) in examples.items():
        shown = by_key[key]
        assert (shown["reference"], shown["candidate"], shown["params"]) == (reference, candidate, params)
        assert math.isclose(shown["score"], exact, abs_tol=0.0005 + 1e-9)


def test_each_link_of_a_breakdown_joins_equal_words_and_uses_a_reference_word_once(page_data):
    for e in page_data["examples"]:
        used = [r for _, r in e["links"]]
        assert len(used) == len(set(used)) == e["m"]
        for c, r in e["links"]:
            assert e["candidateTokens"][c] == e["referenceTokens"][r]
        covered = sorted(i for start, end in e["chunks"] for i in range(start, end))
        assert covered == sorted(c for c, _ in e["links"])


def test_the_page_gets_its_limits_and_points_from_the_exercise(page_data):
    ex = EXERCISE
    assert page_data["testTimeout"] == ex.browser_test_timeout
    assert set(page_data["tiers"]) == set(ex.browser_tiers)
    assert page_data["starter"] == (ROOT / "problem" / "starter.py").read_text(encoding="utf-8")


def test_the_page_gets_its_run_budget_from_the_exercise(page_data):
    assert page_data["runBudget"] == 20.0 == web_build.run_budget(EXERCISE)


def test_the_service_worker_caches_every_file_under_the_builds_digest(site):
    text = (site / "sw.js").read_text(encoding="utf-8")
    version = json.loads(re.search(r"const VERSION = (\"[^\"]*\");", text).group(1))
    assert version == (site / web_build.STAMP).read_text().strip()
    files = json.loads(re.search(r"const FILES = (\[.*?\]);", text, re.S).group(1))
    on_disk = {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()}
    assert set(files) == (on_disk - {"index.html", "sw.js", web_build.STAMP}) | {"./"}
    assert "pyodide/pyodide.asm.wasm" in files and "py/kit.zip" in files
    # What keeps the page cross-origin isolated offline: the worker adds the headers itself.
    for header in ("Cross-Origin-Opener-Policy", "Cross-Origin-Embedder-Policy", "Cross-Origin-Resource-Policy"):
        assert header in text


def test_the_statement_is_rendered_with_its_math_and_the_page_has_one_h1(site):
    html = (site / "index.html").read_text(encoding="utf-8")
    assert html.count("<h1") == 1
    assert "<h2>Problem statement</h2>" in html
    assert html.count('class="katex"') >= 10
    assert "$$" not in html.split('id="page-data"')[0]


def test_the_server_sends_isolation_headers_and_mime_types(site):
    server, url = serve.serve_in_thread(site)
    try:
        expected = {
            "": "text/html",
            "app.js": "text/javascript",
            "worker.js": "text/javascript",
            "pyodide/pyodide.mjs": "text/javascript",
            "pyodide/pyodide.asm.wasm": "application/wasm",
            "py/stdlib.zip": "application/zip",
            "app.css": "text/css",
        }
        for path, mime in expected.items():
            with urllib.request.urlopen(url + path) as response:
                assert response.headers["Content-Type"].startswith(mime), path
                assert response.headers["Cross-Origin-Opener-Policy"] == "same-origin"
                assert response.headers["Cross-Origin-Embedder-Policy"] == "require-corp"
    finally:
        server.shutdown()
        server.server_close()


def test_a_build_is_current_until_an_input_changes(site, monkeypatch):
    assert web_build.is_current(EXERCISE, site)
    # The recording page_session.py writes beside itself under CPython is not an input.
    assert web_build.ROOT / "web" / "py" / web_build.REPLAY_FILE not in web_build.input_files(EXERCISE)
    assert web_build.ROOT / "web" / "py" / "page_session.py" in web_build.input_files(EXERCISE)
    real = web_build.input_files
    monkeypatch.setattr(web_build, "input_files", lambda ex: real(ex)[:-1])
    assert not web_build.is_current(EXERCISE, site)


def test_build_web_refuses_to_replace_a_folder_it_did_not_build(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(SystemExit, match="refusing"):
        web_build.build(EXERCISE, tmp_path)
    assert (tmp_path / "notes.txt").read_text() == "mine"


# Debian 12's Node: 18.19 in bookworm, 18.20 from its security updates. `make` installs it.
DEBIAN_12_NODE = (18, 19, 0)


def test_every_package_of_the_lock_accepts_debian_12s_node():
    lock = json.loads((ROOT / "web" / "package-lock.json").read_text(encoding="utf-8"))
    asks = {name or "the page": p["engines"]["node"] for name, p in lock["packages"].items() if "node" in p.get("engines", {})}
    assert "the page" in asks and "node_modules/marked" in asks and "node_modules/pyodide" in asks
    for name, spec in asks.items():
        least = re.fullmatch(r">=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?", spec)
        assert least, f"{name} asks for Node {spec!r}: a form this check cannot read, so read it yourself"
        assert tuple(int(part or 0) for part in least.groups()) <= DEBIAN_12_NODE, f"{name} asks for Node {spec}"


def test_a_node_the_lock_does_not_accept_stops_the_build_with_npms_reason(tmp_path, monkeypatch):
    web = tmp_path / "web"
    web.mkdir()
    shutil.copy(ROOT / "web" / "package.json", web / "package.json")
    lock = json.loads((ROOT / "web" / "package-lock.json").read_text(encoding="utf-8"))
    lock["packages"]["node_modules/marked"]["engines"] = {"node": ">=999"}
    (web / "package-lock.json").write_text(json.dumps(lock, indent=2), encoding="utf-8")
    monkeypatch.setattr(web_build, "WEB", web)
    with pytest.raises(SystemExit) as stopped:
        web_build.node_modules()  # npm refuses before it fetches anything
    said = str(stopped.value)
    assert "is not one that web/package-lock.json accepts" in said
    assert "marked@15.0.12" in said and ">=999" in said
    assert not (web / "node_modules" / ".node-version").exists()


def test_a_site_built_beside_another_hypothesis_is_built_again(site, monkeypatch):
    # Its examples were recorded by (or, for an unknown version, not recorded for) another hypothesis:
    # `build-web --if-needed` and `make run` must not serve it as current.
    assert web_build.is_current(EXERCISE, site)
    monkeypatch.setattr(web_build.replay, "path", lambda: {"property_tests": "plain hypothesis", "hypothesis": "9.9.9"})
    assert not web_build.is_current(EXERCISE, site)


def test_what_a_build_step_prints_goes_to_stderr_not_to_the_command_s_stdout(capfd):
    # On a machine whose page cache is cold, `audit --json` built the page on its way and its JSON
    # began with the precompile step's "precompiled into ..." line.
    web_build.run(["node", "-e", "console.log('a step said this')"])
    out, err = capfd.readouterr()
    assert "a step said this" not in out and "a step said this" in err
