"""What `meteor-kit new` writes (grader/cli/new.py reads the command line): a small exercise that runs at once.

FILES are string.Templates ($name is filled in, $$ is a dollar sign); `render` fills them in
from the signature. The exercise checks a placeholder rule, "return the arguments, in order, as
a list", so that every part runs before the author writes the real one: each part to replace
says TODO.
"""

from __future__ import annotations

import json
import string
from dataclasses import dataclass
from typing import Any

# Placeholder arguments, one pool per use, so that no twin or probe repeats a visible test's call.
POOLS = {
    "example": ("one", "two", "three", "four", "five"),
    "hidden": ("north", "south", "east", "west", "up"),
    "twin_example": ("red", "green", "blue", "white", "black"),
    "twin_hidden": ("cat", "dog", "owl", "fox", "eel"),
    "probe": ("sun", "moon", "star", "sky", "rain"),
}


@dataclass(frozen=True)
class Signature:
    function: str
    positional: list[str]
    keywords: dict[str, Any]  # name -> default

    def text(self) -> str:
        return f"{self.function}({self.params()})"

    def params(self) -> str:
        return ", ".join([*self.positional, *(f"{k}={lit(v)}" for k, v in self.keywords.items())])


def lit(value: Any) -> str:
    """A Python literal of plain data, strings in double quotes (as ruff's formatter writes them)."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(map(lit, value)) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(map(lit, value)) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{lit(k)}: {lit(v)}" for k, v in value.items()) + "}"
    return repr(value)


def _other(value: Any) -> Any:
    """Another value of a default's type (None: none to give)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    return value + "!" if isinstance(value, str) else None


def render(sig: Signature, title: str, exercise_id: str) -> dict[str, str]:
    """Each file of the new exercise, by its path in the folder."""
    changed = next(((k, v) for k, v in sig.keywords.items() if _other(v) is not None), None)

    def words(pool: str) -> list[str]:
        names = POOLS[pool]
        return [names[i % len(names)] + (str(i // len(names)) if i >= len(names) else "") for i in range(len(sig.positional))]

    def row(pool: str, turns: int = 0) -> tuple[list[str], dict[str, Any]]:
        kwargs = {}
        if changed and turns:
            kwargs[changed[0]] = _other(changed[1]) if turns == 1 else _other(_other(changed[1]))
        return words(pool), kwargs

    def answer(args: list[str], kwargs: dict[str, Any]) -> str:  # the placeholder rule: the arguments, as a list
        return lit([*args, *({**sig.keywords, **kwargs}.values())])

    def listed(args: list[str], kwargs: dict[str, Any]) -> tuple[str, str]:
        return ", ".join(map(lit, args)), ", ".join(f"{lit(k)}: {lit(v)}" for k, v in kwargs.items())

    def as_call(args: list[str], kwargs: dict[str, Any]) -> str:
        return ", ".join([*map(lit, args), *(f"{k}={lit(v)}" for k, v in kwargs.items())])

    example, hidden, probe = row("example"), row("hidden", 1), row("probe", 1)
    if changed:  # the placeholder rule, that argument's default in its place
        name = changed[0]
        model = [f"ignores_{name}", f"{name} is ignored and its default always used", "rule 1, First rule"]
        model += [f"use every argument, {name} too", "first"]
        kept = [lit(sig.keywords[n]) if n == name else n for n in [*sig.positional, *sig.keywords]]
        answer_of = f"lambda {sig.params()}: [{', '.join(kept)}]"
    else:
        model = ["prints_instead_of_returning", "the answer is printed, not returned", "rule 1, First rule"]
        model += ["return the answer", "first"]
        answer_of = "lambda *args, **kwargs: None"
    values = {
        "id": json.dumps(exercise_id),
        "title": json.dumps(title, ensure_ascii=False),
        "title_text": title,
        "function": sig.function,
        "signature": sig.text(),
        "signature_toml": json.dumps(sig.text(), ensure_ascii=False),
        "params": sig.params(),
        "names": ", ".join([*sig.positional, *sig.keywords]),
        "example_call": f"{sig.function}({as_call(*example)})",
        "example_answer": answer(*example),
        "hidden_answer": answer(*hidden),
        "model": "".join(f"        {lit(part)},\n" for part in model) + f"        answer={answer_of},",
        "arity": str(len(sig.positional)),
        "given": ", ".join(f"{p}=TEXTS" for p in sig.positional),
        "names_drawn": ", ".join(sig.positional),
        "twin_example": as_call(*row("twin_example")),
        "twin_hidden": as_call(*row("twin_hidden", 2)),
        "twin_strategies": f'"{sig.positional[0]}": st.text(alphabet="xyz", min_size=1, max_size=8)',
    }
    for name, (args, kwargs) in (("example", example), ("hidden", hidden), ("probe", probe)):
        values[f"{name}_args"], values[f"{name}_kwargs"] = listed(args, kwargs)
        values[f"{name}_tuple"] = lit(tuple(args))
    return {path: string.Template(text).substitute(values) for path, text in FILES.items()}


FILES = {
    "problem/exercise.toml": """\
# The one place that says what the exercise is: the CLI, the grader and the page read it (docs/writing-an-exercise.md).
id = $id
title = $title
difficulty = "medium"
function = "$function"
signature = $signature_toml  # the one source of the parameters' defaults

# The seam: this exercise's own modules the engine uses (paths inside this folder).
[seam]
values = "problem/values.py"             # how a returned value is judged; ships to the page
trusted = "solutions/misconceptions.py"  # the misconception models, the probes, the rules' words; never shipped
# page = "solutions/page.py"             # optional: the page's Try it examples, computed at build time
# explain = "solutions/explain.py"       # optional: `meteor-kit explain`
# widget = "problem/try_it.js"           # optional: the page's Try it panel (else one text field per parameter)

[limits]
call_timeout = 2.0          # seconds for one call into the submission
budget = 60.0               # seconds for one submission in all: its load and every call
browser_test_timeout = 5.0  # seconds before the page interrupts a test run
browser_run_budget = 20.0   # seconds for a whole Run tests in the page
memory_mb = 512             # the sandbox's address-space limit
after_timeout = 0.05        # CPU seconds a call has at least once one of the submission's timed out (audit checks it)

[hypothesis]
examples = 25           # examples per property test (the page runs them too)
private_examples = 200  # inputs of the private tier's comparison with the reference

# A tier is data (docs/tests-and-tiers.md): its tests are hidden_tests/test_<name>.py, marked
# pytest.mark.tier("<name>"). A browser tier ships to the page, inputs included; a tier without
# browser is secret, and runs after the others (fresh_child = true: in a child of its own).
[tiers.examples]
points = 1
browser = true
shows_inputs = true   # a failure names its call: students see it whole
shows_printed = true  # students see what the submission printed in its tests
description = "The statement's examples: you see the input, the expected value and what came back."

[tiers.hidden]
points = 2
browser = true
title = "Hidden tests"
description = "You see each test's name and message, not its input."

[tiers.properties]
points = 2
browser = true
shows_inputs = true
description = "Invariants checked on generated inputs; a failure shows the smallest counterexample."

[tiers.private]
points = 3
description = "Instructors only: the comparison with the reference, and each visible test's twin."

# When a test's points are paid (docs/scoring.md); verdicts never change. A test's key is "<tier>-<id>".
# 1. A visible test pays only if its twin, test_twin[<key>] in test_private.py, passes too.
# 2. A test some constant passes with its twin (`constant_passes`) pays only alongside a paid test of
#    its rule that no constant passes, or of the rule `anchors` names for it (for a rule every test
#    of which a constant passes). `meteor-kit audit` names a key missing from either.
[scoring]
anchors = {}
constant_passes = ["properties-same_answer_twice"]

# TODO: each visible test's rule of the statement (the ids are yours; solutions/misconceptions.py's
# RULES words them as the statement does).
[scoring.rules]
first = ["examples-first_example", "hidden-first_rule", "properties-same_answer_twice"]
""",
    "problem/statement.md": """\
# $title_text

<!-- What students read: Markdown, with KaTeX math between dollar signs. Number the rules: each test checks one
     (exercise.toml's [scoring.rules]), and the diagnosis quotes them (solutions/misconceptions.py's RULES). -->

Write `$signature`: TODO, what it returns, in one sentence.

1. **First rule.** TODO: the template's placeholder rule, which its tests check until you replace
   them: return the arguments, in order, as a list.

Example: `$example_call` is `$example_answer`.
""",
    "problem/starter.py": '''\
def $function($params):
    """TODO: what it returns, in one line (the page's editor starts with this file)."""
    raise NotImplementedError("write $function here")
''',
    "problem/values.py": '''\
"""How a returned value is judged (exercise.toml [seam] values). Ships to the page: it imports grader.core only.

The tests call `expect`. Write your own checks beside it where plain equality is not the rule (a
tolerance, a rounding, an order that does not matter), each raising WrongAnswer with the message
students see. A `normalize(value)` here would say how the diagnosis compares answers; without
one, they are compared as plain data.
"""

from __future__ import annotations

from grader.core.checks import WrongAnswer, same_plain


def shown(value: object) -> str:
    """A value as a message shows it: its repr, cut short (what crossed the sandbox is plain data, or Opaque)."""
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def same(got: object, want: object) -> bool:
    """Plain data equal to `want`: the same shape (a list and a tuple alike), numbers within 1e-9, a bool never a number."""
    return same_plain(got, want)


def expect(got: object, want: object, *, call: str | None = None) -> object:
    """Pass when `got` is `want`; else WrongAnswer, naming the call where the test shows its inputs."""
    if not same(got, want):
        where = f"{call}: " if call else ""
        raise WrongAnswer(f"{where}expected {shown(want)}, got {shown(got)}")
    return got
''',
    "solutions/reference.py": '''\
"""The reference solution: the twins, the private tier and the diagnosis take their answers from it. Never shipped."""


def $function($params):
    # TODO: write the reference here. `meteor-kit check --exercise DIR DIR/solutions/reference.py` then passes
    # every test once the tests check your rules; the template's tests check the placeholder rule
    # (return [$names]). Until you replace it, this placeholder fails them, and `meteor-kit audit` says so.
    return "TODO: write $function in solutions/reference.py"
''',
    "solutions/misconceptions.py": '''\
"""The misconception models, the probes and the rules' words (exercise.toml [seam] trusted). Never shipped.

A model is the reference with one rule broken as students break it. The engine runs the reference
and every model on the probes; a failing submission that agrees with a model wherever the model
differs from the reference is told that mistake (docs/feedback.md). Where none fits, the diagnosis
names the rules whose tests fail, in RULES's words.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

# TODO: each rule of exercise.toml's [scoring.rules], as the statement says it: (where, the rule).
RULES = {
    "first": ("rule 1, First rule", "return the arguments, in order, as a list"),
}


@dataclass(frozen=True)
class Model:
    id: str
    when: str  # completes "Your scores match what happens when ..."
    section: str  # where its rule lives in the statement
    rule: str  # the rule it breaks, as the statement says it
    breaks: str  # that rule's id in [scoring.rules]
    answer: Callable[..., object]  # what the function returns with this mistake

    def $function(self, *args, **kwargs):
        return self.answer(*args, **kwargs)


# TODO: one model per classic mistake: the reference's computation with one step replaced, each with a
# probe where it differs from the reference.
MODELS = [
    Model(
$model
    ),
]
PAIRS: list = []  # optional: models of two mistakes at once, each with `parts` (two ids)


def probes() -> list[dict]:
    """The diagnosis's inputs: the statement's examples, then ours. Never a hidden test's input: probes are quoted."""
    return [
        {"args": [$example_args], "kwargs": {$example_kwargs}, "origin": "examples"},
        {"args": [$probe_args], "kwargs": {$probe_kwargs}, "origin": "probe"},
    ]
''',
    "hidden_tests/conftest.py": '''\
"""The engine's test plumbing (the `submission` fixture, tiers, the hypothesis profile). Keep it as it is."""

from grader.core.tests_plugin import *  # noqa: F403 - pytest reads the hooks and the fixture from this module
''',
    "hidden_tests/test_examples.py": '''\
"""Tier `examples`: the statement's examples. Students see each input, the expected value and what came back."""

import pytest

from grader.core import exercise
from grader.core.submission import SubmissionError

VALUES = exercise.holding(__file__).module("values")  # the value rule of the exercise holding this file

pytestmark = pytest.mark.tier("examples")

# TODO: the statement's examples, name -> (arguments, keyword arguments, the answer). They are public:
# solutions/misconceptions.py's probes quote the same calls.
EXAMPLES = {
    "first_example": ($example_tuple, {$example_kwargs}, $example_answer),
}


@pytest.mark.parametrize("name", EXAMPLES)
def test_statement_example(submission, name):
    args, kwargs, want = EXAMPLES[name]
    call = f"$function({', '.join([*map(repr, args), *(f'{k}={v!r}' for k, v in kwargs.items())])})"
    try:
        got = submission.$function(*args, **kwargs)
    except SubmissionError as exc:
        exc.message = f"{call}: {exc.message}"
        raise
    VALUES.expect(got, want, call=call)
''',
    "hidden_tests/test_hidden.py": '''\
"""Tier `hidden`: students see each test's name and message, never its input."""

import pytest

from grader.core import exercise

VALUES = exercise.holding(__file__).module("values")  # the value rule of the exercise holding this file

pytestmark = pytest.mark.tier("hidden")

# TODO: a few cases per rule, name -> (arguments, keyword arguments, the answer, the rule as students read it);
# each name's rule is in exercise.toml's [scoring.rules], and a message here never quotes the input.
CASES = {
    "first_rule": ($hidden_tuple, {$hidden_kwargs}, $hidden_answer, "rule 1: every argument, in order"),
}


@pytest.mark.parametrize("name", CASES)
def test_rule(submission, name):
    args, kwargs, want, rule = CASES[name]
    try:
        VALUES.expect(submission.$function(*args, **kwargs), want)
    except AssertionError as exc:
        raise AssertionError(f"{exc} [{rule}]") from None
''',
    "hidden_tests/test_properties.py": '''\
"""Tier `properties`: invariants on generated inputs; a failure shows the simplest counterexample."""

import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from grader.core import exercise
from grader.core.checks import WrongAnswer

VALUES = exercise.holding(__file__).module("values")  # the value rule of the exercise holding this file

pytestmark = pytest.mark.tier("properties")

TEXTS = st.text(alphabet="abc ", max_size=8)  # TODO: your inputs' strategy (the twins draw from another)


def answer(submission, *args):
    """The submission's answer, the call noted: a failure shows it (keep inputs in notes, never in messages)."""
    note(f"$function({', '.join(map(repr, args))})")
    return submission.$function(*args)


def _twice(submission, *args):
    if not VALUES.same(answer(submission, *args), answer(submission, *args)):
        raise WrongAnswer("the same call, made twice, returned two different answers: keep no state between calls")


# TODO: your invariants, one test each. A constant passes this one: it is in exercise.toml's constant_passes.
@given($given)
def test_same_answer_twice(submission, $names_drawn):
    _twice(submission, $names_drawn)
''',
    "hidden_tests/test_private.py": '''\
"""Tier `private`: the comparison with the reference, and each visible test's twin. Never shipped to the page."""

import random

import pytest
from hypothesis import strategies as st

from grader.core import exercise, twins
from grader.core.twins import call

EXERCISE = exercise.holding(__file__)  # the exercise whose folder holds this file
VALUES = EXERCISE.module("values")

pytestmark = pytest.mark.tier("private")


def _inputs(count: int) -> list[tuple]:
    """`count` argument lists from a seeded generator, the same on every run, the smallest first."""
    chooser = random.Random(1)
    words = ["one", "two", "three", "a", "b"]  # TODO: inputs like the statement's
    drawn = [tuple(" ".join(chooser.choices(words, k=chooser.randint(0, 3))) for _ in range($arity)) for _ in range(count)]
    return sorted(drawn, key=lambda args: sum(map(len, args)))


def test_matches_the_reference(submission):
    expected = getattr(twins.reference(EXERCISE.root), EXERCISE.function)
    for args in _inputs(EXERCISE.private_examples):
        VALUES.expect(submission.$function(*args), expected(*args), call=f"$function({', '.join(map(repr, args))})")


# Twins (docs/scoring.md): a visible test pays only if its twin, its rule on an input no student sees,
# passes too. TODO: a row per test judged by its answer (the reference gives the answer), of the same
# shape with another answer; each property runs again on other strategies.
ANSWERS = twins.answers(
    EXERCISE,
    {
        "examples-first_example": call($twin_example),
        "hidden-first_rule": call($twin_hidden),
    },
    check=VALUES.expect,
)
PROPERTIES = twins.properties(EXERCISE.tests_dir / "test_properties.py", {$twin_strategies})
TWINS = {**ANSWERS, **PROPERTIES}


@pytest.mark.parametrize("key", TWINS)
def test_twin(submission, key):
    """The twin of one visible test: its rule on inputs no student sees."""
    TWINS[key](submission)
''',
}
