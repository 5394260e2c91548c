"""Names a submission's likely mistake from its answers on the probe set. Pure: runs in the browser too.

It imports nothing from the reference or the models: the table it reads holds only their
outputs, computed at build time by grader.judging.diagnose.browser_table(). In Pyodide:

    found = diagnose(submission, table, test_results, ex)  # a dict, or None: nothing to explain
    full_text(found) if found else None                     # the sentence and its example

which is run_probes, evidence and diagnose_outputs in one.

A misconception model names the mistake where one fits. Where none does, the failing tests say
where to look: the statement's rules they check (exercise.toml's [scoring.rules], or the
`[rule ...]` a test's message ends with), each with how many of its tests fail, and the smallest
failing input a student may see: a probe, or a failing call of a tier that `feeds_diagnosis`.

A probe is {"args": [...], "kwargs": {...}, "origin": ...}: any arity, any plain values. The
table names the exercise's function. Outputs are normalized so they survive JSON: by the
exercise's value rule (`normalize` in its [seam] values module) or, without one, as plain data:
numbers become floats, None, bools and strings stay, lists stay lists, a dict becomes
{"dict": [[key, value], ...]}, a call that did not return is {"error": kind}, anything else
is {"type": name}.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from typing import Any

from grader.core import scoring

TOLERANCE = 1e-9  # two ways of computing the same rounded score agree to far better than this
# A model fits when it explains at least this share of the probes the submission gets wrong. One
# that agrees on a handful of probes while the rest are wrong for other reasons names a mistake the
# submission may not make; it still points the diagnosis at its rule (_nearest_models).
MIN_EXPLAINED = 0.5


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
    best, best_diffs = None, set[int]()
    for model in [*table["models"], *table.get("pairs", [])]:
        diffs = _model_differs(model, table["reference"])
        if diffs and all(agree(outputs[i], model["outputs"][i]) for i in diffs) and len(diffs) > len(best_diffs):
            best, best_diffs = model, diffs
    return best, best_diffs, wrong


# The rule a test's message names at its end: "... [rule: Matching: ...]" or "... [rule 2: the edit distance]".
RULE_MARK = re.compile(r"\[(rule\b[^\[\]\n]*)\]\s*$")
# A test result's status that says the submission broke the test's rule (a timeout says it was slow;
# not_run, that it never ran).
BROKEN = ("fail", "error")
MAX_RULES = 3  # named in the sentence; the others are counted
QUOTE_LIMIT = 300  # characters of a failing call quoted: what a submission raises can be any length


def evidence(tests: list[dict], ex: Any) -> list[dict]:
    """What the tests of the tiers students can read tell the diagnosis, one dict per test.

    `rule`: the rule it checks (its [scoring.rules] rule, else the `[rule ...]` its message ends
    with, else None); `broken`: whether it failed or raised; `call`: where its tier feeds the
    diagnosis, the failing call it quotes ({"text", "size"}), else None. A secret tier's tests
    tell nothing: the page never runs them, and their inputs are never quoted.
    """
    rule_of = scoring.policy(ex).rule_of
    found = []
    for test in tests:
        tier = ex.tiers.get(test.get("tier"))
        if tier is None or not tier.public:
            continue
        message = test.get("message") or ""
        mark = RULE_MARK.search(message)
        rule = rule_of.get(scoring.key(test["tier"], test["name"])) or (mark.group(1) if mark else None)
        broken = test.get("status") in BROKEN
        call = quoted_call(message, ex.function) if broken and tier.feeds_diagnosis else None
        found.append({"rule": rule, "broken": broken, "call": call})
    return found


def quoted_call(message: str, function: str) -> dict | None:
    """The calls a failure's message quotes, and what it says of them, as one line: {"text", "size"}.

    A message that starts with the call ("f(x): expected 1, got 2") is kept whole; else each call
    line (with the "  returned ..." line after it) is followed by the message's first line.
    """
    lines = message.splitlines()
    opening = f"{function}("
    if lines and lines[0].startswith(opening):
        return {"text": _cut(lines[0]), "size": len(lines[0].partition("): ")[0])}
    calls, size = [], 0
    for i, line in enumerate(lines):
        if line.startswith(opening):
            after = lines[i + 1].strip() if i + 1 < len(lines) else ""
            calls.append(f"{line} {after}" if after.startswith("returned ") else line)
            size += len(line)
    if not calls:
        return None
    said = lines[0] if not lines[0].startswith(opening) else ""
    text = ", then ".join(calls) + (f": {said}" if said else "")
    return {"text": _cut(text), "size": size}


def _cut(text: str) -> str:
    return text if len(text) <= QUOTE_LIMIT else text[: QUOTE_LIMIT - 1] + "…"


def _rules_failing(found: list[dict], table: dict, wrong: set[int] | None) -> list[tuple[str, int, int]]:
    """(rule, tests broken, tests) of each rule with a broken test, the likeliest first.

    Likeliest: the rule of the model whose wrong answers fall where the submission's do (the
    most probes in common, for the fewest apart: no model need match), then the rule with the
    largest share of its tests broken. A mistake in one step breaks tests of other rules too,
    since each checks the whole score; the probes say which step it is more often than the shares.
    """
    broken: dict[str, int] = {}
    total: dict[str, int] = {}
    for item in found:
        if item["rule"] is not None:
            total[item["rule"]] = total.get(item["rule"], 0) + 1
            broken[item["rule"]] = broken.get(item["rule"], 0) + item["broken"]
    order = list(total)
    near = _nearest_models(table, wrong) if wrong else {}
    failing = [(rule, broken[rule], total[rule]) for rule in order if broken[rule]]
    return sorted(failing, key=lambda r: (-near.get(r[0], 0.0), -r[1] / r[2], -r[1], order.index(r[0])))


def _nearest_models(table: dict, wrong: set[int]) -> dict[str, float]:
    """For each rule a model says it breaks: how close that rule's closest model comes to `wrong` (Jaccard, 0 to 1)."""
    near: dict[str, float] = {}
    for model in table["models"]:
        rule = model.get("breaks")
        diffs = _model_differs(model, table["reference"])
        if rule and diffs:
            near[rule] = max(near.get(rule, 0.0), len(wrong & diffs) / len(wrong | diffs))
    return near


def _smallest_call(found: list[dict], rule: str | None = None) -> str | None:
    calls = [item["call"] for item in found if item["call"] and (rule is None or item["rule"] == rule)]
    return min(calls, key=lambda c: (c["size"], c["text"]))["text"] if calls else None


def _smallest_probe(wrong: set[int], table: dict) -> int:
    """The smallest of these probes, the statement's examples first: the student has already seen those inputs."""
    probes, function = table["probes"], table["function"]
    return min(wrong, key=lambda i: (probes[i].get("origin") != "examples", _size(probes[i], function)))


def _probe_example(i: int, outputs: list, table: dict) -> str:
    return f"{call_text(table['probes'][i], table['function'])} returned {shown(outputs[i])}, but the rules give {shown(table['reference'][i])}"


def _rule_words(rule: str, table: dict) -> tuple[str, str | None]:
    """(the rule as the statement says it, where it lives), from the table's `rules`, else as the tests name it."""
    named = table.get("rules", {}).get(rule)
    return (named["rule"], named["section"]) if named else (rule, None)


def _by_rules(outputs: list | None, table: dict, wrong: set[int], found: list[dict]) -> dict | None:
    """The rules whose tests fail, most broken first, with the smallest failing input a student may see; None without any."""
    failing = _rules_failing(found, table, wrong)
    if not failing:
        return None
    named = failing[:MAX_RULES]
    words, section = _rule_words(named[0][0], table)
    message = (
        "No mistake we know of matches your scores, but the failing tests point to "
        f"{f'{section}: ' if section else ''}{words} ({named[0][1]} of its {named[0][2]} tests fail)."
    )
    # The other rules, briefly: where each lives in the statement, its tests broken; one place once.
    also: dict[str, list[int]] = {}
    for rule, broken, total in failing[1:]:
        words, section = _rule_words(rule, table)
        counts = also.setdefault(section or words, [0, 0])
        counts[0], counts[1] = counts[0] + broken, counts[1] + total
    if also:
        listed = [f"{where} ({broken} of {total})" for where, (broken, total) in list(also.items())[:MAX_RULES]]
        if len(also) > MAX_RULES:
            listed.append(f"{len(also) - MAX_RULES} more")
        message += f" Tests of other rules fail too: {'; '.join(listed)}."
    # A call of a test of the first rule shows it best; else any failing call a student may see, else a probe.
    example = _smallest_call(found, named[0][0])
    if example is None and wrong and outputs is not None:
        example = _probe_example(_smallest_probe(wrong, table), outputs, table)
    words_of = [_rule_words(rule, table) for rule, _, _ in named]
    return _said(
        "rules",
        message,
        example or _smallest_call(found),
        section="; ".join(section or "" for _, section in words_of),
        rule="; ".join(w for w, _ in words_of),
        rules=[rule for rule, _, _ in named],
    )


def _said(kind: str, message: str, example: str | None, **fields: Any) -> dict:
    """A diagnosis: what diagnose_outputs returns, every field present."""
    return (
        {"mistake": None, "kind": kind, "section": None, "rule": None, "rules": [], "explains_all": False}
        | fields
        | {
            "example": example,
            "message": message,
        }
    )


def _constant(outputs: list, reference: list) -> bool:
    """The same answer to every probe, where the rules give several."""
    return all(agree(got, outputs[0]) for got in outputs) and not all(agree(want, reference[0]) for want in reference)


def diagnose_outputs(outputs: list | None, table: dict, found: list[dict] | None = None) -> dict | None:
    """One sentence naming the mistake behind `outputs`, or None when nothing is wrong.

    `outputs`: the answers to the probes, or None when they cannot be trusted (cut short by a
    timeout: they could point at the wrong model); then only the tests speak.
    `found`: what the tests said (`evidence`). `kind` is "model" (a known mistake, named by
    `mistake`), "models" (two at once: `mistake` is "a+b"), "rules" (no model fits: the
    statement's rules whose tests fail, the likeliest first), "unknown" (no model fits and no
    failing test names a rule; `example` is the smallest failing input), "constant" (the same
    answer to every probe, where the rules give several) or "no_answer" (every call raised or
    timed out). `rules`: the ids of [scoring.rules] it names (a model's own, where
    the model says which it breaks).
    """
    found = found or []
    model, diffs, wrong = best_model(outputs, table) if outputs is not None else (None, set(), set())
    if model is not None and len(diffs) < MIN_EXPLAINED * len(wrong):
        model = None
    if not wrong and not any(item["broken"] for item in found):
        return None
    if outputs and all(isinstance(got, dict) and "error" in got for got in outputs):
        # Every model that raises somewhere would "match"; none of them says why this one never returns.
        message = (
            "Your function raised an error or ran out of time on every input we tried, so its answers show no particular mistake."
        )
        return _said("no_answer", message, _smallest_call(found))  # a visible test's call, with what it raised
    if model is not None and outputs is not None:
        return _by_model(model, diffs, wrong, outputs, table)
    if outputs and wrong and _constant(outputs, table["reference"]):
        # Whatever the input, one answer: no rule's tests say more than that.
        message = f"Your function returned {shown(outputs[0])} for every input we tried, whatever the input."
        return _said("constant", message, _probe_example(_smallest_probe(wrong, table), outputs, table), explains_all=True)
    by_rules = _by_rules(outputs, table, wrong, found)
    if by_rules is not None:
        return by_rules
    if (smallest := _smallest_call(found)) is None and wrong and outputs is not None:
        smallest = _probe_example(_smallest_probe(wrong, table), outputs, table)
    if smallest is None:
        return None  # only tests of no rule failed, with nothing to quote: nothing to say
    return _said("unknown", f"Your scores don't match any mistake we know of. The smallest failing input: {smallest}.", smallest)


def _by_model(model: dict, diffs: set[int], wrong: set[int], outputs: list, table: dict) -> dict:
    """The sentence of a model that fits (or a pair), with the smallest probe where it differs from the reference."""
    probes, function = table["probes"], table["function"]
    example = _probe_example(min(diffs, key=lambda i: _size(probes[i], function)), outputs, table)
    singles = {m["id"]: m for m in table["models"]}
    parts = [singles[p] for p in model.get("parts", [model["id"]])]
    when = ", and ".join(p["when"] for p in parts)
    rules = "; and ".join(f"{p['rule']} ({p['section']})" for p in parts)
    message = f"Your scores match what happens when {when}: {rules}."
    explains_all = wrong <= diffs
    if not explains_all:
        message += " Some other results differ too, so there may be another mistake."
    return _said(
        "model" if len(parts) == 1 else "models",
        message,
        example,
        mistake=model["id"],
        section="; ".join(p["section"] for p in parts),
        rule="; ".join(p["rule"] for p in parts),
        rules=list(dict.fromkeys(p["breaks"] for p in parts if p.get("breaks"))),
        explains_all=explains_all,
    )


def full_text(diagnosis: dict) -> str:
    """The sentence and, when it names a mistake or rules, the example that shows it."""
    if diagnosis.get("kind") not in ("model", "models", "rules", "constant", "no_answer") or not diagnosis.get("example"):
        return diagnosis.get("message", "")
    return f"{diagnosis['message']} For example, {diagnosis['example']}."


def diagnose(
    submission: Any,
    table: dict,
    tests: list[dict] | None = None,
    ex: Any = None,
    normalizer: Callable[[Any], Any] | None = None,
) -> dict | None:
    """Probe `submission` and name its mistake; `tests`: its test results, read as `ex`'s tiers and rules say."""
    found = run_probes(submission, table, normalizer)
    return diagnose_outputs(found, table, evidence(tests, ex) if tests and ex is not None else [])
