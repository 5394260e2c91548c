"""Names a submission's likely mistake from its answers on the probe set. Pure: runs in the browser too.

It imports nothing from the reference or the models: the table it reads holds only their
outputs, computed at build time by grader.judging.diagnose.browser_table(). In Pyodide:

    found = diagnose(submission, table, test_results)   # a dict, or None: nothing to explain
    full_text(found) if found else None                  # the sentence and its example

which is run_probes, failing_calls and diagnose_outputs in one.

A probe is {"args": [...], "kwargs": {...}, "origin": ...}: any arity, any plain values. The
table names the exercise's function. Outputs are normalized so they survive JSON: by the
exercise's value rule (`normalize` in its [seam] values module) or, without one, as plain data:
numbers become floats, None, bools and strings stay, lists stay lists, a dict becomes
{"dict": [[key, value], ...]}, a call that did not return is {"error": kind}, anything else
is {"type": name}.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

TOLERANCE = 1e-9  # two ways of computing the same rounded score agree to far better than this


def normalize(value: Any) -> Any:
    """A returned value as plain JSON data, keeping only what the diagnosis compares."""
    kind = type(value)
    if value is None or kind is bool or kind is str:
        return value
    if kind in (int, float) or isinstance(value, float):
        number = float.__float__(value) if isinstance(value, float) else float(int.__index__(value))
        return {"type": str(number)} if math.isnan(number) or math.isinf(number) else number
    if kind in (list, tuple):
        return [normalize(v) for v in value]
    if kind is dict:
        return {"dict": [[normalize(k), normalize(v)] for k, v in value.items()]}
    return {"type": getattr(value, "type_name", kind.__name__)}


def error_marker(exc: BaseException) -> dict:
    """What a call that raised (or timed out) counts as; SubmissionError carries its kind."""
    return {"error": getattr(exc, "kind", "exception")}


def agree(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        if "error" in a and "error" in b:
            return True
        if "dict" in a and "dict" in b:
            return agree(a["dict"], b["dict"])
        return a == b
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= TOLERANCE
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(agree, a, b))
    if type(a) in (bool, str) and type(a) is type(b):
        return a == b
    return a is None and b is None


def call_text(probe: dict, function: str) -> str:
    """The call as Python source: `function(arg, ..., key=value)`."""
    shown = [repr(a) for a in probe["args"]] + [f"{k}={v!r}" for k, v in probe["kwargs"].items()]
    return f"{function}({', '.join(shown)})"


def shown(value: Any) -> str:
    if isinstance(value, dict):
        if "dict" in value:
            return "{" + ", ".join(f"{shown(k)}: {shown(v)}" for k, v in value["dict"]) + "}"
        return "an error" if "error" in value else f"a {value['type']}"
    if isinstance(value, list):
        return "[" + ", ".join(map(shown, value)) + "]"
    return repr(value)


NOT_RUN = {"error": "not_run"}


class ProbeGuard:
    """The one rule for probing a submission that misbehaves: when it stops, and what its failed calls count as.

    A call that raised or timed out is its error marker. Past `timeouts_allowed` timeouts, past
    `seconds`, or once the submission's own budget is spent (a "not_run" answer), the probes
    left are not run: a submission that hangs would spend minutes on probes that teach nothing.
    The CLI (one call at a time or in batches) and the page use it alike.
    """

    def __init__(self, timeouts_allowed: int, seconds: float | None = None, clock: Callable[[], float] = time.monotonic):
        self.timeouts_allowed = timeouts_allowed
        self.clock = clock
        self.deadline = None if seconds is None else clock() + seconds
        self.timeouts = 0
        self.spent = False

    def out_of_time(self) -> bool:
        return self.deadline is not None and self.clock() > self.deadline

    def stopped(self) -> bool:
        return self.spent or self.timeouts > self.timeouts_allowed or self.out_of_time()

    def failed(self, kind: str) -> dict:
        """The marker of a call that did not return, counted."""
        self.timeouts += kind == "timeout"
        self.spent = self.spent or kind == "not_run"
        return {"error": kind}


def run_probes(
    submission: Any, table: dict, normalizer: Callable[[Any], Any] | None = None, guard: ProbeGuard | None = None
) -> list:
    """Call the table's function of `submission` on every probe; an exception becomes an error marker.

    `normalizer`: the exercise's value rule's `normalize`, when it has one (else plain data).
    `guard`: when to stop probing a submission that misbehaves (never, without one).
    """
    function = getattr(submission, table["function"])
    as_data = normalizer or normalize
    guard = guard or ProbeGuard(len(table["probes"]))
    outputs = []
    for probe in table["probes"]:
        if guard.stopped():
            outputs.append(dict(NOT_RUN))
            continue
        try:
            value = function(*probe["args"], **probe["kwargs"])
        except Exception as exc:
            outputs.append(guard.failed(error_marker(exc)["error"]))
        else:
            outputs.append(as_data(value))
    return outputs


def _weight(value: Any) -> int:
    return len(value) if isinstance(value, str) else len(repr(value))


def _size(probe: dict, function: str) -> tuple:
    return (sum(map(_weight, probe["args"])) + 8 * len(probe["kwargs"]), call_text(probe, function))


def _differs(outputs: list, reference: list) -> set[int]:
    return {i for i, (got, want) in enumerate(zip(outputs, reference)) if not agree(got, want)}


_MODEL_DIFFS: dict[int, tuple[dict, list, set[int]]] = {}  # by id(model), with the model and reference it holds


def _model_differs(model: dict, reference: list) -> set[int]:
    """Where a model differs from the reference: the same for every submission, so found once per model."""
    held = _MODEL_DIFFS.get(id(model))
    if held is None or held[0] is not model or held[1] is not reference:
        held = _MODEL_DIFFS[id(model)] = (model, reference, _differs(model["outputs"], reference))
    return held[2]


def best_model(outputs: list, table: dict) -> tuple[dict | None, set[int], set[int]]:
    """The model that explains most of the answers: it must agree wherever it differs from the reference.

    Pairs of mistakes count too; a pair can only match when the submission shows both halves,
    and a single mistake wins a tie.
    """
    wrong = _differs(outputs, table["reference"])
    best, best_diffs = None, set()
    for model in [*table["models"], *table.get("pairs", [])]:
        diffs = _model_differs(model, table["reference"])
        if diffs and all(agree(outputs[i], model["outputs"][i]) for i in diffs) and len(diffs) > len(best_diffs):
            best, best_diffs = model, diffs
    return best, best_diffs, wrong


def failing_calls(tests: list[dict], function: str) -> list[str]:
    """The inputs a student may see: the failing calls of the examples and properties tiers."""
    opening = f"{function}("
    found = []
    for test in tests:
        if test.get("status") == "pass" or test.get("tier") not in ("examples", "properties"):
            continue
        lines = (test.get("message") or "").splitlines()
        if test["tier"] == "examples":
            calls = [line for line in lines[:1] if line.startswith(opening)]
        else:
            calls = [line.strip() for line in lines if line.startswith(opening) or line.startswith("  returned ")]
        if calls:
            found.append("; ".join(calls))
    return found


def diagnose_outputs(outputs: list, table: dict, failing: list[str] | None = None) -> dict | None:
    """One sentence naming the mistake behind `outputs`, or None when they agree with the reference.

    `kind` is "model" (a known mistake, named by `mistake`), "models" (two at once: `mistake` is
    "a+b"), "unknown" (no model matches; `example` is the smallest failing input) or "no_answer"
    (every call raised or timed out).
    """
    model, diffs, wrong = best_model(outputs, table)
    if not wrong:
        return None
    probes, function = table["probes"], table["function"]
    if all(isinstance(got, dict) and "error" in got for got in outputs):
        # Every model that raises somewhere would "match"; none of them says why this one never returns.
        return {
            "mistake": None,
            "kind": "no_answer",
            "section": None,
            "rule": None,
            "explains_all": False,
            "example": None,
            "message": "Your function raised an error or ran out of time on every input we tried, so its answers show no particular mistake.",
        }
    if model is None:
        smallest = min(failing, key=len) if failing else None
        if smallest is None:
            # The statement's examples first: the student has already seen those inputs.
            i = min(wrong, key=lambda i: (probes[i].get("origin") != "examples", _size(probes[i], function)))
            smallest = f"{call_text(probes[i], function)} returned {shown(outputs[i])}, but the rules give {shown(table['reference'][i])}"
        return {
            "mistake": None,
            "kind": "unknown",
            "section": None,
            "rule": None,
            "explains_all": False,
            "example": smallest,
            "message": f"Your scores don't match any mistake we know of. The smallest failing input: {smallest}.",
        }
    i = min(diffs, key=lambda i: _size(probes[i], function))
    example = f"{call_text(probes[i], function)} returned {shown(outputs[i])}, but the rules give {shown(table['reference'][i])}"
    singles = {m["id"]: m for m in table["models"]}
    parts = [singles[p] for p in model.get("parts", [model["id"]])]
    when = ", and ".join(p["when"] for p in parts)
    rules = "; and ".join(f"{p['rule']} ({p['section']})" for p in parts)
    message = f"Your scores match what happens when {when}: {rules}."
    explains_all = wrong <= diffs
    if not explains_all:
        message += " Some other results differ too, so there may be another mistake."
    return {
        "mistake": model["id"],
        "kind": "model" if len(parts) == 1 else "models",
        "section": "; ".join(p["section"] for p in parts),
        "rule": "; ".join(p["rule"] for p in parts),
        "explains_all": explains_all,
        "example": example,
        "message": message,
    }


def full_text(diagnosis: dict) -> str:
    """The sentence and, when a model matched, the example that shows it."""
    if diagnosis.get("mistake") is None or not diagnosis.get("example"):
        return diagnosis.get("message", "")
    return f"{diagnosis['message']} For example, {diagnosis['example']}."


def diagnose(
    submission: Any, table: dict, tests: list[dict] | None = None, normalizer: Callable[[Any], Any] | None = None
) -> dict | None:
    """Probe `submission` and name its mistake; `tests` are its test results (examples and properties are quoted)."""
    found = run_probes(submission, table, normalizer)
    return diagnose_outputs(found, table, failing_calls(tests or [], table["function"]))
