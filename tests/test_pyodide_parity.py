"""The page's tests under Pyodide (in Node, from the npm package, with the built site's wheels)
and the same tests under CPython give the same verdict, test by test, for the reference and
for every solution of the catalogue."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.web_site import ROOT, built_site, reports, start_cpython, start_pyodide, verdicts

CATALOGUE = ROOT / "tests" / "catalogue"
WRONG = sorted((CATALOGUE / "wrong").glob("*.py"))
CORRECT = sorted((CATALOGUE / "correct").glob("*.py"))
SUBMISSIONS = [ROOT / "solutions" / "reference.py", *WRONG, *CORRECT]


@pytest.fixture(scope="module")
def both_reports() -> tuple[dict, dict]:
    # Both run at once, one process each: this is the slowest of the kit's tests.
    site = built_site()
    pyodide, cpython = start_pyodide(site, SUBMISSIONS), start_cpython(SUBMISSIONS)
    try:
        return reports(pyodide), reports(cpython)
    finally:
        for process in (pyodide, cpython):
            if process.poll() is None:
                process.kill()


def test_the_catalogue_has_enough_wrong_solutions():
    assert len(WRONG) >= 25
    assert len(CORRECT) >= 1


def test_pyodide_and_cpython_give_the_same_verdicts(both_reports):
    pyodide, cpython = both_reports
    assert set(pyodide) == set(cpython) == {str(p.resolve()) for p in SUBMISSIONS}
    differences = {}
    for name in cpython:
        theirs, ours = verdicts(cpython[name]), verdicts(pyodide[name])
        diff = {test: (theirs.get(test), ours.get(test)) for test in theirs.keys() | ours.keys() if theirs.get(test) != ours.get(test)}
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
