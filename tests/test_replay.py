"""Property replay (grader/core/replay.py): the recorded examples give the verdicts hypothesis gives, to the letter."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from grader.core import exercise, replay
from grader.core.runner import run
from grader.judging.discovery import read_source
from grader.sandbox.host import SandboxedSubmission

CATALOGUE = Path(__file__).resolve().parent / "catalogue"
EVERY_FILE = sorted(CATALOGUE.glob("*/*.py"))
# Each file is graded twice, sandboxed (4 minutes for all 65): by default every correct and
# cheating file and every third wrong one, the same ones each time; `make test-full` (or
# KIT_FULL_CATALOGUE=1) takes them all.
SAMPLED = [p for i, p in enumerate(EVERY_FILE) if p.parent.name != "wrong" or i % 3 == 0]
FILES = EVERY_FILE if os.environ.get("KIT_FULL_CATALOGUE") == "1" else SAMPLED
EXERCISE = exercise.load(exercise.KIT_ROOT)
GAMMA_0 = "test_gamma_0_scores_the_fmean_alone"  # the property test these tests make fail
GAMMA_0_KEY = f"test_properties.py::{GAMMA_0}"


def _verdict(report, test: str = GAMMA_0):
    return {t.name: t for t in report.tests}[test]


def properties(path: Path, replaying: bool, mode: str = replay.SHRUNK) -> list[dict]:
    """Every property test's verdict, message and output for the file, replay on or off.

    `mode`: the counterexample setting. Replay keeps hypothesis's own counterexamples under "shrunk".
    """
    os.environ[replay.ENV_SWITCH] = "1" if replaying else "0"
    os.environ[replay.ENV_COUNTEREXAMPLE] = mode
    try:
        report = run(
            EXERCISE,
            lambda: SandboxedSubmission(path, EXERCISE.function, EXERCISE.call_timeout, source=read_source(path)),
            path.name,
            tiers=("properties",),
        )
    finally:
        os.environ.pop(replay.ENV_SWITCH, None)
        os.environ.pop(replay.ENV_COUNTEREXAMPLE, None)
    return [{**vars(t)} for t in report.tests] + [{"status": report.status, "message": report.message}]


@pytest.fixture
def shrunk(monkeypatch):
    """counterexample = "shrunk": hypothesis shrinks, as it does without the kit."""
    monkeypatch.setenv(replay.ENV_COUNTEREXAMPLE, replay.SHRUNK)


# Only the pinned hypothesis records (another one turns replay off): with the newest, this passed
# only while a recording made by the earlier run happened to be readable in its worker.
@pytest.mark.pinned_hypothesis
def test_the_recording_holds_every_property_test_and_the_draws_made_in_their_bodies():
    recording = replay.ensure(EXERCISE, run)
    assert recording is not None
    assert recording.skipped == {}
    assert len(recording.tests) == 10
    for name, examples in recording.tests.items():
        assert sum(e.outcome == replay.PASS for e in examples) == EXERCISE.hypothesis_examples
        # One order of simplicity across the examples and the pool of simplest inputs.
        ranked = examples + recording.pool.get(name, [])
        assert sorted(e.rank for e in ranked) == list(range(len(ranked)))
    # The two st.data() tests: each example holds its body's draws, with the strategy each was asked of.
    for name in ("test_whitespace_does_not_change_the_score", "test_more_chunks_never_raise_the_score"):
        examples = recording.tests[f"test_properties.py::{name}"]
        draws = [d for e in examples for d in dict(e.data["$d"])["data"]["$data"]]
        assert draws and all(d[0].startswith("lists(") for d in draws)
        # Where hypothesis ended an example at a draw (its choices ran out), no value is kept.
        assert all(len(d) == 2 for e in examples if e.outcome == replay.STOP for d in dict(e.data["$d"])["data"]["$data"][-1:])


@pytest.mark.pinned_hypothesis
def test_a_submission_that_passes_never_enters_hypothesis_s_engine(monkeypatch):
    from hypothesis.internal.conjecture import engine

    replay.ensure(EXERCISE, run)
    runs: list[str] = []
    original = engine.ConjectureRunner.run

    def counted(self):
        runs.append("run")
        return original(self)

    monkeypatch.setattr(engine.ConjectureRunner, "run", counted)
    for replaying in (False, True):
        runs.clear()
        monkeypatch.setenv(replay.ENV_SWITCH, "1" if replaying else "0")
        report = run(EXERCISE, lambda: Counting([]), "counting", tiers=("properties",))
        assert report.passed == len(report.tests) == 10
        assert len(runs) == (0 if replaying else 10)


def draws_of(strategy, *values):
    return replay.ReplayedData([(repr(strategy), None, v) for v in values])


def test_a_replayed_draw_gives_the_recorded_value_only_for_the_recorded_strategy_in_order():
    from hypothesis import strategies as st

    words = st.lists(st.sampled_from(["a", "b"]), max_size=3)
    other = st.lists(st.sampled_from(["a", "b"]), max_size=4)

    def body(data, n=1, strategy=words):
        return [data.draw(strategy) for _ in range(n)]

    assert replay._outcome(body, {}, {"data": draws_of(words, ["a"])}) == replay.PASS
    # Another strategy, more draws or fewer than the reference's run: hypothesis decides.
    assert replay._outcome(body, {}, {"data": draws_of(words, ["a"]), "strategy": other}) == replay.DEPARTED
    assert replay._outcome(body, {}, {"data": draws_of(words, ["a"]), "n": 2}) == replay.DEPARTED
    assert replay._outcome(body, {}, {"data": draws_of(words, ["a"], ["b"])}) == replay.DEPARTED
    # A draw where hypothesis stopped the reference's example stops it again.
    stopped = replay.decode({"$data": [[repr(words), None, ["a"]], [repr(words), None]]})
    assert replay._outcome(body, {}, {"data": stopped, "n": 2}) == replay.STOP

    def swallows(data):
        try:
            data.draw(other)
        except Exception:
            pass  # a test's own handler cannot hide the departure

    assert replay._outcome(swallows, {}, {"data": draws_of(words, ["a"])}) == replay.DEPARTED
    assert repr(draws_of(words)) == "data(...)"


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_replay_gives_the_verdicts_and_counterexamples_hypothesis_gives(path):
    hypothesis_own = properties(path, replaying=False)
    assert properties(path, replaying=True) == hypothesis_own
    # The default, "smallest-drawn": hypothesis's verdicts and scores, and never a less simple
    # counterexample than hypothesis's shrunk one where the recording or its pool holds that one.
    os.environ[replay.ENV_COUNTEREXAMPLE] = replay.SMALLEST_DRAWN
    try:
        recording = replay.ensure(EXERCISE, run)
    finally:
        os.environ.pop(replay.ENV_COUNTEREXAMPLE, None)
    simplest = properties(path, replaying=True, mode=replay.SMALLEST_DRAWN)
    assert simplest[-1] == hypothesis_own[-1]
    for theirs, ours in zip(hypothesis_own[:-1], simplest[:-1]):
        assert (theirs["name"], theirs["status"] == "pass", theirs["score"]) == (
            ours["name"],
            ours["status"] == "pass",
            ours["score"],
        )
        shrunk_one, shown = falsifying_example(theirs["message"]), falsifying_example(ours["message"])
        if ours["status"] == "pass" or shown is None:
            continue
        ranks = example_ranks(recording, ours["name"])
        if shown not in ranks:
            # Only a drawn example less simple than every simplest input failed: simplified by the
            # replay's own passes (`replay.simplified`), which need not end where hypothesis's
            # shrinker does (two counterexamples alike but for one word, once); the same failure,
            # shown with an example no longer than hypothesis's.
            assert ours["message"].split("Falsifying example:")[0] == theirs["message"].split("Falsifying example:")[0]
            assert len(shown) <= len(shrunk_one), (shown, shrunk_one)
            continue
        # (Two st.data() examples can read alike: there the block does not tell which one failed.)
        if shrunk_one in ranks and "data=data(...)" not in shown:
            assert ranks[shown] <= ranks[shrunk_one], (shown, shrunk_one)


def falsifying_example(message: str) -> str | None:
    """The "Falsifying example: ..." block of a test's message, or None."""
    at = message.find("Falsifying example:")
    if at < 0:
        return None
    lines = message[at:].splitlines()
    return "\n".join(lines[: lines.index(")") + 1])


def example_ranks(recording: replay.Recording, test: str) -> dict[str, int]:
    """Each passing example of a test's recording and pool, as a message shows it -> its rank.

    An st.data() test's block does not show the draws (noted after it, as far as the body got):
    two examples can read alike, and the simplest one's rank is kept.
    """
    from hypothesis.vendor.pretty import RepresentationPrinter

    key = f"test_properties.py::{test}"
    ranks: dict[str, int] = {}
    for example in recording.tests[key] + recording.pool.get(key, []):
        if example.outcome != replay.PASS:
            continue
        printer = RepresentationPrinter()
        printer.text("Falsifying example: ")
        printer.repr_call(test, [], replay.decode(example.data), force_split=True)
        text = printer.getvalue()
        ranks[text] = min(ranks.get(text, example.rank), example.rank)
    return ranks


class Counting:
    """A submission in this process that writes down every call: the reference, or one that skips clipping."""

    function = EXERCISE.function

    def __init__(self, calls: list, clip: bool = True):
        from grader.core.submission import load_local

        self.calls, self.clip = calls, clip
        self.reference = load_local(str(EXERCISE.root / "solutions" / "reference.py"), EXERCISE.function)

    def meteor_score(self, reference, candidate, **params):
        self.calls.append((reference, candidate, params))
        if not self.clip and len(candidate.split()) > len(set(candidate.split())):
            return 1.5
        return self.reference.meteor_score(reference, candidate, **params)


@pytest.mark.parametrize("clip", [True, False], ids=["passing", "failing"])
def test_replay_asks_the_submission_the_calls_hypothesis_asks_each_once(clip, shrunk):
    replay.ensure(EXERCISE, run)
    seen = {}
    for replaying in (False, True):
        calls: list = []
        os.environ[replay.ENV_SWITCH] = "1" if replaying else "0"
        try:
            report = run(EXERCISE, lambda: Counting(calls, clip), "counting", tiers=("properties",))
        finally:
            os.environ.pop(replay.ENV_SWITCH, None)
        seen[replaying] = (calls, [(t.status, t.message) for t in report.tests])
    assert (report.passed == len(report.tests)) is clip
    # The same calls in the same order, each made once, and the same verdicts and counterexamples.
    assert seen[True] == seen[False]


@pytest.mark.pinned_hypothesis
def test_the_smallest_drawn_counterexample_is_the_simplest_failing_example_of_the_recording_and_its_pool():
    reports, recordings = {}, {}
    for mode in (replay.SHRUNK, replay.SMALLEST_DRAWN):
        os.environ[replay.ENV_COUNTEREXAMPLE] = mode
        try:
            recordings[mode] = replay.ensure(EXERCISE, run)
            reports[mode] = run(EXERCISE, lambda: Counting([], clip=False), "counting", tiers=("properties",))
        finally:
            os.environ.pop(replay.ENV_COUNTEREXAMPLE, None)
    shrunk, drawn = ({t.name: t for t in reports[m].tests} for m in (replay.SHRUNK, replay.SMALLEST_DRAWN))
    assert [(t.name, t.status) for t in shrunk.values()] == [(t.name, t.status) for t in drawn.values()]
    test = drawn["test_gamma_0_scores_the_fmean_alone"]
    assert test.status == "fail"
    assert test.message.startswith(
        "the score must lie between 0 and 1, got 1.5\nFalsifying example: test_gamma_0_scores_the_fmean_alone("
    )
    key = GAMMA_0_KEY
    pooled = recordings[replay.SMALLEST_DRAWN]
    failing = [
        e
        for e in pooled.tests[key] + pooled.pool[key]
        if len(replay.decode(e.data)["candidate"]) > len(set(replay.decode(e.data)["candidate"]))
    ]
    simplest = min(failing, key=lambda e: e.rank)
    # A simpler one than any of the 25 examples that decide the verdict: the pool found it.
    assert simplest in pooled.pool[key]
    assert simplest.rank < min(e.rank for e in failing if e in pooled.tests[key])
    example = replay.decode(simplest.data)
    call = f"meteor_score({' '.join(example['reference'])!r}, {' '.join(example['candidate'])!r})"
    assert test.message.endswith(f"\n{call}")


@pytest.mark.pinned_hypothesis
def test_the_pool_holds_the_simplest_inputs_the_reference_passes_and_only_the_smallest_drawn_setting_makes_it():
    import ast

    tree = ast.parse((EXERCISE.root / "hidden_tests" / "test_properties.py").read_text(encoding="utf-8"))
    VOCABULARY = next(
        ast.literal_eval(n.value)
        for n in tree.body
        if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "VOCABULARY"
    )

    os.environ[replay.ENV_COUNTEREXAMPLE] = replay.SMALLEST_DRAWN
    try:
        pooled, pooled_path = replay.ensure(EXERCISE, run), replay.cache_path(EXERCISE)
    finally:
        os.environ.pop(replay.ENV_COUNTEREXAMPLE, None)
    os.environ[replay.ENV_COUNTEREXAMPLE] = replay.SHRUNK
    try:
        plain, plain_path = replay.ensure(EXERCISE, run), replay.cache_path(EXERCISE)
    finally:
        os.environ.pop(replay.ENV_COUNTEREXAMPLE, None)
    assert plain.pool == {} and pooled_path != plain_path
    # The 25 examples that decide each verdict are the same either way.
    assert {name: [e.data for e in listed] for name, listed in pooled.tests.items()} == {
        name: [e.data for e in listed] for name, listed in plain.tests.items()
    }
    assert set(pooled.pool) == set(pooled.tests)
    for name, pool in pooled.pool.items():
        ranks = [e.rank for e in pool]
        assert len(pool) > 20 and ranks == sorted(set(ranks))
        assert all(e.outcome == replay.PASS for e in pool)
        assert not set(ranks) & {e.rank for e in pooled.tests[name]}
    # The simplest inputs all, up to SIMPLEST_STEPS steps from the simplest: here two word lists
    # (max_size 12, simplest first: empty), so every pair of at most one of the first two words a
    # side, and of two "the"s against none. Four steps at most: a word is one, the next word two.
    key = GAMMA_0_KEY
    held = {
        (tuple(e["reference"]), tuple(e["candidate"]))
        for e in (replay.decode(x.data) for x in pooled.tests[key] + pooled.pool[key])
    }
    sides = [(), (VOCABULARY[0],), (VOCABULARY[1],)]
    wanted = {(r, c) for r in sides for c in sides} | {((VOCABULARY[0],) * 2, ()), ((), (VOCABULARY[0],) * 2)}
    assert wanted <= held
    # Not five steps: three words a side.
    assert ((VOCABULARY[0],) * 3, (VOCABULARY[0],) * 2) not in held
    # And the simplest of all comes first: both empty.
    first = min(pooled.tests[key] + pooled.pool[key], key=lambda e: e.rank)
    assert replay.decode(first.data) == {"reference": [], "candidate": []}


def test_the_simplest_inputs_are_drawn_as_hypothesis_draws_the_tests_arguments(monkeypatch):
    """replay._attempt draws each argument in turn, then the body's draws: given hypothesis's own
    choices for an example, it gives hypothesis's arguments, outcome and order of simplicity."""
    import functools

    import hypothesis

    from grader.core import hypothesis_adapter as internals

    checked: dict[str, int] = {}

    class Choices:
        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_call(self, item):
            handle = getattr(item.obj, "hypothesis", None)
            if handle is None:
                yield
                return
            inner, given = handle.inner_test, handle._given_kwargs
            seen: list = []

            @functools.wraps(inner)  # hypothesis seeds the test from its source: the same examples
            def keeping(*args, **kwargs):
                data = hypothesis.control.current_build_context().data
                drawn = {k: replay.encode(v) for k, v in kwargs.items() if k in given and type(v).__name__ != "DataObject"}
                try:
                    return inner(*args, **kwargs)
                finally:
                    seen.append((list(data.choices), internals.simplicity(data), drawn))

            handle.inner_test = keeping
            try:
                yield
            finally:
                handle.inner_test = inner
            funcargs = {arg: item.funcargs[arg] for arg in item._fixtureinfo.argnames}
            checked[item.name] = 0
            for choices, rank, drawn in seen:
                tried = replay._attempt(inner, list(given.items()), funcargs, choices, simplest_after=False)
                if tried is None:
                    continue  # hypothesis stopped it in the body: its choices ran out
                _, key, outcome, arguments = tried
                assert key == rank
                assert {k: v for k, v in arguments["$d"] if k in drawn} == drawn
                checked[item.name] += outcome == replay.PASS

    monkeypatch.setattr(replay, "_recording", True)  # nothing replayed: hypothesis draws
    report = run(EXERCISE, lambda: Counting([]), "reference", tiers=("properties",), plugins=(Choices(),))
    assert report.passed == len(report.tests) == 10
    assert len(checked) == 10 and all(n == EXERCISE.hypothesis_examples for n in checked.values()), checked


def test_the_counterexample_setting_is_gone_and_an_exercise_naming_another_one_is_told_so():
    import tomllib

    data = tomllib.loads((EXERCISE.root / "problem" / "exercise.toml").read_text())
    assert "counterexample" not in data["hypothesis"]
    for old in ("shrunk", "tiny"):
        data["hypothesis"]["counterexample"] = old
        with pytest.raises(ValueError, match="no longer a setting.*Remove the line"):
            exercise.parse(data)
    data["hypothesis"]["counterexample"] = "smallest-drawn"  # what every exercise now does: read as before
    assert exercise.parse(data).hypothesis_examples == EXERCISE.hypothesis_examples


def test_a_value_that_does_not_survive_json_is_refused_and_the_tagged_ones_come_back_the_same():
    values = {"f": [0.5, -0.0, float("inf")], "t": (1, "a"), "d": {"k": [True, None]}, "fn": str.upper, "cls": str}
    assert replay.same(replay.decode(json.loads(json.dumps(replay.encode(values)))), values)
    assert not replay.same(replay.decode(replay.encode(1)), 1.0)
    with pytest.raises(replay.Unrecordable):
        replay.encode(object())
    with pytest.raises(replay.Unrecordable):
        replay.encode(lambda: 0)


@pytest.mark.pinned_hypothesis
def test_a_recording_made_by_another_hypothesis_is_not_used(tmp_path):
    data = replay.ensure(EXERCISE, run).as_json()
    assert replay.from_json(data) is not None
    assert replay.from_json({**data, "hypothesis": "0.0.1"}) is None
    assert replay.from_json({**data, "format": replay.FORMAT + 1}) is None


@pytest.mark.pinned_hypothesis
def test_the_page_gets_the_recording_in_its_kit_zip_and_finds_it_beside_its_session(tmp_path):
    import zipfile

    from grader.export import web as web_build

    web_build.kit_zip(EXERCISE, tmp_path / "kit.zip")
    with zipfile.ZipFile(tmp_path / "kit.zip") as z:
        shipped = json.loads(z.read(web_build.REPLAY_FILE))
        session = z.read(web_build.PAGE_SESSION.name).decode()
    assert shipped == replay.ensure(EXERCISE, run).as_json()
    assert "replay.ENV_FILE" in session and f'with_name("{web_build.REPLAY_FILE}")' in session
    # Nothing of the reference travels with it: the examples and how the tests took them, no answers.
    assert set(shipped) == {"format", "hypothesis", "modules", "skipped", "tests", "pool"}
    assert {outcome for examples in shipped["tests"].values() for _, outcome, *_ in examples} <= {"pass", "reject", "stop"}
    # The pool of simplest inputs goes too (the failing example shown is the simplest drawn one).
    assert shipped["pool"] and shipped["pool"].keys() == shipped["tests"].keys()


@pytest.mark.pinned_hypothesis
def test_hypothesis_keeps_no_formatted_traceback_per_failing_example_and_the_reports_stay_the_same(monkeypatch, shrunk):
    """hypothesis_adapter.expected_traceback: what hypothesis keeps of each failing example, shown by no report."""
    import hypothesis.core
    from hypothesis.internal import escalation

    from grader.core import hypothesis_adapter as internals

    assert hypothesis.core.format_exception is internals.expected_traceback
    kept: list[str] = []

    def keeping(err, tb):
        kept.append(internals.expected_traceback(err, tb))
        return kept[-1]

    reports = {}
    for name, formatter in (("short", keeping), ("hypothesis's own", escalation.format_exception)):
        monkeypatch.setattr(hypothesis.core, "format_exception", formatter)
        report = run(EXERCISE, lambda: Counting([], clip=False), "counting", tiers=("properties",))
        reports[name] = [(t.name, t.status, t.message) for t in report.tests]
    assert reports["short"] == reports["hypothesis's own"]
    assert sum(status == "fail" for _, status, _ in reports["short"]) >= 8
    # One line per failing example (no frames, no source), and there were many: the shrinking.
    assert len(kept) > 50 and all("Traceback" not in text and "File " not in text for text in kept)


class FailingThreeWays(Counting):
    """Three bugs, each raised or returned from its own line: hypothesis tells them apart by where they fail."""

    def meteor_score(self, reference, candidate, **params):
        self.calls.append((reference, candidate, params))
        words = candidate.split()
        if "the" in words:
            raise ZeroDivisionError("a bug on one line")
        if len(words) > 3:
            raise ValueError("another, on another line")
        if len(words) > len(set(words)):
            return 1.5
        return self.reference.meteor_score(reference, candidate, **params)


@pytest.mark.pinned_hypothesis
def test_hypothesis_locates_failures_from_their_last_frame_with_the_same_runs_and_reports(monkeypatch, shrunk):
    """hypothesis_adapter._locate_failures_cheaply: the same examples run, in the same order, and the same reports."""
    import inspect
    import traceback

    import hypothesis.core
    from hypothesis.internal import escalation

    from grader.core import hypothesis_adapter as internals

    assert hypothesis.core.traceback.extract_tb is internals.last_frame_only
    assert escalation.traceback.extract_tb is internals.last_frame_only
    assert escalation.getsourcefile is not inspect.getsourcefile
    runs = {}
    for name in ("last frame", "hypothesis's own"):
        if name == "hypothesis's own":
            monkeypatch.setattr(hypothesis.core, "traceback", traceback)
            monkeypatch.setattr(escalation, "traceback", traceback)
            monkeypatch.setattr(escalation, "getsourcefile", inspect.getsourcefile)
        calls: list = []
        report = run(EXERCISE, lambda: FailingThreeWays(calls), "three ways", tiers=("properties",))
        runs[name] = (calls, [(t.name, t.status, t.message) for t in report.tests])
    assert runs["last frame"] == runs["hypothesis's own"]
    calls, tests = runs["last frame"]
    # Shrinking ran (hundreds of calls), and the three bugs were seen apart.
    assert len(calls) > 200
    messages = " ".join(message for _, _, message in tests)
    assert "Hypothesis found 3 distinct failures" in messages


@pytest.mark.pinned_hypothesis
def test_a_test_with_several_distinct_failures_shows_the_simplest_example_and_how_many(shrunk):
    """Hypothesis reports failures that raise from different places apart, as one ExceptionGroup:
    the student is shown the simplest one's example (hypothesis lists them simplest last)."""
    import re

    report = run(EXERCISE, lambda: FailingThreeWays([]), "three ways", tiers=("properties",))
    several = [t for t in report.tests if "distinct failures" in t.message]
    assert several
    for test in several:
        assert "Falsifying example" in test.message and "ExceptionGroup" not in test.message, test.message
        assert re.search(r"\nHypothesis found [23] distinct failures; the simplest is shown\.$", test.message)
        assert test.status in ("fail", "error")


def _raise_from(depth: int, chained: bool) -> BaseException:
    def inner(n):
        if n:
            return inner(n - 1)
        if chained:
            try:
                {}["missing"]
            except KeyError as err:
                raise ValueError("chained") from err
        raise ZeroDivisionError("plain")

    try:
        inner(depth)
    except Exception as err:
        return err
    raise AssertionError("it raised nothing")


@pytest.mark.parametrize("depth", [0, 1, 30])
@pytest.mark.parametrize("chained", [False, True])
def test_the_last_frame_alone_is_the_whole_extractions_last_entry(depth, chained, monkeypatch):
    import sys
    import traceback

    from grader.core.hypothesis_adapter import last_frame_only

    err = _raise_from(depth, chained)
    for exc in (err, err.__cause__) if chained else (err,):
        whole, last = traceback.extract_tb(exc.__traceback__), last_frame_only(exc.__traceback__)
        assert len(last) == 1 and len(whole) == depth + 2 - (exc is err.__cause__) * (depth + 1)
        mine, theirs = last[-1], whole[-1]
        assert (mine.filename, mine.lineno, mine.name, mine.line) == (theirs.filename, theirs.lineno, theirs.name, theirs.line)
        assert (mine.end_lineno, mine.colno, mine.end_colno) == (theirs.end_lineno, theirs.colno, theirs.end_colno)
    assert list(last_frame_only(None)) == list(traceback.extract_tb(None)) == []
    # A limit keeps the first entries, not the last: then it is the whole extraction, given or set.
    assert last_frame_only(err.__traceback__, 1)[-1] == traceback.extract_tb(err.__traceback__, 1)[-1]
    monkeypatch.setattr(sys, "tracebacklimit", 2, raising=False)
    assert len(last_frame_only(err.__traceback__)) == min(2, len(traceback.extract_tb(err.__traceback__)))
    assert last_frame_only(err.__traceback__)[-1] == traceback.extract_tb(err.__traceback__)[-1]


@pytest.mark.pinned_hypothesis
def test_hypothesis_reads_only_the_last_entry_of_each_traceback_it_extracts():
    """last_frame_only holds only while hypothesis reads `traceback.extract_tb(...)[-1]`: another version fails here."""
    import inspect
    import re

    import hypothesis.core
    from hypothesis.internal import escalation

    for module in (hypothesis.core, escalation):
        source = inspect.getsource(module)
        calls = [m.end() for m in re.finditer(r"traceback\.extract_tb\(", source)]
        assert calls, module.__name__
        for end in calls:
            closing = source.index(")", end)
            assert source[closing : closing + 5] == ")[-1]", (module.__name__, source[end - 40 : closing + 10])
    # And getsourcefile only to tell hypothesis's own frames from the test's.
    uses = re.findall(r".*getsourcefile\(.*", inspect.getsource(escalation))
    assert [u.strip() for u in uses] == ["is_hypothesis_file(getsourcefile(tb.tb_frame) or getfile(tb.tb_frame))"]


@pytest.mark.pinned_hypothesis
def test_verbosity_ranked_once_orders_and_compares_as_hypothesis_does(monkeypatch):
    import itertools
    import operator

    from hypothesis import Verbosity

    from grader.core import tests_plugin  # noqa: F401  (it ranks them when imported)

    ranked = Verbosity.__dict__["_int_value"]
    assert hasattr(ranked.__func__, "hypothesis_own")
    others = [*Verbosity, -1, 0, 1, 2, 3, 4, 2.5, True]
    ops = (operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne)

    def outcomes():
        found = []
        for a, b, op in itertools.product(Verbosity, others, ops):
            try:
                found.append(op(a, b))
            except TypeError as err:
                found.append(type(err))
        return found + [Verbosity._int_value(v) for v in Verbosity]

    mine = outcomes()
    monkeypatch.setattr(Verbosity, "_int_value", ranked.__func__.hypothesis_own)
    theirs = outcomes()
    assert mine == theirs and mine.count(True) > 50 and mine.count(False) > 50


def _strategies():
    """Strategies as test bodies build them, with near twins whose reprs differ."""
    import inspect

    from hypothesis import strategies as st
    from hypothesis.provisional import domains

    default_domains = inspect.signature(st.emails).parameters["domains"].default
    repr(default_domains)

    def formatted(strategy):
        repr(strategy)
        return strategy

    big = int("1000")  # an int made at run time: not the same object as another 1000
    return [
        lambda: st.lists(st.sampled_from(["a", "b"]), min_size=1, max_size=3),
        lambda: st.lists(st.sampled_from(("a", "b")), min_size=1, max_size=3),  # another brace
        lambda: st.lists(st.sampled_from(["a", "b"]), min_size=1, max_size=4),
        lambda: st.lists(st.sampled_from(["a", "b"]), max_size=3, min_size=1),  # another order
        lambda: st.sampled_from(["a"]),  # just('a')
        lambda: st.just(None),
        lambda: st.floats(min_value=0.0),
        lambda: st.floats(min_value=-0.0),
        lambda: st.integers(min_value=1),
        lambda: st.integers(min_value=True),
        lambda: st.lists(st.integers(), max_size=big),
        lambda: st.lists(st.integers(), max_size=1000),
        lambda: st.tuples(st.just(1), st.just(1.0)),
        lambda: st.tuples(st.just(1.0), st.just(1)),
        lambda: st.text(alphabet=" \t\n\r", min_size=1, max_size=3),
        lambda: st.text(alphabet=st.characters(codec="utf-8")),
        lambda: st.text(),
        lambda: st.emails(domains=formatted(domains())),  # its repr known, as the default's is
        lambda: st.emails(domains=default_domains),  # the very default object: left out of its repr
        lambda: st.sampled_from(["a", "b"]).map(str.upper),
        lambda: st.sampled_from(["a", "b"]).filter(bool),
        lambda: st.sampled_from(range(3)),
        lambda: st.one_of(st.just(1), st.just(2)),
        lambda: st.dictionaries(st.text(max_size=2), st.lists(st.booleans())),
    ]


@pytest.mark.pinned_hypothesis
def test_a_strategys_repr_is_found_once_per_make_up_and_is_the_repr(monkeypatch):
    """hypothesis_adapter.shown: each replayed draw checks the strategy's repr, and a test body builds it anew each time."""
    from hypothesis.strategies._internal.lazy import LazyStrategy

    from grader.core import hypothesis_adapter as internals

    makers = _strategies()
    internals._SHOWN.clear()
    for round_ in range(2):
        for make in makers if round_ == 0 else makers[::-1]:
            assert internals.shown(make()) == repr(make())
    # The twins whose reprs differ came apart (-0.0, the braces, 1 and 1.0, True and 1).
    reprs = [repr(make()) for make in makers]
    assert (
        all(reprs[a] != reprs[b] for a, b in ((0, 1), (0, 2), (6, 7), (8, 9), (12, 13), (17, 18))) and len(internals._SHOWN) > 15
    )
    formatted: list[str] = []
    own = LazyStrategy.__repr__

    def counting(self):
        formatted.append(own(self))
        return formatted[-1]

    monkeypatch.setattr(LazyStrategy, "__repr__", counting)
    again = internals.shown(makers[0]())
    assert again == "lists(sampled_from(['a', 'b']), min_size=1, max_size=3)" and formatted == []


def test_a_body_draw_of_a_strategy_holding_a_function_makes_its_test_unreplayable():
    """The same repr can draw otherwise when a function decides (a closure over an answer, say)."""
    from hypothesis import strategies as st

    class Data:
        def draw(self, strategy, label=None):
            return 0

    offset = 1
    for strategy in (st.integers().map(lambda v: v + offset), st.builds(int), st.integers().filter(bool)):
        log = replay._DrawLog(Data())
        log.draw(strategy)
        assert log.problem is not None and "function" in log.problem
    plain = replay._DrawLog(Data())
    plain.draw(st.lists(st.text(alphabet=" \t", min_size=1), min_size=2, max_size=2))
    plain.draw(st.lists(st.sampled_from(["a", "b"]), max_size=3))
    assert plain.problem is None and len(plain.draws) == 2


@pytest.mark.pinned_hypothesis
def test_a_grade_that_must_draw_the_examples_first_says_so_and_a_later_one_does_not(meteor_kit, tmp_path):
    import shutil
    import subprocess

    klass = tmp_path / "class"
    klass.mkdir()
    shutil.copy(EXERCISE.root / "solutions" / "reference.py", klass / "alice.py")
    env = {**os.environ, replay.ENV_FILE: str(tmp_path / "replay.json")}  # no recording there yet
    said = []
    for out in ("first", "second"):
        done = subprocess.run(
            [str(meteor_kit), "grade", str(klass), "--out", str(tmp_path / out)],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        said.append("drawing the property tests' examples" in done.stderr)
    assert said == [True, False]
    assert (tmp_path / "replay.json").exists()


class WrongOnlyOn(Counting):
    """The reference, except for one (reference, candidate) pair, where it answers 1.5."""

    def __init__(self, pair: tuple[str, str]):
        super().__init__([])
        self.pair = pair

    def meteor_score(self, reference, candidate, **params):
        if (reference, candidate) == self.pair:
            return 1.5
        return self.reference.meteor_score(reference, candidate, **params)


@pytest.mark.pinned_hypothesis
def test_the_pool_never_decides_a_verdict_only_which_failing_example_is_shown(monkeypatch):
    monkeypatch.setenv(replay.ENV_COUNTEREXAMPLE, replay.SMALLEST_DRAWN)
    recording = replay.ensure(EXERCISE, run)
    key = GAMMA_0_KEY

    def texts(examples: list) -> list[tuple[str, str]]:
        return [(" ".join(e["reference"]), " ".join(e["candidate"])) for e in (replay.decode(x.data) for x in examples)]

    drawn, pool = texts(recording.tests[key]), texts(recording.pool[key])
    asked: list = []  # every call the 25 examples of every property test make
    assert run(EXERCISE, lambda: Counting(asked), "reference", tiers=("properties",)).passed == 10
    asked_pairs = {(reference, candidate) for reference, candidate, _ in asked}
    # Wrong on a pool example alone: the 25 examples that decide the verdict never meet it, so it passes.
    only_in_pool = next(pair for pair in pool if pair not in asked_pairs)
    report = run(EXERCISE, lambda: WrongOnlyOn(only_in_pool), "wrong-in-pool", tiers=("properties",))
    assert report.passed == len(report.tests) == 10
    # Wrong on one of the 25 alone: it fails, and that example is shown (no pool example fails).
    report = run(EXERCISE, lambda: WrongOnlyOn(drawn[-1]), "wrong-in-the-25", tiers=("properties",))
    verdict = _verdict(report)
    assert verdict.status == "fail"
    assert verdict.message.endswith(f"\nmeteor_score({drawn[-1][0]!r}, {drawn[-1][1]!r})")


class WrongOnLong(Counting):
    """The reference, except where the candidate has seven words or more: it answers 1.5 there (or times out).

    `calls` gets (the test, the candidate) of each such call.
    """

    def __init__(self, calls: list, kind: str = "value"):
        super().__init__(calls)
        self.kind = kind

    def meteor_score(self, reference, candidate, **params):
        if len(candidate.split()) >= 7:
            self.calls.append((os.environ.get("PYTEST_CURRENT_TEST", "").split("::")[-1].split(" ")[0], candidate))
            if self.kind == "timeout":
                from grader.core.submission import SubmissionError

                raise SubmissionError("timeout", "the call took longer than 2 s")
            return 1.5
        return self.reference.meteor_score(reference, candidate, **params)


@pytest.mark.pinned_hypothesis
def test_a_failing_example_less_simple_than_every_simplest_input_is_simplified(monkeypatch):
    """No input of the pool has seven words: the drawn one that fails is simplified, as shrinking would."""
    monkeypatch.setenv(replay.ENV_COUNTEREXAMPLE, replay.SMALLEST_DRAWN)
    recording = replay.ensure(EXERCISE, run)
    key = GAMMA_0_KEY
    assert all(len(replay.decode(e.data)["candidate"]) < 7 for e in recording.pool[key])
    drawn = [replay.decode(e.data) for e in recording.tests[key]]
    assert max(len(d["candidate"]) for d in drawn) >= 8  # so the example that fails is less simple than the answer
    report = run(EXERCISE, lambda: WrongOnLong([]), "wrong-on-long", tiers=("properties",))
    verdict = _verdict(report)
    assert verdict.status == "fail"
    assert verdict.message.endswith(f"\nmeteor_score('', {' '.join(['the'] * 7)!r})"), verdict.message
    # And hypothesis, shrinking, ends on the same one.
    monkeypatch.setenv(replay.ENV_COUNTEREXAMPLE, replay.SHRUNK)
    shrunk = {t.name: t for t in run(EXERCISE, lambda: WrongOnLong([]), "wrong-on-long", tiers=("properties",)).tests}
    assert shrunk["test_gamma_0_scores_the_fmean_alone"].message == verdict.message


@pytest.mark.pinned_hypothesis
def test_simplifying_stops_at_a_call_that_timed_out(monkeypatch):
    monkeypatch.setenv(replay.ENV_COUNTEREXAMPLE, replay.SMALLEST_DRAWN)
    recording = replay.ensure(EXERCISE, run)
    hung: list = []
    report = run(EXERCISE, lambda: WrongOnLong(hung, kind="timeout"), "hangs-on-long", tiers=("properties",))
    assert _verdict(report).status == "timeout"
    # Each drawn example of seven words or more timed out once, then one try of the simplifying,
    # which stopped there; the example shown was answered from the tape, not waited for again.
    drawn = [replay.decode(e.data) for e in recording.tests[GAMMA_0_KEY]]
    long_ones = [" ".join(d["candidate"]) for d in drawn if len(d["candidate"]) >= 7]
    asked = [candidate for name, candidate in hung if name == GAMMA_0]
    assert len(long_ones) >= 2 and asked[: len(long_ones)] == long_ones
    assert len(asked) == len(long_ones) + 1
