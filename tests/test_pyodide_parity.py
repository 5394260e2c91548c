"""The page's tests under Pyodide (in Node, from the npm package, with the built site's wheels)
and the same tests under CPython give the same verdict, test by test, for the reference and
for every solution of the catalogue."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.web_site import ROOT, built_site, reports, start_cpython, start_pyodide, verdicts

CATALOGUE = ROOT / "tests" / "catalogue"
WRONG = sorted((CATALOGUE / "wrong").glob("*.py"))
# The correct ones are left out for time: tests/test_catalogue.py shows they pass everything.
SUBMISSIONS = [ROOT / "solutions" / "reference.py", *WRONG]


@pytest.fixture(scope="module")
def both_reports() -> tuple[dict, dict]:
    # The slowest of the kit's tests: Pyodide is 2-3 times slower than CPython here, so it gets
    # two processes, each with half of the submissions, while CPython runs them all.
    site = built_site()
    processes = [start_pyodide(site, SUBMISSIONS[0::2]), start_pyodide(site, SUBMISSIONS[1::2]), start_cpython(SUBMISSIONS)]
    try:
        pyodide = {**reports(processes[0]), **reports(processes[1])}
        return pyodide, reports(processes[2])
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()


def test_the_catalogue_has_enough_wrong_solutions():
    assert len(WRONG) >= 25


def test_pyodide_and_cpython_give_the_same_verdicts(both_reports):
    pyodide, cpython = both_reports
    assert set(pyodide) == set(cpython) == {str(p.resolve()) for p in SUBMISSIONS}
    differences = {}
    for name in cpython:
        theirs, ours = verdicts(cpython[name]), verdicts(pyodide[name])
        diff = {
            test: (theirs.get(test), ours.get(test)) for test in theirs.keys() | ours.keys() if theirs.get(test) != ours.get(test)
        }
        if diff:
            differences[Path(name).relative_to(ROOT).as_posix()] = diff  # test -> (CPython, Pyodide)
    assert differences == {}


def test_the_comparison_has_teeth(both_reports):
    pyodide, _ = both_reports
    caught = 0
    for name, report in pyodide.items():
        statuses = set(verdicts(report).values())
        assert len(report["tests"]) > 40, name
        if "/wrong/" in name:
            caught += statuses != {"pass"}
        else:
            assert statuses == {"pass"}, name
    # Some wrong solutions are caught by the private tier only, never in the browser.
    assert caught >= 25
