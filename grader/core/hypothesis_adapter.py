"""Every use the kit makes of hypothesis's internals, for the versions in KNOWN: nothing else imports them.

The kit goes below hypothesis's public API for speed only: property replay (replay.py draws,
ranks and simplifies examples through their choices, and runs a test's body on them with notes
kept quiet), the direct calls of `grade` (direct_run.py sets what hypothesis's pytest plugin
sets), and hypothesis's own bookkeeping of failing examples trimmed (`speed_up`). On a version
not in KNOWN, `known()` is False and all of that is off, with one warning: property tests run
as plain hypothesis (hypothesis's own verdicts), `grade` runs pytest sessions, and the twins
run their examples through @example. Two reads are made on any version, each with a fallback:
a test's strategies (`given_kwargs`, for the twins) and the constants hypothesis mixes into
what it draws (`no_local_constants`, for the same inputs in every process).

Upgrading hypothesis is its pin and this file: install it, run tests/test_replay.py with the
version added to KNOWN, and mend here what it finds.
"""

from __future__ import annotations

import inspect
import sys
import traceback
import types
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, cast

import hypothesis
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

# The versions whose internals this file was written against (tests/test_replay.py holds them).
KNOWN = ("6.155.2",)

try:
    from hypothesis.errors import StopTest, UnsatisfiedAssumption
except ImportError:  # pragma: no cover - another hypothesis: classes nothing raises

    class StopTest(BaseException):  # type: ignore[no-redef]
        pass

    class UnsatisfiedAssumption(Exception):  # type: ignore[no-redef]
        pass


__all__ = ["KNOWN", "StopTest", "UnsatisfiedAssumption"]


class UnknownHypothesis(UserWarning):
    """The installed hypothesis is not one the kit's replay knows: property tests run as plain hypothesis."""


_warned = False


def version() -> str:
    return hypothesis.__version__


def known() -> bool:
    """Whether the installed hypothesis is one whose internals the kit uses (else: plain hypothesis, and one warning)."""
    if version() in KNOWN:
        return True
    global _warned
    if not _warned:
        _warned = True
        warnings.warn(
            f"hypothesis {version()} is not a version the kit knows ({', '.join(KNOWN)}): property tests run as "
            "plain hypothesis (same verdicts, slower), and `grade` runs pytest sessions "
            "(grader/core/hypothesis_adapter.py)",
            UnknownHypothesis,
            stacklevel=2,
        )
    return False


# ---------------------------------------------------------------- read on any version


def given_kwargs(test: Any) -> dict | None:
    """The strategies a @given test draws its arguments from, by name; None where this hypothesis hides them."""
    handle = getattr(test, "hypothesis", test)
    found = getattr(handle, "_given_kwargs", None)
    return dict(found) if isinstance(found, dict) else None


def no_local_constants() -> None:
    """Hypothesis draws no constants from the modules this process has imported: the same inputs in every process.

    It mixes the literal constants of "local" modules in sys.modules into what it generates,
    except under Pyodide, where it turns that off. Turned off here too (the tests' plugin and
    class grading call this), the browser, `meteor-kit check`, `pytest hidden_tests` and
    `meteor-kit grade` draw the same inputs whatever else they imported, so a submission gets
    the same verdicts everywhere, and the memo's verdicts by answers hold.
    """
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # a hypothesis without this module: nothing to turn off
        return
    if not hasattr(providers, "_get_local_constants") or not hasattr(providers, "Constants"):
        return
    none = providers.Constants()
    providers._get_local_constants = lambda: none
    cache = getattr(getattr(providers, "CONSTANTS_CACHE", None), "cache", None)
    if cache is not None:
        cache.clear()  # values drawn from constants seen before this call


# ---------------------------------------------------------------- running examples outside hypothesis's engine


class _Data:
    """What strategies made inside a test's body ask of the build context's data (`provider.avoid_realization`)."""

    class provider:
        avoid_realization = False


class _NotFinal:
    """Stands in for hypothesis's build context: note() keeps quiet, as it does until the final run."""

    is_final = False
    data = _Data()


class _Final:
    """The final run's context: note() reports, as in hypothesis's run of the example it shows."""

    is_final = True
    data = _Data()


def _quiet() -> bool:
    return False


@contextmanager
def quiet_notes() -> Iterator[None]:
    """Test bodies run as hypothesis runs all but the final example: note() keeps quiet (unless verbose). Known versions only.

    Without asking hypothesis each time: its should_note compares the verbosity setting, an Enum
    with ordering in Python, 6 µs a note, and the property tests note twice per call (about 5 %
    of a new behaviour's grading). The settings cannot change during a replay: asked once here.
    """
    # _NotFinal and _Final stand in for hypothesis's BuildContext: they have the two attributes note() reads.
    with hypothesis.control._current_build_context.with_value(cast(Any, _NotFinal())):
        default = hypothesis.settings.default
        if default is not None and default.verbosity >= hypothesis.Verbosity.verbose:
            yield
            return
        asks = hypothesis.control.should_note
        hypothesis.control.should_note = _quiet
        try:
            yield
        finally:
            hypothesis.control.should_note = asks


@contextmanager
def final_run(report: Callable[[Any], None]) -> Iterator[None]:
    """A body run as hypothesis's final run of the example it shows: note() reports to `report`. Known versions only."""
    from hypothesis.reporting import with_reporter

    with with_reporter(report), hypothesis.control._current_build_context.with_value(cast(Any, _Final())):
        yield


def is_final() -> bool:
    """Whether the body runs as the final run of a shown example (st.data() then notes each draw)."""
    context = hypothesis.control._current_build_context.value
    return context is not None and getattr(context, "is_final", False)


def pretty(text: str, value: Any) -> str:
    """`text` then `value` as hypothesis prints a drawn value."""
    from hypothesis.vendor.pretty import RepresentationPrinter

    printer = RepresentationPrinter()
    printer.text(text)
    printer.pretty(value)
    return printer.getvalue()


def pretty_call(name: str, kwargs: dict) -> str:
    """ "Falsifying example: name(...)" as hypothesis writes it."""
    from hypothesis.vendor.pretty import RepresentationPrinter

    printer = RepresentationPrinter()
    printer.text("Falsifying example:")
    printer.text(" ")
    printer.repr_call(name, [], kwargs, force_split=True)
    return printer.getvalue()


_EXPLICIT = settings(
    database=None,
    deadline=None,
    phases=[Phase.explicit],
    report_multiple_bugs=False,
    suppress_health_check=list(HealthCheck),
)


def run_examples(body: Callable[..., Any], examples: list[dict], *args: Any) -> None:
    """`body(*args, **example)` for each example in order, as hypothesis runs examples it does not show.

    A rejected example (assume) is skipped; the first that raises ends the run with its exception.
    On a known hypothesis the body is called directly (quiet_notes); on another, through hypothesis's
    public API: each example an @example of a test that runs only those.
    """
    if known():
        with quiet_notes():
            for kwargs in examples:
                try:
                    body(*args, **kwargs)
                except UnsatisfiedAssumption:
                    continue
        return
    if not examples:
        return
    test = given(**{name: st.none() for name in examples[0]})(body)
    for kwargs in reversed(examples):  # decorators apply bottom up: the first example runs first
        test = example(**kwargs)(test)
    _EXPLICIT(test)(*args)


# ---------------------------------------------------------------- replay: examples through their choices (known versions)


def inner_test(test: Any) -> Callable[..., Any] | None:
    handle = getattr(test, "hypothesis", None)
    return getattr(handle, "inner_test", None)


def is_data_object(value: Any) -> bool:
    """Whether a drawn argument is st.data()'s object (a test that draws in its body)."""
    return type(value).__name__ == "DataObject"


def current_data() -> Any:
    """The choices of the example being run (inside a @given test's body)."""
    return hypothesis.control.current_build_context().data


def targeted(data: Any) -> bool:
    """Whether the example called target()."""
    return bool(getattr(data, "target_observations", None))


def function_digest(function: Callable) -> bytes | None:
    """What hypothesis seeds a derandomized test with."""
    try:
        from hypothesis.internal.reflection import function_digest as digest
    except ImportError:
        return None
    return digest(function)


def simplicity(data: Any) -> tuple:
    """Hypothesis's own order of simplicity of the choices drawn so far (shortlex), or () if it has none."""
    try:
        from hypothesis.internal.conjecture.shrinker import sort_key

        return sort_key(data.nodes)
    except (ImportError, AttributeError, TypeError):
        return ()


def choices(data: Any) -> list:
    return list(data.choices)


def nodes(data: Any) -> list:
    """The example's choices as nodes: each with its `value`, its `type`, its `constraints`, `was_forced`."""
    return list(data.nodes)


@contextmanager
def drawing(written: list, simplest_after: bool, test: Callable) -> Iterator[Any]:
    """A build context whose draws make the choices `written` (then the simplest ones, with `simplest_after`): its data."""
    from hypothesis.control import BuildContext
    from hypothesis.internal.conjecture.choice import ChoiceTemplate
    from hypothesis.internal.conjecture.data import ConjectureData

    data = ConjectureData.for_choices([*written, ChoiceTemplate("simplest", count=None)] if simplest_after else list(written))
    with BuildContext(data, wrapped_test=test):
        yield data


def value_at(node: Any, index: int) -> Any:
    """The choice's `index`-th simplest value, or None where it has none (a boolean has two) or it is not allowed."""
    from hypothesis.internal.conjecture.choice import ChoiceTooLarge, choice_from_index, choice_permitted

    try:
        value = choice_from_index(index, node.type, node.constraints)
    except (ChoiceTooLarge, AssertionError):  # past the last value there is
        return None
    return value if choice_permitted(value, node.constraints) else None


def index_of(node: Any, value: Any = None) -> int:
    """The place of the node's value (or `value`) in its choice's order of simplicity: 0 is the simplest."""
    from hypothesis.internal.conjecture.choice import choice_to_index

    return choice_to_index(node.value if value is None else value, node.constraints)


def permitted(node: Any, value: Any) -> bool:
    from hypothesis.internal.conjecture.choice import choice_permitted

    return choice_permitted(value, node.constraints)


def kind(node: Any) -> tuple:
    """What two choices that repeat one value share: their type, value and constraints."""
    return (node.type, repr(node.value), repr(node.constraints))


# ---------------------------------------------------------------- a strategy's repr, found once per make-up


_SHOWN: dict[tuple, str] = {}  # a strategy's make-up (_make_up) -> its repr
SHOWN_KEPT = 4096


class _Unkeyed(Exception):
    """A part whose repr its make-up does not settle: the strategy's repr is computed."""


def shown(strategy: Any) -> str:
    """`repr(strategy)`, found once per make-up of the strategy.

    A test body builds its strategies anew at each draw (`st.lists(st.sampled_from(WORDS),
    min_size=n)`), and hypothesis then formats each one's repr again: about 0.1 ms a draw, each
    replayed draw's check. The repr of a lazily built strategy follows from its function, its
    arguments (their reprs) and its transformations, and nothing else, so it is kept by those.
    """
    if _LAZY is None:
        return repr(strategy)
    try:
        key = _make_up(strategy)
    except (_Unkeyed, AttributeError):  # AttributeError: strategies that keep other fields
        return repr(strategy)
    text = _SHOWN.get(key)
    if text is None:
        if len(_SHOWN) >= SHOWN_KEPT:
            _SHOWN.clear()
        text = _SHOWN[key] = repr(strategy)
    return text


def _make_up(value: Any) -> tuple:
    """What `repr(value)` depends on, as a key: equal keys, equal reprs. _Unkeyed for anything else."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return (kind, value)
    if kind is float:
        return (kind, repr(value))  # 0.0 and -0.0 are equal, their reprs are not
    if kind is list or kind is tuple:
        return (kind, *map(_make_up, value))
    if kind is dict:
        return (kind, *((_make_up(k), _make_up(v)) for k, v in value.items()))
    if kind is _LAZY:
        known_repr = value._LazyStrategy__representation
        if known_repr is not None:
            return (str, known_repr)
        args, kwargs = value._LazyStrategy__args, value._LazyStrategy__kwargs
        # Its repr leaves out an argument that *is* its parameter's default. For None, bools and
        # small ints (every default of this type hypothesis has) that is equality; for another default
        # (a date, a strategy), a value that is that very object is not keyed.
        others = _other_defaults(value.function)
        if others and any(v is d for v in (*args, *kwargs.values()) for d in others):
            raise _Unkeyed
        return (
            kind,
            value.function,
            tuple(map(_make_up, args)),
            tuple((k, _make_up(v)) for k, v in kwargs.items()),
            tuple(value._transformations),  # methods and their functions, by identity
        )
    if kind is _SAMPLED or kind is _JUST:  # sampled_from(...), and just(...) for a single element
        known_repr = value._cached_repr if kind is _SAMPLED else None
        if known_repr is not None:
            return (str, known_repr)
        return (kind, value.force_repr, value.force_repr_braces, _make_up(tuple(value.elements)), tuple(value._transformations))
    raise _Unkeyed


@lru_cache(maxsize=1024)
def _other_defaults(function: Callable) -> tuple:
    """The function's defaults that are not None, a bool or a small int (whose identity is their value)."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return ()  # its repr needs the signature too, and would fail alike
    return tuple(
        p.default
        for p in parameters
        if p.default is not p.empty
        and not (p.default is None or type(p.default) is bool or (type(p.default) is int and -5 <= p.default <= 256))
    )


_LAZY: Any = None
_JUST: Any = None
_SAMPLED: Any = None
if version() in KNOWN:
    from hypothesis.strategies._internal.lazy import LazyStrategy as _LAZY
    from hypothesis.strategies._internal.misc import JustStrategy as _JUST
    from hypothesis.strategies._internal.strategies import SampledFromStrategy as _SAMPLED


# ---------------------------------------------------------------- the direct calls of `grade` (direct_run.py)


def set_as_pytest_plugin_does() -> None:
    """What hypothesis's pytest plugin sets for every run."""
    from hypothesis import core

    core.running_under_pytest = True
    core.pytest_shows_exceptiongroups = True  # pytest >= 7.2


@contextmanager
def as_pytest_item(item: Any, report: Callable[[Any], None]) -> Iterator[None]:
    """A test called as hypothesis's pytest plugin runs it: its reports to `report` (kept out of the output)."""
    from hypothesis.internal.escalation import current_pytest_item
    from hypothesis.reporting import with_reporter

    with with_reporter(report), current_pytest_item.with_value(item):
        yield


# ---------------------------------------------------------------- hypothesis's bookkeeping of failing examples


def speed_up() -> None:
    """Hypothesis's bookkeeping of failing examples, made cheaper with the same reports (known versions only)."""
    if version() not in KNOWN:
        return
    _keep_expected_tracebacks_short()
    _locate_failures_cheaply()
    _rank_verbosity_once()


def expected_traceback(err: BaseException, tb: object) -> str:
    """What hypothesis keeps of each failing example's exception, without formatting its traceback.

    Hypothesis formats every failing example's traceback (through pytest's repr_failure, which
    reads each frame's source) and shows it only if the failure then does not happen again:
    after "Failed to reproduce exception.", which the kit cuts off (runner.classify: the student
    is told in plain words). That was 0.8 ms a failing example, about 4 % of grading a wrong
    submission, where shrinking runs hundreds of them.
    """
    return "".join(traceback.format_exception_only(type(err), err))


def _keep_expected_tracebacks_short() -> None:
    import hypothesis.core

    if callable(getattr(hypothesis.core, "format_exception", None)):
        hypothesis.core.format_exception = expected_traceback


def last_frame_only(tb: types.TracebackType | None, limit: int | None = None) -> traceback.StackSummary:
    """`traceback.extract_tb(tb)` as hypothesis reads it, `[-1]`: a summary of the last frame only.

    Hypothesis locates each failing example by the frame that raised (`InterestingOrigin`), and
    extracts the whole traceback three times to read its last entry: every frame's position and
    source line, about 0.5 ms a failing example, a tenth of its engine's time while it shrinks.
    The last entry is the same, read from the last frame alone. With a limit (given, or
    `sys.tracebacklimit`), the entries kept are not the last ones: then the whole extraction.
    """
    if limit is not None or getattr(sys, "tracebacklimit", None) is not None:
        return traceback.extract_tb(tb, limit)
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return traceback.extract_tb(tb)


def _source_file_once(getsourcefile: Callable[[Any], str | None]) -> Callable[[Any], str | None]:
    """`inspect.getsourcefile(frame)`, looked up once per code file: hypothesis asks it for each of
    its own frames on each failing example (each a look on disk) to trim them from the traceback."""
    found: dict[str, str | None] = {}

    def source_file(frame: Any) -> str | None:
        name = frame.f_code.co_filename
        if name not in found:
            found[name] = getsourcefile(frame)
        return found[name]

    return source_file


def _locate_failures_cheaply() -> None:
    """Hypothesis's traceback bookkeeping, with the same results: see last_frame_only and _source_file_once.

    Only where hypothesis reads `traceback.extract_tb(...)[-1]` alone (tests/test_replay.py checks
    its source, so a version that reads more fails there).
    """
    import hypothesis.core
    import hypothesis.internal.escalation as escalation

    reads_last = types.ModuleType("traceback", traceback.__doc__)
    reads_last.__dict__.update({k: v for k, v in vars(traceback).items() if not k.startswith("__")})
    reads_last.extract_tb = last_frame_only  # type: ignore[attr-defined]
    for module in (hypothesis.core, escalation):
        if getattr(module, "traceback", None) is traceback:
            module.traceback = reads_last  # type: ignore[attr-defined]
    if getattr(escalation, "getsourcefile", None) is inspect.getsourcefile:
        escalation.getsourcefile = _source_file_once(inspect.getsourcefile)  # type: ignore[assignment]


def _rank_verbosity_once() -> None:
    """Hypothesis orders its `Verbosity` by building a dict and a list at each comparison, which
    its engine makes several times for each example (`verbosity >= Verbosity.debug`): about 20 µs
    an example. The same ranks, each taken from hypothesis once, kept in one dict."""
    from hypothesis import Verbosity

    original = Verbosity.__dict__.get("_int_value")
    if not isinstance(original, staticmethod):
        return
    rank = {member.name: original.__func__(member) for member in Verbosity}

    def ranked(value: Verbosity) -> int:
        return rank[value.name]

    ranked.hypothesis_own = original  # type: ignore[attr-defined]  # for tests/test_replay.py
    Verbosity._int_value = staticmethod(ranked)  # type: ignore[method-assign]
