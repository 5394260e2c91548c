"""Twins from tables: each visible test's rule, checked on inputs no student sees (docs/scoring.md).

A visible test pays only if its twin, `test_twin[<tier>-<test>]` in a secret tier, passes too
(grader/core/scoring.py). An exercise's private tier builds its twins here, from two tables:

- `answers`: for a test judged by its answers, a call or a few; the reference says what each
  must return, and the exercise's value rule judges the submission's answer.
- `properties`: for each property test of a module, other strategies for its arguments; the
  visible test's own body runs on a few examples drawn from them. They are drawn once, against
  the reference (which must pass them), kept in the exercise's cache folder, and replayed as
  replay.py replays the property tests' recorded examples.

A twin's message says what was expected but never the input: no student may learn it. Whether
its inputs differ from every visible one is checked by grader/judging/cheats.py.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import inspect
import json
import os
import pickle
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import hypothesis
from hypothesis import HealthCheck, Phase, given
from hypothesis import strategies as st

from grader.core import exercise, replay, scoring
from grader.core import hypothesis_adapter as internals
from grader.core.checks import WrongAnswer
from grader.core.submission import SubmissionError

EXAMPLES = 8  # a property twin's examples: enough to catch a rule broken by chance in a visible test
_DATA = type(st.data())
# Whatever profile the tests load: the twins' examples are drawn the same everywhere, then only replayed.
_QUIET = hypothesis.settings(
    hypothesis.settings.get_profile("default"), database=None, deadline=None, suppress_health_check=list(HealthCheck)
)
_DRAWING = hypothesis.settings(_QUIET, derandomize=True, phases=[Phase.generate])


@dataclass(frozen=True)
class Call:
    """The arguments of one call of the exercise's function."""

    args: tuple
    kwargs: dict = field(default_factory=dict)


def call(*args: Any, **kwargs: Any) -> Call:
    """A row of an `answers` table: `call("a b", "a c", detail=True)`, the arguments of one call."""
    return Call(args, kwargs)


def unseen(key: str) -> str:
    """How a twin's message begins: the visible test it stands for, never its input."""
    tier, name = key.split("-", 1)
    return f"the same rule as the {tier} test {name}, on an input you never see: "


def ask(submission: Any, function: str, key: str, row: Call, expected: str = "") -> Any:
    """The submission's answer to one twin call; a call that did not return says how it ended, not what it said.

    An exception's text and traceback can carry the input (`raise ValueError(reference)`), so they
    stay out: the visible test's own failure shows them.
    """
    try:
        return getattr(submission, function)(*row.args, **row.kwargs)
    except SubmissionError as exc:
        hide(exc, key, expected)
        raise


def hide(exc: SubmissionError, key: str, expected: str = "") -> None:
    """Leave out of a call's failure what could carry the input: the exception's text, the traceback, hypothesis's notes."""
    how = exc.message.split(":", 1)[0] if exc.kind == "exception" else exc.message
    exc.message, exc.traceback = f"{unseen(key)}{expected}{how}", ""
    exc.__notes__ = []  # hypothesis's: the example, input included


@cache
def reference(root: Path) -> ModuleType:
    """The exercise's reference solution (solutions/reference.py), loaded once, on the trusted side."""
    return _module(root / "solutions" / "reference.py", "_twins_reference")


def _module(path: Path, prefix: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"{prefix}_{abs(hash(path.resolve()))}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------- twins of answers


@dataclass(frozen=True)
class Answers:
    """The twin of a test judged by its answers: each call's answer must pass the value rule against the reference's."""

    key: str
    function: str
    rows: tuple[tuple[Call, Any], ...]  # each call, with what the reference says it must return
    check: Callable[[Any, Any], Any]
    shown: Callable[[Any], str]

    def __call__(self, submission: Any) -> None:
        for row, want in self.rows:
            got = ask(submission, self.function, self.key, row, f"expected {self.shown(want)}, but ")
            try:
                self.check(got, want)
            except AssertionError as exc:
                raise WrongAnswer(f"{unseen(self.key)}{exc}") from None


def answers(
    ex: exercise.Exercise,
    table: Mapping[str, Call | list[Call]],
    check: Callable[[Any, Any], Any],
    expected: Callable[..., Any] | None = None,
    shown: Callable[[Any], str] = repr,
) -> dict[str, Answers]:
    """The twins of `table` (test key -> a call or a few), by key.

    `check(got, want)` is the exercise's value rule (it raises WrongAnswer); `want` is what
    `expected(*args, **kwargs)` gives, by default the reference's function; `shown(want)` is how
    a message names it.
    """
    expected = expected or getattr(reference(ex.root), ex.function)
    twins = {}
    for key, rows in table.items():
        rows = [rows] if isinstance(rows, Call) else list(rows)
        if "-" not in key or not rows:
            raise ValueError(f"a twin's key is '<tier>-<test id>' and it has a call or more: {key!r}")
        judged = tuple((row, expected(*row.args, **row.kwargs)) for row in rows)
        twins[key] = Answers(key, ex.function, judged, check, shown)
    return twins


# ---------------------------------------------------------------- twins of properties


class _Logged:
    """Stands in for st.data() while the reference runs a twin's example: draws, and writes each draw down."""

    def __init__(self, data: Any) -> None:
        self._data = data
        self.draws: list[tuple[str, Any]] = []

    def draw(self, strategy: Any, label: Any = None) -> Any:
        value = self._data.draw(strategy, label)
        self.draws.append((repr(strategy), copy.deepcopy(value)))
        return value


class _Drawn:
    """Stands in for st.data() in a twin's example: the reference's draws, in order, of the same strategies."""

    def __init__(self, draws: list[tuple[str, Any]]) -> None:
        self._draws = iter(draws)

    def draw(self, strategy: Any, label: Any = None) -> Any:
        shown, value = next(self._draws, (None, None))
        if shown != repr(strategy):
            raise RuntimeError(f"a twin's example drew {strategy!r}, not what the reference's run of it drew")
        return value

    def __repr__(self) -> str:
        return "data(...)"


class _Trusted:
    """The reference as the tests call a submission: `submission.<function>(...)`."""

    def __init__(self, function: str, implementation: Callable[..., Any]) -> None:
        setattr(self, function, implementation)


@dataclass(eq=False)
class Property:
    """The twin of a property test: its body, on examples drawn from other strategies."""

    key: str
    test: Any  # the visible @given test
    strategies: dict[str, Any]  # every argument's, the visible ones where the twin's table gives none
    trusted: Any  # the reference, as a submission
    count: int
    kept: Path | None = None  # where its examples are kept once drawn (in the exercise's cache folder)
    _examples: list[dict] | None = None
    _pickled: bytes | None = None  # the examples pickled: a copy for each submission, 10x faster than deepcopy

    @property
    def examples(self) -> list[dict]:
        """The examples drawn for this twin (st.data()'s as the draws made): drawn once, when first asked for, and kept."""
        if self._examples is None:
            self._examples = _read(self.kept)
        if self._examples is None:
            self._examples = self._draw()
            _write(self.kept, self._examples)
        return self._examples

    def _copy(self) -> list[dict]:
        """The examples afresh, as the test body may change what it is given."""
        if self._pickled is None:
            try:
                self._pickled = pickle.dumps(self.examples, pickle.HIGHEST_PROTOCOL)
            except (pickle.PicklingError, TypeError, AttributeError):
                return copy.deepcopy(self.examples)  # a drawn value pickle cannot take: the slow way
        return pickle.loads(self._pickled)

    def _draw(self) -> list[dict]:
        internals.no_local_constants()  # the same examples in every process
        inner, kept = self.test.hypothesis.inner_test, []

        def record(**kwargs: Any) -> None:
            logs = {name: _Logged(value) for name, value in kwargs.items() if isinstance(self.strategies[name], _DATA)}
            drawn = copy.deepcopy({name: value for name, value in kwargs.items() if name not in logs})
            inner(self.trusted, **{**kwargs, **logs})  # assume() rejects an example as hypothesis does
            kept.append({**drawn, **{name: log.draws for name, log in logs.items()}})

        drawing = hypothesis.settings(_DRAWING, max_examples=self.count)
        try:
            drawing(given(**self.strategies)(record))()
        except Exception as exc:
            raise ValueError(f"the reference fails the twin of {self.key} on its own examples: {exc}") from exc
        if not kept:
            raise ValueError(f"the twin of {self.key} drew no example its test accepts")
        return kept

    def __call__(self, submission: Any) -> None:
        inner = self.test.hypothesis.inner_test
        data = {name for name, strategy in self.strategies.items() if isinstance(strategy, _DATA)}
        examples = self._copy()
        try:
            # The body runs as hypothesis runs an example it does not show: note() keeps quiet, assume() skips.
            internals.run_examples(
                inner, [{k: _Drawn(v) if k in data else v for k, v in e.items()} for e in examples], submission
            )
        except SubmissionError as exc:
            hide(exc, self.key)
            raise
        except AssertionError as exc:
            raise WrongAnswer(f"{unseen(self.key)}{exc}") from None


def _read(path: Path | None) -> list[dict] | None:
    if path is None:
        return None
    try:
        return [replay.decode(example) for example in json.loads(path.read_text(encoding="utf-8"))]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write(path: Path | None, examples: list[dict]) -> None:
    """Keep the examples for the next process: drawing them is a fifth of a second, replaying them a few ms."""
    try:
        data = json.dumps([replay.kept_as_json(example) for example in examples])
    except replay.Unrecordable:
        return
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        part = path.with_name(f"{path.name}.{os.getpid()}")
        part.write_text(data, encoding="utf-8")
        os.replace(part, path)
    except OSError:
        pass  # a folder it cannot write: they are drawn again next time


def _kept(ex: exercise.Exercise, module: ModuleType, key: str, strategies: dict[str, Any], count: int) -> Path | None:
    """Where a twin's examples are kept, by a digest of all they depend on; None when a strategy's repr would not say."""
    shown = repr(sorted(strategies.items()))
    if " at 0x" in shown:
        return None
    digest = hashlib.sha256(f"{hypothesis.__version__}\0{key}\0{shown}\0{count}".encode())
    for path in (Path(str(module.__file__)), ex.root / "solutions" / "reference.py", ex.path("values"), Path(__file__)):
        digest.update(path.read_bytes() if path is not None else b"-")
    return ex.cache / f"twin-{digest.hexdigest()[:20]}.json"


def properties(
    tests: ModuleType | Path,
    strategies: Mapping[str, Any],
    only: Mapping[str, Mapping[str, Any]] = {},
    count: int = EXAMPLES,
) -> dict[str, Property]:
    """A twin of every @given test of `tests` (a module, or its file), by key.

    `strategies` gives an argument, by name, another strategy in every test that has it; `only`
    does so for one test (its name without "test_"). An argument neither names keeps its
    visible strategy, but each twin must draw at least one argument otherwise.
    """
    module = tests if isinstance(tests, ModuleType) else _load(Path(tests))
    ex = exercise.holding(str(module.__file__))
    trusted = _Trusted(ex.function, getattr(reference(ex.root), ex.function))
    tier = _tier(module)
    twins = {}
    for name, test in vars(module).items():
        if not (name.startswith("test_") and hypothesis.is_hypothesis_test(test)):
            continue
        short = name.removeprefix("test_")
        mine = {**{k: v for k, v in strategies.items() if k in _arguments(test)}, **only.get(short, {})}
        if not mine:
            raise ValueError(f"the twin of {name} would draw what it draws: give one of its arguments another strategy")
        key = scoring.key(tier, name)
        drawn = {**_visible_strategies(test, mine), **mine}
        twins[key] = Property(key, test, drawn, trusted, count, _kept(ex, module, key, drawn, count))
    unknown = set(only) - {key.split("-", 1)[1] for key in twins}
    if unknown:
        raise ValueError(f"no property test is named {sorted(unknown)}")
    return twins


def _arguments(test: Any) -> list[str]:
    return [p for p in inspect.signature(test.hypothesis.inner_test).parameters if p != "submission"]


def _visible_strategies(test: Any, mine: Mapping[str, Any]) -> dict[str, Any]:
    """The strategies the visible test draws its arguments from (hypothesis keeps them on the test)."""
    visible = internals.given_kwargs(test)
    if visible is None:
        missing = [name for name in _arguments(test) if name not in mine]
        if missing:
            raise ValueError(
                f"give every argument of {test.__name__} its twin's strategy (this hypothesis hides them): {missing}"
            )
        return {}
    return visible


def _tier(module: ModuleType) -> str:
    marks = module.pytestmark if isinstance(module.pytestmark, list) else [module.pytestmark]
    return next(mark.args[0] for mark in marks if mark.name == "tier")


@cache
def _load(path: Path) -> ModuleType:
    """A test module, loaded on its own (the one pytest collected may be another exercise's of the same name)."""
    return _module(path, "_twins_of")
