"""Inputs from the exercise itself, for telling a mutant from the reference: what its tests ask, and more like it.

Three sources, all of them the exercise's own, so any exercise has them whatever its shape:
- **the tests' calls**: every call every test of every tier makes, the reference answering,
  recorded (the private tier's input table, the properties' examples, the twins);
- **drawn**: each property test (any `@given` test of any tier) run on `draws` more examples of
  its own strategies, through its own body, the reference answering: the strategies give the
  test's arguments, and the body turns them into calls of the function, whatever their shape;
- **probes**: the diagnosis's probes (the trusted seam's `probes()`).
Each input is kept once, the smallest first (by the length of its text), so the first input on
which two answers differ is a small one.
"""

from __future__ import annotations

import copy
import importlib.util
import inspect
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import hypothesis
from hypothesis import HealthCheck, Phase, given
from hypothesis.errors import UnsatisfiedAssumption

from grader.core import exercise, twins
from grader.judging import cheats, diagnose

DRAWS = 100  # examples drawn for each property test, beyond the tests' own
MOST = 5000  # inputs kept, the smallest first: a survivor answers them all in a few seconds


@dataclass(frozen=True, eq=False)
class Input:
    """One call of the exercise's function, and where it came from."""

    args: tuple
    kwargs: dict
    origin: str  # "the hidden test test_rule[case]", "test_case_does_not_change's strategies", "the diagnosis's probes"

    @property
    def key(self) -> str:
        return repr((self.args, sorted(self.kwargs.items())))


@dataclass
class Pool:
    inputs: list[Input]  # each once, the smallest first
    counts: dict[str, int] = field(default_factory=dict)  # how many came from each source, before duplicates went
    answers: dict[tuple[str, str], list[Any]] = field(default_factory=dict)  # (tier, test) -> the reference's answers


class _Calls(cheats.Recorder):
    """The reference as the tests' submission, keeping each call's arguments as they were given, and its answer."""

    def __init__(self, ex: exercise.Exercise) -> None:
        super().__init__(ex)
        self.asked: dict[tuple[str, str], list[tuple[Input, Any]]] = {}

    def call(self, *args: Any, **kwargs: Any) -> Any:
        tier, name = self.test
        asked = Input(copy.deepcopy(args), copy.deepcopy(kwargs), f"the {tier} test {name}")
        answer = super().call(*args, **kwargs)
        self.asked.setdefault(self.test, []).append((asked, copy.deepcopy(answer)))
        return answer


def recorded(ex: exercise.Exercise) -> dict[tuple[str, str], list[tuple[Input, Any]]]:
    """Every call each test of every tier makes, the reference answering: (tier, test) -> [(the call, its answer)]."""
    recorder = _Calls(ex)
    cheats._run(ex, lambda: recorder, plugins=(recorder,))  # cheats' in-process session: one exercise's modules at a time
    return recorder.asked


def slowest_call(ex: exercise.Exercise, tests: dict[tuple[str, str], list[tuple[Input, Any]]]) -> float:
    """The most CPU seconds the reference takes on one call of its tests (each call made again, in this process)."""
    reference = getattr(twins.reference(ex.root), ex.function)
    slowest = 0.0
    for calls in tests.values():
        for one, _ in calls:
            args, kwargs = copy.deepcopy(one.args), copy.deepcopy(one.kwargs)
            started = time.process_time()
            try:
                reference(*args, **kwargs)
            except Exception:
                pass  # a test that expects an error: its time counts all the same
            slowest = max(slowest, time.process_time() - started)
    return slowest


class _Trusted:
    """The reference as a test body calls a submission, noting each call."""

    def __init__(self, ex: exercise.Exercise, origin: str, into: list[Input]) -> None:
        reference = getattr(twins.reference(ex.root), ex.function)

        def call(*args: Any, **kwargs: Any) -> Any:
            into.append(Input(copy.deepcopy(args), copy.deepcopy(kwargs), origin))
            return reference(*args, **kwargs)

        setattr(self, ex.function, call)


def pool(ex: exercise.Exercise, draws: int = DRAWS, tests: dict[tuple[str, str], list[tuple[Input, Any]]] | None = None) -> Pool:
    """The exercise's inputs, from its tests (`recorded`, unless given), its strategies and its probes."""
    tests = recorded(ex) if tests is None else tests
    asked = [one for calls in tests.values() for one, _ in calls]
    sources = {"the tests' calls": asked, "drawn": drawn(ex, draws), "probes": probes(ex)}
    seen: dict[str, Input] = {}
    for found in sources.values():
        for one in found:
            if _plain((one.args, one.kwargs)):
                seen.setdefault(one.key, one)
    inputs = sorted(seen.values(), key=lambda one: len(one.key))[:MOST]
    answers = {test: [answer for _, answer in calls] for test, calls in tests.items()}
    return Pool(inputs, {name: len(found) for name, found in sources.items()}, answers)


def probes(ex: exercise.Exercise) -> list[Input]:
    if ex.path("trusted") is None:
        return []
    return [Input(tuple(p["args"]), dict(p["kwargs"]), "the diagnosis's probes") for p in diagnose.probes(ex)]


def drawn(ex: exercise.Exercise, count: int) -> list[Input]:
    """The calls of each property test's body on `count` examples of its own strategies, the reference answering."""
    found: list[Input] = []
    for path in sorted(ex.tests_dir.glob("test_*.py")):
        if "given" not in path.read_text(encoding="utf-8"):
            continue
        for name, test in vars(_module(path)).items():
            # The strategies @given keeps on the test (None where a hypothesis hides them: its tests' calls still count).
            strategies = getattr(getattr(test, "hypothesis", None), "_given_kwargs", None)
            if name.startswith("test_") and hypothesis.is_hypothesis_test(test) and strategies:
                _draw(test, dict(strategies), _Trusted(ex, f"{name}'s strategies", found), count)
    return found


_DRAWING = hypothesis.settings(
    database=None,
    deadline=None,
    derandomize=True,
    phases=[Phase.generate],
    suppress_health_check=list(HealthCheck),
)


def _draw(test: Any, strategies: dict[str, Any], trusted: _Trusted, count: int) -> None:
    inner = test.hypothesis.inner_test
    takes = inspect.signature(inner).parameters
    if not set(strategies) <= set(takes):
        return

    def body(**kwargs: Any) -> None:
        try:
            inner(trusted, **kwargs)
        except UnsatisfiedAssumption:
            raise
        except Exception:
            pass  # only the calls matter here, not whether the property holds on an example the tests never draw

    try:
        hypothesis.settings(_DRAWING, max_examples=count)(given(**strategies)(body))()
    except Exception:
        pass  # a strategy it cannot draw from on its own (every example rejected): its calls so far are kept


def _module(path: Path) -> ModuleType:
    """A test module, loaded on its own: another exercise's module of the same name may be imported already."""
    spec = importlib.util.spec_from_file_location(f"_audit_{abs(hash(path.resolve()))}_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _plain(value: Any) -> bool:
    """Whether `value` crosses to a sandboxed submission as it is: numbers, strings, None, lists, tuples, dicts."""
    if value is None or type(value) in (bool, int, float, str):
        return True
    if type(value) in (list, tuple):
        return all(map(_plain, value))
    if type(value) is dict:
        return all(type(k) is str and _plain(v) for k, v in value.items())
    return False


def calls(inputs: list[Input]) -> list[tuple[list, dict]]:
    """The inputs as a sandbox's `evaluate` takes them."""
    return [(list(one.args), dict(one.kwargs)) for one in inputs]
