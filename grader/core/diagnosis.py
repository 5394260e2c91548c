"""Names a submission's likely mistake from its answers on the probe set. Pure: runs in the browser too.

It imports nothing from the reference or the models: the table it reads holds only their
outputs, computed at build time by grader.judging.diagnose.browser_table(). In Pyodide:

    found = diagnose(submission, table, test_results)   # a dict, or None: nothing to explain
    full_text(found) if found else None                  # the sentence and its example

which is run_probes, failing_calls and diagnose_outputs in one.

Outputs are normalized so they survive JSON: floats stay floats, ints become floats, None
stays None, a call that did not return is {"error": kind}, anything else is {"type": name}.
"""

from __future__ import annotations

import math
from typing import Any

TOLERANCE = 1e-9  # two ways of computing the same rounded score agree to far better than this


def normalize(value: Any) -> Any:
    """A returned value as plain JSON data, keeping only what the diagnosis compares."""
    if value is None:
        return None
    if isinstance(value, bool):
        return {"type": "bool"}
    if isinstance(value, float):
        number = float.__float__(value)
    elif isinstance(value, int):
        number = float(int.__index__(value))
    else:
        return {"type": getattr(value, "type_name", type(value).__name__)}
    if math.isnan(number) or math.isinf(number):
        return {"type": str(number)}
    return number


def error_marker(exc: BaseException) -> dict:
    """What a call that raised (or timed out) counts as; SubmissionError carries its kind."""
    return {"error": getattr(exc, "kind", "exception")}


def agree(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return ("error" in a and "error" in b) or a == b
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= TOLERANCE
    return a is None and b is None


def call_text(probe: dict) -> str:
    extra = "".join(f", {k}={v!r}" for k, v in probe["kwargs"].items())
    return f"meteor_score({probe['reference']!r}, {probe['candidate']!r}{extra})"


def shown(value: Any) -> str:
    if isinstance(value, dict):
        return "an error" if "error" in value else f"a {value['type']}"
    return repr(value)


def run_probes(submission: Any, table: dict) -> list:
    """Call `submission.meteor_score` on every probe; an exception becomes an error marker."""
    outputs = []
    for probe in table["probes"]:
        try:
            value = submission.meteor_score(probe["reference"], probe["candidate"], **probe["kwargs"])
        except Exception as exc:  # noqa: BLE001 - any failure is an answer here
            outputs.append(error_marker(exc))
        else:
            outputs.append(normalize(value))
    return outputs


def _size(probe: dict) -> tuple:
    return (len(probe["reference"]) + len(probe["candidate"]) + 8 * len(probe["kwargs"]), call_text(probe))


def _differs(outputs: list, reference: list) -> set[int]:
    return {i for i, (got, want) in enumerate(zip(outputs, reference)) if not agree(got, want)}


def best_model(outputs: list, table: dict) -> tuple[dict | None, set[int], set[int]]:
    """The model that explains most of the answers: it must agree wherever it differs from the reference.

    Pairs of mistakes count too; a pair can only match when the submission shows both halves,
    and a single mistake wins a tie.
    """
    wrong = _differs(outputs, table["reference"])
    best, best_diffs = None, set()
    for model in [*table["models"], *table.get("pairs", [])]:
        diffs = _differs(model["outputs"], table["reference"])
        if diffs and all(agree(outputs[i], model["outputs"][i]) for i in diffs) and len(diffs) > len(best_diffs):
            best, best_diffs = model, diffs
    return best, best_diffs, wrong


def failing_calls(tests: list[dict]) -> list[str]:
    """The inputs a student may see: the failing calls of the examples and properties tiers."""
    found = []
    for test in tests:
        if test.get("status") == "pass" or test.get("tier") not in ("examples", "properties"):
            continue
        lines = (test.get("message") or "").splitlines()
        if test["tier"] == "examples":
            calls = [line for line in lines[:1] if line.startswith("meteor_score(")]
        else:
            calls = [line.strip() for line in lines if line.startswith("meteor_score(") or line.startswith("  returned ")]
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
    probes = table["probes"]
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
            i = min(wrong, key=lambda i: (probes[i].get("origin") != "examples", _size(probes[i])))
            smallest = f"{call_text(probes[i])} returned {shown(outputs[i])}, but the rules give {shown(table['reference'][i])}"
        return {
            "mistake": None,
            "kind": "unknown",
            "section": None,
            "rule": None,
            "explains_all": False,
            "example": smallest,
            "message": f"Your scores don't match any mistake we know of. The smallest failing input: {smallest}.",
        }
    i = min(diffs, key=lambda i: _size(probes[i]))
    example = f"{call_text(probes[i])} returned {shown(outputs[i])}, but the rules give {shown(table['reference'][i])}"
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


def diagnose(submission: Any, table: dict, tests: list[dict] | None = None) -> dict | None:
    """Probe `submission` and name its mistake; `tests` are its test results (examples and properties are quoted)."""
    return diagnose_outputs(run_probes(submission, table), table, failing_calls(tests or []))
