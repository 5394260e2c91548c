"""`meteor-kit audit`: an exercise's own quality report, each check passed or failed with a one-line reason.

1. the reference passes every test, sandboxed as any submission (and, given a served page, in the page);
2. test strength: every single-point mutant of the reference loses points, unless it is likely equivalent;
3. cheats: constants and a table of the visible answers earn at most 5 %; rules, twins, constant_passes;
4. diagnosis: every model is named from its answers, every catalogue MISTAKE is named, and the
   share of failing mutants that get a diagnosis;
5. with a catalogue: a `grade` run of it in figures.
docs/writing-an-exercise.md ("Auditing an exercise") says what each means for an author.
"""

from __future__ import annotations

import ast
import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TextIO

from grader.authoring import catalogue, cheating, inputs, page, strength
from grader.authoring.mutants import mutants
from grader.core import diagnosis as diagnosis_core
from grader.core import exercise, runner
from grader.judging import cheats, diagnose
from grader.sandbox.timing import SLOWEST_FACTOR

PASS, FAIL, SKIPPED = "pass", "fail", "skipped"
REFERENCE = "solutions/reference.py"


@dataclass
class Check:
    id: str
    title: str
    status: str  # pass | fail | skipped
    reason: str  # one line
    details: list[str] = field(default_factory=list)
    survivors: list[dict] = field(default_factory=list)  # {"what", "verdict", "witness", "diff"}
    seconds: float = 0.0


@dataclass
class Audit:
    exercise: str
    title: str
    folder: str
    checks: list[Check]
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return all(check.status != FAIL for check in self.checks)

    def as_json(self) -> dict:
        return {**asdict(self), "passed": self.passed}


@dataclass(frozen=True)
class Options:
    jobs: int
    timeout: float  # a mutant's call time limit
    budget: float  # a mutant's time in all
    draws: int = inputs.DRAWS
    catalogue: Path | None = None
    page_url: str | None = None  # where the exercise's built page is served, for the page check


def preflight(ex: exercise.Exercise) -> list[str]:
    """What makes the folder no exercise the audit can run on, one line each (none: it can)."""
    problems = []
    reference = ex.root / REFERENCE
    if not reference.is_file():
        problems.append(f"no {REFERENCE}: the audit grades the reference and its mutants")
    else:
        try:
            tree = ast.parse(reference.read_text(encoding="utf-8"))
        except (SyntaxError, ValueError, UnicodeDecodeError) as exc:
            problems.append(f"{REFERENCE} does not parse: {exc}")
        else:
            defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
            if ex.function not in defined:
                problems.append(f"{REFERENCE} defines no function {ex.function} (exercise.toml's function)")
    if not sorted(ex.tests_dir.glob("test_*.py")):
        problems.append(f"no test files in {ex.tests_dir} (hidden_tests/test_<tier>.py)")
    elif not (ex.tests_dir / "conftest.py").is_file():
        problems.append("no hidden_tests/conftest.py (one line: from grader.core.tests_plugin import *)")
    for part in ("values", "trusted"):
        where = ex.path(part)
        if where is not None and not where.is_file():
            problems.append(f"[seam] {part} names {ex.seam[part]}, which is not a file")
    return problems


def run(ex: exercise.Exercise, options: Options, stream: TextIO) -> Audit:
    """Every check of `ex`; what takes a while says so on `stream`."""
    started = time.monotonic()
    say: Callable[[str], None] = lambda line: print(f"audit: {line}", file=stream, flush=True)  # noqa: E731
    entries = catalogue.read(options.catalogue) if options.catalogue else []
    with tempfile.TemporaryDirectory(prefix="meteor-kit-audit.") as folder:
        say(f"grading the reference{f' and {len(entries)} catalogue files' if entries else ''} as any submission...")
        clock = time.monotonic()
        files = {REFERENCE: ex.root / REFERENCE, **{f"catalogue/{e.name}": e.path for e in entries}}
        try:
            graded = strength.grade_files(ex, files, ex.call_timeout, ex.budget, options.jobs, stream)
        except runner.TestsBroken as exc:  # nothing was graded: the reference check says why, below
            graded = {name: {"status": "error", "message": str(exc), "tests": []} for name in files}
        try:  # the tests run in this process too: a test module that does not import fails here, not in silence
            tests, problem = inputs.recorded(ex), ""
        except RuntimeError as exc:
            tests, problem = None, str(exc)
        checks = [reference_check(graded[REFERENCE], time.monotonic() - clock, problem)]
        checks.append(_timed(lambda: limits_check(ex, tests), "limits"))
        reference_ok = checks[0].status == PASS
        made = mutants({"reference.py": (ex.root / REFERENCE).read_text(encoding="utf-8")})
        mutant_results: dict[str, dict] = {}
        if reference_ok:
            say(f"grading {len(made)} mutants of the reference ({options.jobs} at a time)...")
            clock = time.monotonic()
            paths = {f"mutant_{i:04d}.py": Path(folder) / f"mutant_{i:04d}.py" for i in range(len(made))}
            for mutant, path in zip(made, paths.values()):
                path.write_text(mutant.source, encoding="utf-8")
            mutant_results = strength.grade_files(ex, paths, options.timeout, options.budget, options.jobs, stream)
            say("drawing inputs from the exercise's tests, strategies and probes...")
            pool = inputs.pool(ex, options.draws, tests)
            survivors = [(m, p) for m, (name, p) in zip(made, paths.items()) if strength.full_marks(mutant_results[name])]
            say(f"running {len(survivors)} surviving mutants on {len(pool.inputs)} inputs...")
            judged = strength.judge(ex, ex.root / REFERENCE, survivors, pool.inputs)
            checks.append(strength_check(len(made), mutant_results, judged, pool, time.monotonic() - clock))
        else:
            pool = None
            checks.append(Check("strength", TITLES["strength"], SKIPPED, "the reference does not pass its own tests"))
    say("grading constants and tables of the visible answers...")
    checks.append(_timed(lambda: cheats_check(ex, pool.answers if pool else None), "cheats"))
    checks.append(_timed(lambda: diagnosis_check(ex, entries, graded, list(mutant_results.values())), "diagnosis"))
    checks.append(
        catalogue_check(entries, graded) if entries else Check("catalogue", TITLES["catalogue"], SKIPPED, "no --catalogue")
    )
    if options.page_url:
        say("running the reference in the page (headless Chromium)...")
        checks.append(_timed(lambda: page_check(ex, str(options.page_url)), "page"))
    else:
        checks.append(Check("page", TITLES["page"], SKIPPED, "no --browser"))
    return Audit(ex.id, ex.title, str(ex.root), checks, round(time.monotonic() - started, 1))


TITLES = {
    "reference": "The reference passes every test",
    "limits": "The time limits give a correct call ten times the reference's slowest",
    "strength": "Test strength: every mutant of the reference loses points",
    "cheats": "Cheats earn nothing; every visible test has a rule and a twin",
    "diagnosis": "The diagnosis names every mistake",
    "catalogue": "The catalogue, graded",
    "page": "The reference passes in the page",
}


def _timed(make: Callable[[], Check], name: str) -> Check:
    clock = time.monotonic()
    try:
        check = make()
    except Exception as exc:  # a check that cannot run is a failed check, and the others still run
        check = Check(name, TITLES[name], FAIL, f"could not run: {type(exc).__name__}: {_first_line(str(exc))}")
    check.seconds = round(time.monotonic() - clock, 1)
    return check


def _first_line(text: str) -> str:
    """A message's first line, up to pytest's exit status where it gives one (what follows is its output's tail)."""
    line = (text.strip().splitlines() or [""])[0]
    return re.split(r"(?<=\(pytest exit \d\))", line)[0][:300]


def reference_check(result: dict, seconds: float, problem: str = "") -> Check:
    """`problem`: why the tests did not run in this process (a test module that does not import), if so."""
    tests = result.get("tests", [])
    failed = [t for t in tests if t["status"] != "pass"]
    details = [f"{t['tier']} {t['name']}: {t['status']}: {t['message'][:300]}" for t in failed]
    took = round(seconds, 1)
    if problem:
        lines = [line.strip() for line in problem.splitlines()]
        errors = [line for line in lines if line.startswith(("ERROR", "E ")) or "Error" in line]
        return Check("reference", TITLES["reference"], FAIL, _first_line(problem), errors[:20], seconds=took)
    if result["status"] != "graded":
        return Check("reference", TITLES["reference"], FAIL, f"it was not graded: {result['message'][:300]}", details)
    if failed or not tests:
        reason = f"it fails {len(failed)} of its {len(tests)} tests" if tests else "no test ran"
        return Check("reference", TITLES["reference"], FAIL, reason, details, seconds=took)
    points = f"{result['score']:g}/{result['max_score']:g} points"
    if result["score"] < result["max_score"]:
        reason = f"it passes its {len(tests)} tests but earns {points}: a visible test without its twin pays nothing"
        return Check("reference", TITLES["reference"], FAIL, reason, seconds=took)
    return Check(
        "reference", TITLES["reference"], PASS, f"all {len(tests)} tests pass, sandboxed as a submission: {points}", seconds=took
    )


def limits_check(ex: exercise.Exercise, tests: dict | None) -> Check:
    """`call_timeout`, and `after_timeout` (what a call has once one of the submission's timed out), against the reference."""
    if tests is None:
        return Check("limits", TITLES["limits"], SKIPPED, "the tests do not run in this process (see the reference check)")
    slowest = inputs.slowest_call(ex, tests)
    needed = SLOWEST_FACTOR * slowest
    took = f"the reference's slowest call took {slowest * 1000:.2g} ms of CPU"
    short = [
        f"[limits] {name} = {value:g} s would cut a correct call short: make it {needed:.2g} s or more"
        for name, value in (("call_timeout", ex.call_timeout), ("after_timeout", ex.after_timeout))
        if value < needed
    ]
    if short:
        return Check("limits", TITLES["limits"], FAIL, f"{took}: {short[0]}", short)
    reason = f"{took}; call_timeout ({ex.call_timeout:g} s) and after_timeout ({ex.after_timeout:g} s) give ten times that"
    return Check("limits", TITLES["limits"], PASS, reason)


def strength_check(count: int, results: dict[str, dict], judged: list, pool: inputs.Pool, seconds: float) -> Check:
    missed = [s for s in judged if not s.equivalent]
    equivalent = len(judged) - len(missed)
    unloaded = sum(r["status"] != "graded" for r in results.values())
    details = [
        f"{count} mutants: {count - len(judged)} lose points"
        + (f" ({unloaded} of them do not load)" if unloaded else "")
        + (
            f"; {len(judged)} {'keeps' if len(judged) == 1 else 'keep'} every point: {len(missed)} answer otherwise on some input, {equivalent} likely equivalent"
            if judged
            else ""
        ),
        f"inputs compared: {len(pool.inputs)} distinct ({', '.join(f'{n} {k}' for k, n in pool.counts.items())})",
    ]
    survivors = [
        {
            "what": s.mutant.what,
            "verdict": "likely equivalent" if s.equivalent else "your tests miss this",
            "witness": s.witness or f"the same answers as the reference on all {s.compared} inputs",
            "diff": s.mutant.diff,
        }
        for s in sorted(judged, key=lambda s: (s.equivalent, s.mutant.line))
    ]
    if missed:
        reason = f"{len(missed)} of {count} mutants keep every point yet answer otherwise: your tests miss them"
        return Check("strength", TITLES["strength"], FAIL, reason, details, survivors, round(seconds, 1))
    lose = count - len(judged)
    reason = (
        f"{lose} of {count} mutants lose points; the other {equivalent} {'is' if equivalent == 1 else 'are'} likely equivalent"
        if equivalent
        else f"all {count} mutants lose points"
    )
    return Check("strength", TITLES["strength"], PASS, reason, details, survivors, round(seconds, 1))


def cheats_check(ex: exercise.Exercise, answers: dict | None) -> Check:
    found = cheating.check(ex, answers or {})
    worst = max(found.shares.items(), key=lambda kv: kv[1])
    details = [
        f"{len(found.shares)} cheats graded on every test in this process: the most, {worst[0]}, earns {worst[1]:.1%}",
        f"constant_passes: {found.listed} tests; {found.constants} constants tried (a small set and each visible test's one answer)",
        *found.notes,
        *found.problems,
    ]
    if found.problems:
        return Check("cheats", TITLES["cheats"], FAIL, f"{len(found.problems)} problems: {found.problems[0]}", details)
    reason = f"no cheat earns more than {cheats.MOST:.0%} (the most {worst[1]:.1%}); rules, twins and constant_passes complete"
    return Check("cheats", TITLES["cheats"], PASS, reason, details)


def diagnosis_check(ex: exercise.Exercise, entries: list[catalogue.Entry], graded: dict[str, dict], mutated: list[dict]) -> Check:
    if ex.path("trusted") is None:
        return Check("diagnosis", TITLES["diagnosis"], FAIL, "no [seam] trusted in exercise.toml: no models, no diagnosis")
    table = diagnose.browser_table(ex)
    problems = []
    for model in table["models"] + table["pairs"]:
        found = diagnosis_core.diagnose_outputs(model["outputs"], table, [])
        if not found or found.get("mistake") != model["id"]:
            said = (found or {}).get("mistake") or (found or {}).get("kind") or "nothing"
            problems.append(f"the model {model['id']} is not named from its own answers: the diagnosis says {said}")
    trusted = diagnose.trusted(ex)
    mistakes = [e for e in entries if e.mistake]
    how: dict[str, int] = {}
    for entry in mistakes:
        diagnosis = graded[f"catalogue/{entry.name}"].get("diagnosis")
        way = catalogue.named(entry, diagnosis, trusted)
        if way:
            how[way] = how.get(way, 0) + 1
        else:
            problems.append(catalogue.unnamed_reason(entry, diagnosis, trusted))
    named = sum(how.values())
    details = [
        f"{len(table['models'])} models and {len(table['pairs'])} pairs, each named from its answers on {len(table['probes'])} probes"
    ]
    if mistakes:
        ways = ", ".join(f"by their {way} {n}" for way, n in sorted(how.items()))
        details.append(f"catalogue: {named} of {len(mistakes)} MISTAKE files named" + (f" ({ways})" if ways else ""))
    share = ""
    failing, diagnosed, kinds = strength.diagnosed(mutated)
    if failing:
        share = f"; {diagnosed / failing:.0%} of failing mutants diagnosed"
        kinds_text = ", ".join(f"{kind} {count}" for kind, count in kinds.items())
        details.append(f"failing mutants: {diagnosed} of {failing} get a diagnosis ({diagnosed / failing:.1%}): {kinds_text}")
    details += problems
    if problems:
        return Check("diagnosis", TITLES["diagnosis"], FAIL, f"{len(problems)} not named: {problems[0]}", details)
    reason = f"every model named{f', every catalogue MISTAKE named ({named})' if mistakes else ''}{share}"
    return Check("diagnosis", TITLES["diagnosis"], PASS, reason, details)


def catalogue_check(entries: list[catalogue.Entry], graded: dict[str, dict]) -> Check:
    results = {e.name: graded[f"catalogue/{e.name}"] for e in entries}
    found = catalogue.figures(entries, results)
    median = found.one_mistake_median
    counts = ", ".join(f"{n} {kind}" for kind, n in found.counts.items())
    details = [f"{len(entries)} files: {counts}"]
    if median is not None:
        details.append(f"one-mistake median: {median:.1%}")
    details += [f"{label:>9}  {'█' * n}{' ' if n else ''}{n}" for label, n in found.bins]
    details += found.problems
    summary = f"{len(entries)} files{f', one-mistake median {median:.1%}' if median is not None else ''}"
    if found.problems:
        return Check("catalogue", TITLES["catalogue"], FAIL, f"{summary}; {found.problems[0]}", details)
    return Check("catalogue", TITLES["catalogue"], PASS, f"{summary}; every file scores as it says it should", details)


def page_check(ex: exercise.Exercise, url: str) -> Check:
    why = page.missing()
    if why:
        return Check("page", TITLES["page"], FAIL, f"cannot drive the page: {why}")
    found = page.run_reference(ex, url)
    details = [f"tiers run in the page: {', '.join(found.tiers)}", *found.problems]
    if found.problems:
        return Check("page", TITLES["page"], FAIL, found.problems[0], details)
    return Check("page", TITLES["page"], PASS, f"all {found.tests} tests of the page's tiers pass in Chromium", details)
