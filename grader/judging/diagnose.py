"""Diagnosis on the trusted side: the probe set, the models' answers, and a submission's answers.

The probes are our own inputs plus the statement's examples, never a hidden test's input,
so the table can ship to the browser and any probe can be quoted to a student.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import io
import json
from dataclasses import asdict, dataclass, field
from functools import cache
from typing import Any

from grader.core import diagnosis as diagnosis_core
from grader.core import exercise
from grader.core.submission import LoadError

TABLE_VERSION = 3  # 2: probes are {"args", "kwargs", "origin"}, and the table names the function; 3: `rules`
MAX_TIMEOUTS = 2  # past this, a submission that hangs would spend minutes on probes that teach nothing


def _load(path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@cache
def reference_module(ex: exercise.Exercise):
    """`ex`'s reference solution, loaded in this (trusted) process."""
    return _load(ex.root / "solutions" / "reference.py", f"_exercise_{ex.id}_reference")


def trusted(ex: exercise.Exercise):
    """The exercise's trusted seam module: its misconception models (MODELS, PAIRS), probes() and its rules' words (RULES)."""
    module = ex.module("trusted")
    if module is None:
        raise LookupError("exercise.toml's [seam] names no trusted module (the misconception models)")
    return module


def value_normalize(ex: exercise.Exercise):
    """How the diagnosis compares returned values: the exercise's value rule's `normalize`, else plain data."""
    return getattr(ex.module("values"), "normalize", None) or diagnosis_core.normalize


def probes(ex: exercise.Exercise) -> list[dict]:
    """{"args", "kwargs", "origin"} for each probe: the exercise's own inputs and its statement's examples."""
    return [
        {"args": list(p["args"]), "kwargs": dict(p.get("kwargs", {})), "origin": p.get("origin", "probe")}
        for p in trusted(ex).probes()
    ]


# The table is a pure function of these files. Building it runs every model on every probe
# (about 0.3 s), which each `check` and `grade` paid before its first submission: it is kept
# in the exercise's cache folder (Exercise.cache) under a digest of them instead.
ENGINE_SOURCES = ("grader/judging/diagnose.py", "grader/core/diagnosis.py")


def table_sources(ex: exercise.Exercise) -> list:
    """The files the table depends on: the engine's diagnosis and the exercise's seam, reference and examples."""
    seam = [ex.path(part) for part in ("values", "trusted") if ex.path(part) is not None]
    return (
        [exercise.ENGINE_ROOT / name for name in ENGINE_SOURCES]
        + seam
        + [
            ex.root / "problem" / "exercise.toml",
            ex.root / "solutions" / "reference.py",
            ex.root / "hidden_tests" / "test_examples.py",
        ]
    )


@cache
def _table(ex: exercise.Exercise) -> dict:
    digest = hashlib.sha256()
    for path in table_sources(ex):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    path = ex.cache / f"diagnosis-table-{digest.hexdigest()[:20]}.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        pass
    table = _build_table(ex)
    try:
        from grader.reports.atomic import write_atomic

        write_atomic(path, json.dumps(table))  # whole or not at all: other processes may read it now
    except OSError:
        pass  # a read-only kit still works, building the table each time
    return table


def _build_table(ex: exercise.Exercise) -> dict:
    normalize = value_normalize(ex)
    table = {"version": TABLE_VERSION, "function": ex.function, "probes": probes(ex)}
    table["reference"] = _compact(diagnosis_core.run_probes(reference_module(ex), table, normalize))
    table["models"] = [_entry(m, table, normalize) for m in trusted(ex).MODELS]
    table["pairs"] = _evident_pairs(ex, table)
    table["rules"] = rule_words(ex)
    return table


def rule_words(ex: exercise.Exercise) -> dict[str, dict[str, str]]:
    """{"section", "rule"} of each rule of [scoring.rules], as the statement says it: the trusted module's RULES.

    A rule it does not word is named by its id (a diagnosis still names it, less well).
    """
    words = getattr(trusted(ex), "RULES", {})
    return {rule: {"section": words[rule][0], "rule": words[rule][1]} for rule in ex.scoring.get("rules", {}) if rule in words}


def _entry(model, table: dict, normalize) -> dict:
    return {
        "id": model.id,
        "when": model.when,
        "section": model.section,
        "rule": model.rule,
        "breaks": getattr(model, "breaks", "") or None,  # its rule of [scoring.rules], if it says
        "outputs": _compact(diagnosis_core.run_probes(model, table, normalize)),
    }


def _compact(outputs: list) -> list:
    # Far below diagnosis_core.TOLERANCE, and a much smaller table for the page to download.
    return [_compact(x) if isinstance(x, list) else round(x, 12) if isinstance(x, float) else x for x in outputs]


def _evident_pairs(ex: exercise.Exercise, table: dict) -> list[dict]:
    """The pairs whose answers show both mistakes, each different from every single model and earlier pair."""
    agree, reference = diagnosis_core.agree, table["reference"]
    singles = {m["id"]: m["outputs"] for m in table["models"]}
    kept: list[dict] = []
    for model in getattr(trusted(ex), "PAIRS", []):
        entry = _entry(model, table, value_normalize(ex))
        outputs = entry["outputs"]
        wrong = [i for i, got in enumerate(outputs) if not agree(got, reference[i])]
        # Each half must leave a trace: somewhere the pair differs from the other half alone.
        if not all(any(not agree(outputs[i], singles[other][i]) for i in wrong) for other in model.parts):
            continue
        if any(all(agree(x, y) for x, y in zip(outputs, seen)) for seen in [*singles.values(), *(k["outputs"] for k in kept)]):
            continue
        kept.append({"id": entry["id"], "parts": list(model.parts), "outputs": outputs})
    return kept


def browser_table(ex: exercise.Exercise) -> dict:
    """Plain JSON data for the page: the probes, and the reference's and every model's answers to them."""
    import copy

    return copy.deepcopy(_table(ex))


@dataclass
class Diagnosis:
    mistake: str | None  # a model's id, or None when no model matches
    kind: str  # model | models (two mistakes, mistake is "a+b") | unknown | no_answer
    message: str  # one sentence for the student
    example: str | None  # a call showing it (our probes or a visible test's input only)
    section: str | None
    rule: str | None
    explains_all: bool
    rules: list[str] = field(default_factory=list)  # the [scoring.rules] ids it names, the likeliest first

    @property
    def text(self) -> str:
        return diagnosis_core.full_text(asdict(self))

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "text": self.text}

    def render(self, color: bool = False) -> str:
        """The diagnosis for a terminal, after the test report."""
        label = "\033[1;33mDiagnosis:\033[0m" if color else "Diagnosis:"
        return f"\n{label} {self.text}"


def diagnose_submission(
    ex: exercise.Exercise, submission: Any, tests: list[dict] | None = None, budget: float = 30.0
) -> Diagnosis | None:
    """Run `ex`'s probes through the submission's function and name its mistake; None if it agrees with the reference.

    `tests`: the submission's test results as dicts (optional); when no model matches, the
    rules whose tests fail are named, with the smallest failing input a student may see.
    """
    table = _table(ex)
    # What the submission prints during probing is not part of any report.
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        if hasattr(submission, "evaluate"):
            outputs = _probe_in_batches(submission, table, budget, value_normalize(ex))
        else:
            guard = diagnosis_core.ProbeGuard(MAX_TIMEOUTS, budget)
            outputs = diagnosis_core.run_probes(submission, table, value_normalize(ex), guard)
    cut_short = any(out == {"error": "not_run"} for out in outputs)
    if cut_short and not all(isinstance(out, dict) and "error" in out for out in outputs):
        outputs = None  # some probes never ran: the answers we have could point at the wrong model; the tests still speak
    found = _diagnose_outputs(table, outputs, diagnosis_core.evidence(tests, ex) if tests else [])
    if found is None:
        return None
    return Diagnosis(
        found["mistake"],
        found["kind"],
        found["message"],
        found["example"],
        found["section"],
        found["rule"],
        found["explains_all"],
        found["rules"],
    )


def _probe_in_batches(sandbox: Any, table: dict, budget: float, normalize) -> list:
    """The probes' answers from a sandbox, all calls in one round trip (more only after a failure).

    The same answers as run_probes, under the same guard.
    """
    from grader.sandbox.host import decode

    calls = [[list(p["args"]), p["kwargs"]] for p in table["probes"]]
    guard = diagnosis_core.ProbeGuard(MAX_TIMEOUTS, budget)
    outputs: list = []
    while len(outputs) < len(calls):
        if guard.stopped():
            outputs += [dict(diagnosis_core.NOT_RUN) for _ in range(len(calls) - len(outputs))]
            break
        answers = sandbox.evaluate(calls[len(outputs) :])
        for answer in answers:
            if guard.out_of_time():
                answers.close()  # the sandbox is closed after the diagnosis: its child goes with it
                break
            outputs.append(normalize(decode(answer.value)) if answer.ok else guard.failed(answer.kind))
    return outputs


_FOUND: dict[tuple[int, str], dict | None] = {}  # what diagnose_outputs said, by its input: a class repeats a few kinds


def _diagnose_outputs(table: dict, outputs: list | None, found: list[dict]) -> dict | None:
    key = (id(table), json.dumps([outputs, found]))  # a table lives as long as the process (_table's cache)
    if key not in _FOUND:
        if len(_FOUND) > 10_000:
            _FOUND.clear()
        _FOUND[key] = diagnosis_core.diagnose_outputs(outputs, table, found)
    found = _FOUND[key]
    return dict(found) if found is not None else None


def diagnose_path(ex: exercise.Exercise, path, report, budget: float = 30.0) -> Diagnosis | None:
    """The diagnosis of a submission file, run in its own sandbox within `budget` seconds; `report` is its runner.Report."""
    from grader.judging.discovery import read_source
    from grader.sandbox.host import SandboxedSubmission

    return diagnose_made(
        ex,
        lambda: SandboxedSubmission.of(ex, path, read_source(path), budget),
        report,
        budget,
    )


def diagnose_made(ex: exercise.Exercise, make, report, budget: float = 30.0) -> Diagnosis | None:
    """The diagnosis of the submission that `make()` loads in a fresh jail; `report` is its runner.Report."""
    from grader.core.submission import LoadError

    # The tests loaded this file a moment ago, so a failure to load now is the machine's, not the file's: try twice.
    for attempt in range(2):
        try:
            submission = make()
            break
        except LoadError:
            if attempt:
                return None
    try:
        return diagnose_submission(ex, submission, tests=[asdict(t) for t in report.tests], budget=min(budget, 30.0))
    finally:
        submission.close()


if __name__ == "__main__":
    import json
    import sys

    # python -m grader.judging.diagnose [EXERCISE_DIR]: the table the page gets (default: the kit's own exercise)
    json.dump(
        browser_table(exercise.load(sys.argv[1] if len(sys.argv) > 1 else exercise.KIT_ROOT)), sys.stdout, ensure_ascii=False
    )
    print()


def diagnosis_of(ex: exercise.Exercise, sandbox: Any, result: dict) -> dict | None:
    """What misconception explains the failures of `result` (results.json's, graded in `sandbox`; None when nothing failed)."""
    if result["status"] != "graded" or result["passed"] == len(result["tests"]):
        return None
    try:
        # A fresh child, as `check` probes it: what the tests asked before cannot change the diagnosis.
        sandbox.restart(last=True)  # the submission's last fresh child: it keeps no copy of itself
        found = diagnose_submission(ex, sandbox, result["tests"])
    except LoadError:
        return None
    if found is None:
        return None
    return found.as_json() if hasattr(found, "as_json") else asdict(found)
