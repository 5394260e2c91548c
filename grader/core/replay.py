"""Property tests' inputs, drawn by hypothesis once per kit version against the reference, then replayed.

Hypothesis defines the inputs: each @given test runs once against a passing submission (the
reference) and every example it gave the test is written down, in order, with how the test
took it (passed, or rejected by assume). With the derandomized profile, a run in which every
example passes draws exactly that sequence again, so a later run calls the test's body on the
recorded examples directly: if each behaves as it did for the reference, hypothesis would
have said "passed" too. Anything else (a failure, an exception, an assume the reference did
not meet) hands the test back to hypothesis, which draws the same examples, gets the answers
the replay already had (the `Tape`, so the submission is asked nothing twice), and shrinks as
always: verdicts and counterexamples stay exactly as they are. Under the default counterexample
setting ("smallest-drawn") a failing test is not shrunk: the simplest failing of its examples
and of the simplest inputs (`simplest_inputs`) is shown, simplified where it is less simple than
all of these (`simplified`).

A test that draws inside its body (st.data()) is replayed too: each draw is written down with
the strategy it was asked of, and a replayed draw gives the recorded value only when the body
asks the same strategy (by its repr) at the same place, and every recorded draw is asked for;
anything else hands the test to hypothesis. A test that steers hypothesis (target()) is never
replayed, nor one whose examples do not survive a JSON round trip, nor one that draws in its body
from a strategy holding a function (OPAQUE: the same repr could draw otherwise). The file lives in
the exercise's cache folder (Exercise.cache) under a digest of what the draws depend on; the page
gets it from the web build. Hypothesis's internals are reached through hypothesis_adapter only: on a
version it does not know, nothing is replayed (`enabled`), and hypothesis runs every test.
"""

from __future__ import annotations

import functools
import hashlib
import heapq
import importlib
import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, cast

import hypothesis
import pytest

from grader.core import exercise
from grader.core import hypothesis_adapter as internals
from grader.core.hypothesis_adapter import StopTest, UnsatisfiedAssumption, shown
from grader.core.submission import SubmissionError
from grader.core.tuning import SIMPLEST_LONGER, SIMPLEST_RUNS, SIMPLEST_STEPS, SIMPLIFY_TRIES

FORMAT = 5  # 2: the draws of st.data() tests; 3: the smallest-drawn pool, ranks across it; 4: its simplest inputs; 5: choices
# "0" turns replay off (the benchmark's "before", and a way to rule it out when in doubt).
ENV_SWITCH = "KIT_REPLAY"
# Where the page (or anyone) keeps a recording of its own; otherwise the exercise's cache folder holds it.
ENV_FILE = "KIT_REPLAY_FILE"
ENV_COUNTEREXAMPLE = "KIT_COUNTEREXAMPLE"
PASS, REJECT = "pass", "reject"
STOP = "stop"  # hypothesis ended the example at a draw in the body (StopTest: its choices ran out)
# The example a failing test shows: the simplest failing recorded one (SMALLEST_DRAWN, the only setting), or,
# with KIT_COUNTEREXAMPLE=shrunk, hypothesis's own shrunk one: the tests' oracle (replay must then show
# exactly what hypothesis shows), not a setting of the kit.
SHRUNK, SMALLEST_DRAWN = "shrunk", "smallest-drawn"
# SMALLEST_DRAWN: the recording also holds a pool per test, the simplest inputs
# there are, where hypothesis's shrinking ends: the simplest choices of all, and those a few steps
# up from them (a step raises one choice to its next simplest value, and every choice after it is
# the simplest again), at most SIMPLEST_STEPS steps and SIMPLEST_LONGER choices longer than the
# simplest (grader/core/tuning.py). A failing test shows the simplest failing example of the 25
# and the pool, at the cost of a few calls instead of shrinking's hundreds. Where only a drawn
# example less simple than the whole pool fails, it is simplified (`simplified`).
# The engine's sources the recording depends on (besides the exercise's files and hypothesis's version).
ENGINE_SOURCES = ("grader/core/replay.py", "grader/core/hypothesis_adapter.py", "grader/core/tests_plugin.py")


class Unrecordable(Exception):
    """A drawn value that does not survive the trip to JSON and back."""


class Departed(BaseException):
    """A replayed st.data() test asked for a draw the reference's run did not make (a BaseException, so the
    test's own `except Exception` cannot swallow it): hypothesis decides that test."""


# A strategy whose repr shows one of these holds a function (a lambda's closure, a composite's body):
# the same repr can then draw otherwise, for instance from a value the submission returned. A test
# that draws such a strategy in its body is not replayed.
OPAQUE = (
    ".map(",
    ".filter(",
    ".flatmap(",
    "builds(",
    "composite",
    "lambda",
    "functions(",
    "from_type(",
    "deferred(",
    "recursive(",
    "data(",
    "runner(",
    "shared(",
    "<function",
    "<bound",
)


class _DrawLog:
    """Stands in for st.data() while the reference's run is recorded: draws as hypothesis does, and writes each down."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.draws: list[list] = []  # [strategy's repr, label, the value encoded]
        self.problem: str | None = None

    def draw(self, strategy: Any, label: Any = None) -> Any:
        shown = repr(strategy)
        if any(marker in shown for marker in OPAQUE):
            self.problem = (
                self.problem or f"a draw in its body holds a function ({shown[:60]}): its repr does not say what it draws"
            )
        try:
            value = self._inner.draw(strategy, label)
        except StopTest:
            self.draws.append([shown, label])  # no value: hypothesis ended the example here
            raise
        kept: Any = None
        try:
            if label is not None and type(label) is not str:
                raise Unrecordable("a draw's label is not a string")
            kept = kept_as_json(value)
        except Unrecordable as exc:
            self.problem = self.problem or str(exc)
        self.draws.append([shown, label, kept])
        return value

    def __repr__(self) -> str:
        return repr(self._inner)


class Stopped(BaseException):
    """A replayed draw where hypothesis ended the reference's example (StopTest)."""


_STOPPED = object()  # a recorded draw without a value: the example stopped there


class ReplayedData:
    """Stands in for st.data() in a replayed example: each draw gives the recorded value if asked the recorded
    strategy, in the recorded order; anything else raises Departed. In a final run it notes each draw as
    hypothesis's own does ("Draw 1: ...")."""

    def __init__(self, draws: list[tuple[str, Any, Any]]) -> None:
        self._draws, self._at = draws, 0

    @property
    def finished(self) -> bool:
        return self._at == len(self._draws)

    def draw(self, strategy: Any, label: Any = None) -> Any:
        if self._at >= len(self._draws):
            raise Departed("a draw the recorded run did not make")
        want, want_label, value = self._draws[self._at]
        if label != want_label or shown(strategy) != want:
            raise Departed("a draw of another strategy than the recorded run's")
        self._at += 1
        if value is _STOPPED:
            raise Stopped()
        if internals.is_final():
            hypothesis.note(internals.pretty(f"Draw {self._at}{'' if label is None else f' ({label})'}: ", value))
        return value

    def __repr__(self) -> str:
        return "data(...)"


# ---------------------------------------------------------------- values <-> JSON


def encode(value: Any) -> Any:
    """`value` as JSON data, tagged where JSON alone would lose its type; Unrecordable if it cannot be."""
    kind = type(value)
    if value is None or kind in (bool, int, str):
        return value
    if kind is float:
        return value if math.isfinite(value) and not (value == 0 and math.copysign(1, value) < 0) else {"$f": repr(value)}
    if kind is list:
        return [encode(v) for v in value]
    if kind is tuple:
        return {"$t": [encode(v) for v in value]}
    if kind is dict:
        return {"$d": [[encode(k), encode(v)] for k, v in value.items()]}
    if callable(value):
        # A function drawn by sampled_from (str.upper): named, and found again by that name.
        owner = getattr(value, "__objclass__", None)
        module = getattr(owner or value, "__module__", None)
        name = getattr(value, "__qualname__", None)
        if module and name and _resolve(module, name) is value:
            return {"$r": f"{module}:{name}"}
    raise Unrecordable(f"{kind.__name__} values are not recorded")


def decode(data: Any) -> Any:
    if type(data) is list:
        return [decode(v) for v in data]
    if type(data) is dict:
        ((tag, inner),) = data.items()
        if tag == "$f":
            return float(inner)
        if tag == "$t":
            return tuple(decode(v) for v in inner)
        if tag == "$d":
            return {decode(k): decode(v) for k, v in inner}
        if tag == "$r":
            module, name = inner.split(":", 1)
            return _resolve(module, name)
        if tag == "$data":
            return ReplayedData([(d[0], d[1], decode(d[2]) if len(d) == 3 else _STOPPED) for d in inner])
        raise ValueError(f"unknown tag {tag!r}")
    return data


def _resolve(module: str, qualname: str) -> Any:
    try:
        found: Any = importlib.import_module(module)
        for part in qualname.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError):
        return None
    return found


def kept_as_json(value: Any) -> Any:
    """`value` encoded, if it comes back from JSON the same; Unrecordable otherwise."""
    kept = encode(value)
    if not same(decode(kept), value):
        raise Unrecordable("a value changed on the trip to JSON and back")
    return kept


def same(a: Any, b: Any) -> bool:
    """Equal and of the same types all the way down (1 and 1.0, 0.0 and -0.0 differ)."""
    if type(a) is not type(b):
        return False
    if type(a) is float:
        return repr(a) == repr(b)
    if type(a) in (list, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if type(a) is dict:
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return a is b or a == b


# ---------------------------------------------------------------- the recording


@dataclass
class Example:
    data: dict  # the kwargs the test received, encoded: decoded afresh for each run, which may mutate them
    outcome: str  # pass | reject | stop
    rank: int  # its place in hypothesis's order of simplicity (shortlex of its choices): 0 is simplest
    choices: list | None = None  # with the pool, the 25's choices, encoded: where `simplified` starts


@dataclass
class Recording:
    tests: dict[str, list[Example]] = field(default_factory=dict)  # "module.py::test_name" -> examples, in order
    skipped: dict[str, str] = field(default_factory=dict)  # test -> why it is not replayed
    modules: dict[str, str] = field(default_factory=dict)  # test module -> the digest its examples depend on
    # smallest-drawn only: test -> the simplest inputs the reference passes (simplest_inputs), simplest first
    pool: dict[str, list[Example]] = field(default_factory=dict)

    def as_json(self) -> dict:
        def rows(examples: dict[str, list[Example]]) -> dict:
            return {
                name: [[e.data, e.outcome, e.rank] + ([e.choices] if e.choices is not None else []) for e in listed]
                for name, listed in examples.items()
            }

        return {
            "format": FORMAT,
            "hypothesis": hypothesis.__version__,
            "modules": self.modules,
            "skipped": self.skipped,
            "tests": rows(self.tests),
            "pool": rows(self.pool),
        }


def from_json(data: dict) -> Recording | None:
    """The recording, or None if another format or hypothesis made it."""
    if data.get("format") != FORMAT or data.get("hypothesis") != hypothesis.__version__:
        return None

    def examples(rows: dict) -> dict[str, list[Example]]:
        return {name: [Example(*row) for row in listed] for name, listed in rows.items()}

    skipped, modules = dict(data.get("skipped", {})), dict(data.get("modules", {}))
    return Recording(examples(data["tests"]), skipped, modules, examples(data.get("pool", {})))


@cache
def module_digest(ex: exercise.Exercise, module: Path) -> str:
    """What a test module of `ex`'s drawn examples depend on: its text, the conftest, exercise.toml, the value rule, hypothesis.

    And the engine's tests_plugin.py, which holds the hypothesis profile; all of these ship to the page.
    """
    plugin = exercise.ENGINE_ROOT / "grader" / "core" / "tests_plugin.py"
    parts = [module, ex.tests_dir / "conftest.py", ex.root / "problem" / "exercise.toml", plugin]
    values = ex.path("values")
    if values is not None:
        parts.append(values)
    digest = hashlib.sha256(f"{FORMAT}\0{hypothesis.__version__}\0".encode())
    for path in parts:
        try:
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
        except OSError:
            digest.update(path.name.encode() + b"\0-\0")
    return digest.hexdigest()[:20]


def cache_path(ex: exercise.Exercise) -> Path:
    """replay-<digest>[-pool].json in `ex`'s cache folder: the digest also covers the reference and this engine's sources."""
    env = os.environ.get(ENV_FILE)
    return Path(env) if env else _cache_path(ex, pooled())


def pooled() -> bool:
    """Whether the recording holds the smallest-drawn pool (not under the tests' shrunk oracle: it costs seconds to draw)."""
    return counterexample_mode() == SMALLEST_DRAWN


@cache
def _cache_path(ex: exercise.Exercise, pool: bool) -> Path:
    digest = hashlib.sha256()
    for module in sorted(ex.tests_dir.glob("test_*.py")):
        digest.update(module_digest(ex, module).encode())
    for path in [ex.root / "solutions" / "reference.py", *(exercise.ENGINE_ROOT / name for name in ENGINE_SOURCES)]:
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(b"-")
    return ex.cache / f"replay-{digest.hexdigest()[:20]}{'-pool' if pool else ''}.json"


_loaded: dict[Path, Recording | None] = {}


def current(ex: exercise.Exercise) -> Recording | None:
    """`ex`'s recording, read once per process; None if there is none (nothing is replayed then)."""
    path = cache_path(ex)
    if path not in _loaded:
        try:
            _loaded[path] = from_json(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError):
            _loaded[path] = None
    return _loaded[path]


_recording = False  # while record() runs the tests against the reference: nothing is replayed then


def enabled() -> bool:
    """Whether property tests are replayed now: not while recording, not under KIT_REPLAY=0, not on a hypothesis the kit does not know."""
    return not _recording and os.environ.get(ENV_SWITCH, "1") != "0" and internals.known()


def path() -> dict[str, str]:
    """Which way property tests run in this process, as results.json and the summary say it: replay or plain hypothesis, and why."""
    if os.environ.get(ENV_SWITCH, "1") == "0":
        way, why = "plain hypothesis", f"{ENV_SWITCH}=0"
    elif not internals.known():
        way, why = "plain hypothesis", f"hypothesis {internals.version()} is not a version the kit knows"
    else:
        way, why = "replay", ""
    return {"property_tests": way, "hypothesis": internals.version(), **({"why": why} if why else {})}


def ensure(ex: exercise.Exercise, run: Callable[..., Any], reference: Callable[[], Any] | None = None) -> Recording | None:
    """`ex`'s recording, made now with `run` (runner.run) if there is none and the reference is at hand (trusted side only)."""
    found = current(ex)
    if found is not None or not enabled():
        return found
    source = ex.root / "solutions" / "reference.py"
    if reference is None:
        if not source.exists():
            return None  # the page: its recording comes with the site

        def reference():
            from grader.core.submission import load_local

            return load_local(str(source), ex.function)

    recording = record(ex, run, reference, pool=pooled())
    path = cache_path(ex)
    text = json.dumps(recording.as_json(), ensure_ascii=True)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)  # whole or not at all: other processes may read it now
    except OSError:
        pass  # a read-only kit still works, recording once per process
    _loaded[path] = from_json(json.loads(text))
    return _loaded[path]


class _Capture:
    """A pytest plugin that writes down every example hypothesis gives each @given test."""

    def __init__(self, ex: exercise.Exercise, simplest: bool = False) -> None:
        self.ex = ex
        self.recording = Recording()  # its tests are filled by record(), which ranks them
        self.drawn: dict[str, list[tuple[Any, str, tuple, Any]]] = {}  # test -> (kwargs encoded, outcome, simplicity, choices)
        self._simplest = simplest  # after hypothesis's run, try the simplest inputs too (the smallest-drawn pool)
        self.simplest: dict[str, list[tuple[Any, str, tuple]]] = {}

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        items[:] = [item for item in items if hasattr(getattr(item, "obj", None), "hypothesis")]

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item):
        handle = getattr(getattr(item, "obj", None), "hypothesis", None)
        given = internals.given_kwargs(handle) if handle is not None else None
        if handle is None or given is None:
            yield
            return
        name = test_key(item)
        self.recording.modules[item.path.name] = module_digest(self.ex, item.path)
        inner = handle.inner_test
        examples: list[tuple[Any, str, tuple, Any]] = []
        why: list[str] = []

        # Hypothesis seeds a derandomized test from its function's source and signature: the
        # stand-in must hash as the test does (functools.wraps makes getsource and signature follow it).
        @functools.wraps(inner)
        def capture(*args: Any, **kwargs: Any) -> Any:
            data = internals.current_data()
            drawn = {k: v for k, v in kwargs.items() if k in given}
            # st.data() draws in the body: written down as they are made (see _DrawLog).
            logs = {k: _DrawLog(v) for k, v in drawn.items() if internals.is_data_object(v)}
            kept: dict[str, Any] = {}
            try:
                # Now: the body may change what it was given.
                kept = {k: kept_as_json(v) for k, v in drawn.items() if k not in logs}
            except Unrecordable as exc:
                why.append(str(exc))
            outcome = None
            try:
                result = inner(*args, **{**kwargs, **logs})
                outcome = PASS
            except UnsatisfiedAssumption:
                outcome = REJECT
                raise
            except StopTest:
                outcome = STOP
                raise
            finally:
                if internals.targeted(data):
                    why.append("it calls target()")
                why.extend(log.problem for log in logs.values() if log.problem)
                if outcome is None:
                    why.append("an example ended otherwise than passed, rejected or stopped")
                else:
                    # The arguments in their order, each st.data() one as its draws (encode's "$d" form).
                    arguments = [[k, {"$data": logs[k].draws} if k in logs else kept.get(k)] for k in drawn]
                    # Hypothesis's order of simplicity covers the body's draws too: taken after them.
                    examples.append(
                        ({"$d": arguments}, outcome, internals.simplicity(data), _choices(data) if self._simplest else None)
                    )
            return result

        if internals.function_digest(capture) != internals.function_digest(inner):
            self.recording.skipped[name] = "hypothesis would seed it differently while it is recorded"
            yield
            return
        handle.inner_test = capture
        try:
            outcome = yield
        finally:
            handle.inner_test = inner
        if outcome.excinfo is not None:
            why.append("the reference does not pass it")
        if why or not examples:
            self.recording.skipped[name] = why[0] if why else "no examples"
            return
        self.drawn[name] = examples
        if self._simplest:
            function = cast(pytest.Function, item)  # collection kept only @given test functions
            funcargs = {arg: function.funcargs[arg] for arg in function._fixtureinfo.argnames}
            self.simplest[name] = simplest_inputs(inner, given, funcargs)


def _choices(data: Any) -> list | None:
    """The example's choices, encoded (None if one is not JSON's: bytes, say)."""
    try:
        return encode(internals.choices(data))
    except (Unrecordable, AttributeError):
        return None


def simplest_inputs(inner: Callable, given: dict, funcargs: dict) -> list[tuple[Any, str, tuple]]:
    """The test's simplest inputs, run against the submission in `funcargs` (the reference): (kwargs encoded, outcome, simplicity).

    Drawn as @given draws its arguments (_attempt), from choices written here rather than random
    ones: the simplest choices of all first, then, best first, those one step up from an input
    already tried (one choice raised to its next simplest value, every choice after it the
    simplest). Hypothesis's shrinking walks down to such inputs.
    """
    strategies = list(given.items())
    found: dict[tuple, tuple[Any, str]] = {}
    first = _attempt(inner, strategies, funcargs, ())
    if first is None or first[2] == RAISED:
        return []
    longest = len(first[0]) + SIMPLEST_LONGER
    runs, frontier = 1, [(first[1], 0, (), first)]
    while frontier and runs < SIMPLEST_RUNS:
        key, steps, prefix, (nodes, _, outcome, arguments) = heapq.heappop(frontier)
        if key in found:
            continue
        found[key] = (arguments, outcome)
        if steps >= SIMPLEST_STEPS:
            continue
        for at in range(len(prefix), len(nodes)):
            node = nodes[at]
            value = None if node.was_forced else internals.value_at(node, internals.index_of(node) + 1)
            if value is None:
                continue
            step = (*(n.value for n in nodes[:at]), value)
            tried = _attempt(inner, strategies, funcargs, step)
            runs += 1
            if tried is not None and tried[2] != RAISED and len(tried[0]) <= longest:
                heapq.heappush(frontier, (tried[1], steps + 1, step, tried))
    return [(arguments, outcome, key) for key, (arguments, outcome) in found.items()]


def simplified(inner: Callable, given: dict, funcargs: dict, choices: list, tape: Tape, start: int) -> tuple[dict, int] | None:
    """A simpler input than the failing one `choices` give that fails too, and where its calls begin on the tape.

    Hypothesis's shrinking in small, for a failing example less simple than every simplest input.
    Passes over its choices, each taking every simpler input that still fails as it goes: leave
    out a run of choices (8, 4, 2 or 1 of them: a list's element and its "one more"), lower the
    choices that repeat one value together (a word in both lists), lower each choice (to its
    simplest value, halfway there, one less; a float also rounded); again while a pass found one.
    At most SIMPLIFY_TRIES tries, and none after a call that timed out, crashed or found the budget
    spent (each more would be waited for). None if it found none. The example's own calls (from
    `start` on the tape) are answered from the tape.
    """
    strategies = list(given.items())
    tape.serve_from(start)
    try:
        with internals.quiet_notes():
            best = _attempt(inner, strategies, funcargs, decode(choices), simplest_after=False)
    finally:
        tape.record_from_here()
    if best is None or best[2] != RAISED:
        return None

    def lower(node: Any) -> list:
        """Simpler values for one choice: its simplest, halfway there, one less; a float also rounded."""
        index = internals.index_of(node)
        if node.was_forced or index == 0:
            return []
        values = [internals.value_at(node, less) for less in sorted({0, index // 2, index - 1})]
        if node.type == "float" and math.isfinite(node.value):
            values += [float(math.floor(node.value)), float(math.ceil(node.value)), round(node.value, 1)]
        return [v for v in values if v is not None and internals.permitted(node, v) and internals.index_of(node, v) < index]

    found: tuple[dict, int] | None = None
    tries = 0

    def better(candidate: list) -> bool:
        """Whether `candidate` fails and is simpler than the best so far (then it is the best)."""
        nonlocal best, found, tries
        tries += 1
        begins = tape.position
        with internals.quiet_notes():
            tried = _attempt(inner, strategies, funcargs, candidate)
        if tape.waited_since(begins):
            tries = SIMPLIFY_TRIES  # a call that hung or crashed: each more would be waited for
            return False
        if tried is None or best is None or tried[2] != RAISED or not tried[1] < best[1]:
            return False
        best, found = tried, (tried[3], begins)
        return True

    # Passes over the choices, as hypothesis's shrinker makes them, each going on from where it
    # improved; again while a pass improved anything.
    improved = True
    while improved and tries < SIMPLIFY_TRIES:
        improved = False
        for size in (8, 4, 2, 1):  # leave out a run of choices (a list's element and its "one more")
            at = len(best[0]) - size
            while at >= 0 and tries < SIMPLIFY_TRIES:
                values = [node.value for node in best[0]]
                if better(values[:at] + values[at + size :]):
                    improved = True
                    at = min(at, len(best[0]) - size)
                else:
                    at -= 1
        # Choices that repeat one value (a word in both lists, say) go down together. The places
        # are those of the input the pass began with; after a change they may point elsewhere,
        # which only makes a try fail (so the guard on their length).
        alike: dict[tuple, list[int]] = {}
        for at, node in enumerate(best[0]):
            alike.setdefault(internals.kind(node), []).append(at)
        for places in [p for p in alike.values() if len(p) > 1]:
            nodes = best[0]
            for value in lower(nodes[places[0]]) if places[-1] < len(nodes) else []:
                if tries >= SIMPLIFY_TRIES:
                    break
                values = [node.value for node in nodes]
                if better([value if at in places else v for at, v in enumerate(values)]):
                    improved = True
                    break
        at = 0
        while at < len(best[0]) and tries < SIMPLIFY_TRIES:  # each choice down, the simplest value first
            nodes = best[0]
            for value in lower(nodes[at]):
                if tries >= SIMPLIFY_TRIES:
                    break
                values = [node.value for node in nodes]
                if better(values[:at] + [value] + values[at + 1 :]):
                    improved = True
                    break
            at += 1
    return found


def _attempt(
    inner: Callable, strategies: list, funcargs: dict, choices: Any, simplest_after: bool = True
) -> tuple[Any, tuple, str, Any] | None:
    """Run the test's body once on the arguments `choices` give: (choice nodes, simplicity, outcome, kwargs encoded).

    Each argument is drawn in turn from its strategy, as @given draws them, then the body's own
    draws; past the choices given, every choice is the simplest (`simplest_after`). The outcome is
    PASS, REJECT or RAISED; None where the input is not one to keep: hypothesis would have stopped
    it (StopTest: the choices ran out), or it does not survive JSON.
    """
    try:
        with internals.drawing(choices, simplest_after, inner) as data:
            drawn = {name: data.draw(strategy) for name, strategy in strategies}
            logs = {k: _DrawLog(v) for k, v in drawn.items() if internals.is_data_object(v)}
            kept = {k: kept_as_json(v) for k, v in drawn.items() if k not in logs}
            outcome = _outcome(inner, funcargs, {**drawn, **logs})
    except (StopTest, Unrecordable, Departed, Stopped):
        return None
    if outcome not in (PASS, REJECT, RAISED) or any(log.problem for log in logs.values()):
        return None
    arguments = [[k, {"$data": logs[k].draws} if k in logs else kept[k]] for k in drawn]
    return internals.nodes(data), internals.simplicity(data), outcome, {"$d": arguments}


def test_key(item: pytest.Item) -> str:
    return f"{item.path.name}::{getattr(item, 'originalname', item.name)}"


def record(ex: exercise.Exercise, run: Callable[..., Any], reference: Callable[[], Any], pool: bool = False) -> Recording:
    """Run every @given test of `ex`'s hidden tests once against `reference` with `run` (runner.run), writing its examples down.

    With `pool`, each test's simplest inputs are tried against the reference too, and those it
    passes make the test's pool.
    """
    capture = _Capture(ex, simplest=pool)
    global _recording
    _recording, previous = True, _recording
    try:
        run(ex, reference, "reference", plugins=(capture,))
    finally:
        _recording = previous
    recording = capture.recording
    for name, drawn in capture.drawn.items():
        known = {key for _, _, key, _ in drawn}
        # Inputs the verdict's run did not draw, that the reference passes, each once, the simplest first.
        tried = capture.simplest.get(name, [])
        fresh = {key: kept for kept, outcome, key in tried if outcome == PASS and key not in known and key != ()}
        simplest = sorted(fresh)
        # One order of simplicity across both lists; equal ones in the order hypothesis drew them.
        order = sorted([(key, 0, i) for i, (_, _, key, _) in enumerate(drawn)] + [(key, 1, j) for j, key in enumerate(simplest)])
        rank = {(source, i): index for index, (_, source, i) in enumerate(order)}  # source 0: the 25, 1: the pool
        recording.tests[name] = [
            Example(kept, outcome, rank[0, i], choices) for i, (kept, outcome, _, choices) in enumerate(drawn)
        ]
        if simplest:
            recording.pool[name] = [Example(fresh[key], PASS, rank[1, j]) for j, key in enumerate(simplest)]
    return recording


# ---------------------------------------------------------------- replaying


class Tape:
    """Stands in for the submission: records each call's answer, then serves them again in the same order.

    The fallback to hypothesis makes the replay's calls again first: they are answered from
    here, so the submission (and a budget, a hang, a counter it keeps) sees each call once.
    """

    def __init__(self, inner: Any, function: str):
        self._inner, self._function = inner, function
        self._log: list[tuple[tuple, dict, Any, BaseException | None, Any]] = []
        self._recording, self._serving, self._at, self._again = True, False, 0, False

    def __getattr__(self, name: str) -> Any:
        if name == self._function:
            return self._call
        return getattr(self._inner, name)

    @property
    def position(self) -> int:
        return len(self._log)

    def rewind(self) -> None:
        self.serve_from(0)

    def record_from_here(self) -> None:
        """Record the calls from here on (after serve_from), as at the start."""
        self._recording, self._serving = True, False

    def waited_since(self, start: int) -> bool:
        """Whether a call recorded from `start` on timed out, crashed or found the budget spent."""
        return any(isinstance(error, SubmissionError) and error.kind != "exception" for _, _, _, error, _ in self._log[start:])

    def serve_from(self, start: int, again: bool = False) -> None:
        """Answer the next calls from the recorded ones, from `start` on, while they match.

        `again`: a call that returned is asked again (its answer may differ: a counter, a cache),
        one that raised is not (a hang would be waited for twice).
        """
        self._recording, self._serving, self._at, self._again = False, True, start, again

    def _call(self, *args: Any, **kwargs: Any) -> Any:
        if self._serving:
            if self._at < len(self._log):
                call_args, call_kwargs, value, error, tb = self._log[self._at]
                if same(call_args, args) and same(call_kwargs, kwargs):
                    self._at += 1
                    if error is not None:
                        raise error.with_traceback(tb)
                    if not self._again:
                        return value
                    return getattr(self._inner, self._function)(*args, **kwargs)
            self._serving = False  # a call the replay did not make: from here on, the submission answers
        function = getattr(self._inner, self._function)
        if not self._recording:
            return function(*args, **kwargs)
        try:
            value = function(*args, **kwargs)
        except Exception as exc:
            self._log.append((args, dict(kwargs), None, exc, exc.__traceback__))
            raise
        self._log.append((args, dict(kwargs), value, None, None))
        return value


def run_item(item: pytest.Function, ex: exercise.Exercise) -> bool | None:
    """pytest_pyfunc_call for a recorded @given test of `ex`: True once it ran, replayed or handed over to hypothesis."""
    if not enabled():
        return None
    recording = current(ex)
    if recording is None:
        return None
    examples = recording.tests.get(test_key(item))
    handle = getattr(item.obj, "hypothesis", None)
    if not examples or handle is None or recording.modules.get(item.path.name) != module_digest(ex, item.path):
        return None
    funcargs = {name: item.funcargs[name] for name in item._fixtureinfo.argnames}
    tape = None
    if "submission" in funcargs:
        tape = funcargs["submission"] = Tape(funcargs["submission"], ex.function)
    inner = handle.inner_test
    smallest = counterexample_mode() == SMALLEST_DRAWN and tape is not None
    starts: list[int] = []  # where each example's calls begin on the tape
    raised: list[tuple[int, int]] = []  # (rank, index) of each example that raised where the reference did not
    differs = False
    with internals.quiet_notes():
        for index, example in enumerate(examples):
            starts.append(tape.position if tape is not None else 0)
            got = _outcome(inner, funcargs, decode(example.data))
            if got == example.outcome:
                continue
            differs = True
            if not smallest:
                break
            if got == RAISED:
                raised.append((example.rank, index))
    if not differs:
        return True  # every example as the reference had it: hypothesis would pass it too
    pool = recording.pool.get(test_key(item), [])
    if raised and pool and tape is not None:  # with no pool (another hypothesis version) it shrinks below
        rank, index = min(raised)
        simpler = _simpler_failure(pool, rank, inner, funcargs, tape)
        example, start = simpler if simpler is not None else (examples[index], starts[index])
        shown = example.data
        if example.rank > pool[-1].rank and example.choices is not None:
            # Less simple than every simplest input (a bug only a longer input shows): simplified.
            found = simplified(inner, internals.given_kwargs(handle) or {}, funcargs, example.choices, tape, start)
            if found is not None:
                shown, start = found
        _fail_with(item, inner, funcargs, decode(shown), tape, start)
        # It passed when asked again, as hypothesis's final run asks it: hypothesis decides (flaky).
    # Hypothesis draws the same examples again; the tape answers those the replay already asked.
    if tape is not None:
        tape.rewind()
    item.obj(**funcargs)
    return True


def _simpler_failure(pool: Any, rank: int, inner: Callable, funcargs: dict, tape: Tape) -> tuple[Example, int] | None:
    """The simplest pool example below `rank` that raises, and where its calls begin on the tape."""
    with internals.quiet_notes():
        for extra in pool:
            if extra.rank >= rank:
                return None  # the pool is simplest first: the recorded example is the simplest failing one
            start = tape.position
            if _outcome(inner, funcargs, decode(extra.data)) == RAISED:
                return extra, start
    return None


RAISED = "raised"
DEPARTED = "departed"  # an st.data() test drew otherwise than the reference's run


def counterexample_mode() -> str:
    """SMALLEST_DRAWN; KIT_COUNTEREXAMPLE=shrunk only for the tests that compare replay with hypothesis itself."""
    return SHRUNK if os.environ.get(ENV_COUNTEREXAMPLE) == SHRUNK else SMALLEST_DRAWN


def _outcome(inner: Callable, funcargs: dict, kwargs: dict) -> str:
    try:
        inner(**funcargs, **kwargs)
        got = PASS
    except Departed:
        return DEPARTED
    except UnsatisfiedAssumption:
        got = REJECT
    except Stopped:
        got = STOP
    except Exception:
        return RAISED
    if not all(v.finished for v in kwargs.values() if isinstance(v, ReplayedData)):
        return DEPARTED  # fewer draws than the reference's run: hypothesis would go on otherwise
    return got


def _fail_with(item: pytest.Function, inner: Callable, funcargs: dict, kwargs: dict, tape: Tape, start: int) -> None:
    """Raise the failure of one recorded example, with the notes hypothesis attaches to the example it shows.

    The example runs again as hypothesis's final run would, and its calls are asked again (those
    that raised are answered from the tape). Returns (and hypothesis decides) only if it passes this
    time: a submission whose answers change from call to call, which hypothesis calls flaky.
    """
    fragments = [internals.pretty_call(getattr(item, "originalname", item.name), {**funcargs, **kwargs})]
    tape.serve_from(start, again=True)
    try:
        with internals.final_run(fragments.append):
            inner(**funcargs, **kwargs)
    except (UnsatisfiedAssumption, Departed, Stopped):
        return
    except Exception as exc:
        for fragment in fragments:
            exc.add_note(fragment)
        raise
