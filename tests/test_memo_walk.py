"""The memo's walk and the real run's batches: a known kind in a few batches, and the jail told nothing.

Checked by what they do (counts, batches, deviations), never by timing: the figures are in
bench/bench_grade.py and docs/performance.md. The memoized side's own tests (grader/judging/memoized/).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import KIT_ROOT

from grader.core import exercise, runner
from grader.judging.grade import Grader, Settings, Spec, runs_for
from grader.judging.memoized import Memoized
from grader.judging.memoized.memo import Call, Memo, Profile, Recorder, Trace, history
from grader.judging.partial_run import catalogue, prepare_before_fork
from grader.sandbox.host import Answer, SandboxedSubmission

CATALOGUE = KIT_ROOT / "tests" / "catalogue"
EXERCISE = exercise.load(KIT_ROOT)


@pytest.fixture(scope="module")
def tests():
    prepare_before_fork(EXERCISE)
    return catalogue(EXERCISE)


def copy(tmp_path: Path, source: Path, name: str) -> Spec:
    path = tmp_path / name
    path.write_text(f"# {name}\n{source.read_text()}")
    return Spec(name, path)


def memoized(settings: Settings, tests) -> Grader:
    """A grader as a worker of the pool has it: the memoized way."""
    runs = runs_for(settings, tests)
    assert isinstance(runs, Memoized)
    return Grader(settings, tests, runs)


# ---------------------------------------------------------------- the memo's batches


def test_a_submission_of_a_known_kind_is_walked_in_a_few_batches(tmp_path, tests):
    grader = memoized(Settings(EXERCISE, timeout=2.0, budget=60.0), tests)
    kinds = [
        KIT_ROOT / "solutions" / "reference.py",
        CATALOGUE / "wrong" / "no_clipping.py",
        CATALOGUE / "wrong" / "crash_on_empty.py",
    ]
    try:
        first = [grader.grade(copy(tmp_path, k, f"{k.stem}_1.py"))[0] for k in kinds]
        assert all(r["from_memo"] < len(r["tests"]) for r in first)  # each was new: a real run
        for kind, earlier in zip(kinds, first):
            before = grader.runs.memo.round_trips
            again = grader.grade(copy(tmp_path, kind, f"{kind.stem}_2.py"))[0]
            batches = grader.runs.memo.round_trips - before
            assert again["from_memo"] == len(again["tests"]), kind.stem
            assert again["tests"] == earlier["tests"], kind.stem
            # One batch per test would be 59; the profiles leave one per split between kinds.
            assert batches <= 4, (kind.stem, batches)
    finally:
        grader.close()


# Answers only as known kinds do, in a mix no file showed: as alpha_hardcoded where only alpha
# is not its default, as gamma_hardcoded where only gamma is not, and as the reference elsewhere.
# A batch that follows one kind's answers bets wrong where the mix turns to another.
MIXED = (
    "\n".join(
        (KIT_ROOT / path).read_text().replace("def meteor_score(", f"def {name}(")
        for name, path in (
            ("_right", "solutions/reference.py"),
            ("_alpha", "tests/catalogue/wrong/alpha_hardcoded.py"),
            ("_gamma", "tests/catalogue/wrong/gamma_hardcoded.py"),
        )
    )
    + """
def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    if alpha != 0.9 and gamma == 0.5:
        return _alpha(reference, candidate, alpha, beta, gamma)
    if gamma != 0.5 and alpha == 0.9:
        return _gamma(reference, candidate, alpha, beta, gamma)
    return _right(reference, candidate, alpha, beta, gamma)
"""
)


def test_once_a_batch_bets_wrong_the_walk_bets_no_further_than_the_end_of_a_test(tmp_path, tests, monkeypatch):
    """A batch that bets wrong leaves the rest of its calls answered for nothing; a submission that
    surprised once likely surprises again, so from then on no batch runs past the end of its test."""
    dropped: list[int] = []
    settle = SandboxedSubmission.settle

    def counted(self, seconds):
        dropped.append(self._batch.unread if self._batch is not None else 0)
        return settle(self, seconds)

    grader = memoized(Settings(EXERCISE, timeout=2.0, budget=60.0), tests)
    try:
        grader.grade(copy(tmp_path, KIT_ROOT / "solutions" / "reference.py", "reference.py"))
        for kind in ("alpha_hardcoded", "gamma_hardcoded"):
            grader.grade(copy(tmp_path, CATALOGUE / "wrong" / f"{kind}.py", f"{kind}.py"))
        both = tmp_path / "mixed.py"
        both.write_text(MIXED)
        monkeypatch.setattr(SandboxedSubmission, "settle", counted)
        sent = grader.runs.memo.round_trips
        result = grader.grade(Spec("mixed.py", both))[0]
        trips = grader.runs.memo.round_trips - sent
    finally:
        grader.close()
    assert any(t["status"] == "fail" for t in result["tests"])
    assert result["from_memo"] >= len(result["tests"]) - 5  # the walk settled most tests: known answers
    assert len(dropped) >= 3 and trips >= 10  # it bet wrong more than once, and the walk went on
    # The first wrong bet drops the rest of a long batch (about 1,000 calls); after it, a batch
    # ends with its test, so a few calls at most. Betting on across tests dropped 3,500 more.
    assert sum(dropped[1:]) <= 200, dropped


# Finds the request the jail's child is answering, in its own frames, and says what it holds.
SPY = """
import sys

def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    frame = sys._getframe(1)
    while frame is not None and "request" not in frame.f_locals:
        frame = frame.f_back
    request = frame.f_locals["request"] if frame is not None else {}
    raise ValueError("request holds " + "+".join(sorted(request)))
"""


def test_the_jail_is_never_told_what_a_remembered_run_answered(tmp_path, tests):
    # The memo knows the reference's answers to every call; a batch that carried them (to stop
    # the child at the first answer that differs, say) would hand them to a submission that
    # reads its own frames. Only the calls and the request's number may reach the child.
    grader = memoized(Settings(EXERCISE, timeout=2.0, budget=60.0), tests)
    try:
        grader.grade(copy(tmp_path, KIT_ROOT / "solutions" / "reference.py", "reference_1.py"))
        spy = tmp_path / "spy.py"
        spy.write_text(SPY)
        result = grader.grade(Spec("spy.py", spy))[0]
    finally:
        grader.close()
    # (A long message is cut in the middle: the words after "holds" show in most of them.)
    seen = {m for t in result["tests"] for m in re.findall(r"request holds ([\w+]+)", t["message"])}
    assert seen == {"calls+seq"}, seen


def test_a_new_behaviour_is_walked_in_one_child_not_one_fresh_child_per_test_it_answers_anew(tmp_path, tests, monkeypatch):
    spawns = []
    spawn = SandboxedSubmission._spawn

    def counted(self, *args, **kwargs):
        spawns.append(1)
        return spawn(self, *args, **kwargs)

    monkeypatch.setattr(SandboxedSubmission, "_spawn", counted)
    in_real_run = []
    real_run = Memoized._run_for_real

    def watched(self, *args, **kwargs):
        before = len(spawns)
        try:
            return real_run(self, *args, **kwargs)
        finally:
            in_real_run.append(len(spawns) - before)

    monkeypatch.setattr(Memoized, "_run_for_real", watched)
    grader = memoized(Settings(EXERCISE, timeout=2.0, budget=60.0), tests)
    try:
        grader.grade(copy(tmp_path, KIT_ROOT / "solutions" / "reference.py", "reference_1.py"))
        in_real_run.clear()
        spawns.clear()
        result = grader.grade(copy(tmp_path, CATALOGUE / "wrong" / "rounding_to_int.py", "rounding.py"))[0]
    finally:
        grader.close()
    assert len(result["tests"]) - result["from_memo"] > 20  # it answers something new in many tests
    # The first child, the walk's one restart when its first batch (to the end of the run) bet
    # wrong, the private tier's own child, the memo's check's (one per stage), the diagnosis's:
    # not one per new test. Each stage's real run goes on in its walk's child (the check asks a
    # fresh one from where the walk left a full run's order).
    assert len(spawns) <= 6, len(spawns)
    assert in_real_run == [0] * len(tests.stages)


class FakeSandbox:
    """Answers from a table (call -> answer key), and writes down every batch and restart."""

    def __init__(self, answers: dict[str, str]):
        self.answers = answers
        self.batches: list[list[str]] = []
        self.restarts = 0
        self.settles: list[str] = []
        self._owed = 0  # answers of the last batch nobody read
        self._used = 0.0

    def evaluate(self, calls):
        self.batches.append([c[0][0] for c in calls])
        self._owed = len(calls)
        for call in calls:
            self._owed -= 1
            yield Answer(True, value={"float": self.answers[call[0][0]]})

    def restart(self):
        self.restarts += 1

    def settle(self, seconds):
        self.settles.append("dropped" if self._owed else "none")
        self._owed = 0
        return self.settles[-1]


def _recorded_run(monkeypatch, sequences: dict[str, list[str]], run: list[tuple[str, str]]):
    """A Recorder over a FakeSandbox asked `run`'s calls, (test, call) in order: the sandbox and the recorder."""
    sandbox = FakeSandbox({c: "0.5" for _, c in run})
    memo = Memo()
    for test, calls in sequences.items():
        assert memo.add(_trace(test, [(c, "0.5") for c in calls], "pass"))
    recorder = Recorder(sandbox, None, memo.ahead)
    for test, call in run:
        monkeypatch.setenv("PYTEST_CURRENT_TEST", f"hidden_tests/test_x.py::{test} (call)")
        assert recorder.call(call) == 0.5
    recorder.finish()
    return sandbox, recorder


def test_a_real_run_sends_the_calls_a_remembered_run_made_next_in_one_batch(monkeypatch):
    sandbox, recorder = _recorded_run(
        monkeypatch, {"t1": ["a", "b", "c"], "t2": ["d", "e"]}, [("t1", "a"), ("t1", "b"), ("t1", "c"), ("t2", "d"), ("t2", "e")]
    )
    assert sandbox.batches == [["a", "b", "c"], ["d", "e"]]
    assert sandbox.settles == [] and recorder.deviation is None
    assert [c.call for c in recorder.calls["t1"]] == [[["a"], {}], [["b"], {}], [["c"], {}]]


def test_a_test_that_asks_otherwise_settles_the_batch_and_notes_where_the_child_left_a_full_run(monkeypatch):
    # t1 stops after "a" (an example failed), then asks "x", which no remembered run asked there.
    sandbox, recorder = _recorded_run(monkeypatch, {"t1": ["a", "b", "c"], "t2": ["d"]}, [("t1", "a"), ("t1", "x"), ("t2", "d")])
    assert sandbox.batches == [["a", "b", "c"], ["x"], ["d"]]
    assert sandbox.settles == ["dropped"]
    assert recorder.deviation == ("t1", 1)  # the child answered b and c, which a full run does not ask


def test_calls_no_remembered_run_made_at_that_point_go_one_at_a_time(monkeypatch):
    sandbox, recorder = _recorded_run(monkeypatch, {"t1": ["a", "b"]}, [("t1", "b"), ("t1", "a"), ("t2", "z")])
    assert sandbox.batches == [["b"], ["a"], ["z"]]
    assert sandbox.settles == [] and recorder.deviation is None


def test_a_batch_left_unasked_at_the_end_of_the_run_is_settled_without_a_deviation(monkeypatch):
    sandbox, recorder = _recorded_run(monkeypatch, {"t1": ["a", "b", "c"]}, [("t1", "a")])
    assert sandbox.batches == [["a", "b", "c"]] and sandbox.settles == ["dropped"]
    assert recorder.deviation is None  # no call came after it


def test_what_comes_next_is_read_from_any_remembered_run_that_made_the_same_calls_up_to_there():
    memo = Memo()
    # The reference passes a, b, c; a wrong submission failed at b and then asked x, y (an example
    # tried after a failure: the pool's, or a shrink).
    assert memo.add(_trace("t", [("a", "0.1"), ("b", "0.2"), ("c", "0.3")], "pass"))
    assert memo.add(_trace("t", [("a", "0.1"), ("b", "0.9"), ("x", "0.4"), ("y", "0.5")], "fail"))
    call = lambda c: [[c], {}]  # noqa: E731

    def asked(*calls: str) -> int:
        h = 0
        for c in calls:
            h = history(h, call(c))
        return h

    assert memo.ahead("t", asked("a"), 10) == [call("b"), call("c")]  # along the first run's answers
    assert memo.ahead("t", asked("a", "b", "x"), 10) == [call("y")]  # the wrong one's path, whatever b was answered
    assert memo.ahead("t", asked("a"), 1) == [call("b")]
    # Not where the same call came after other calls: that is another place in the test (an empty
    # example asked at the depth where the reference asked one had sent the reference's next ones).
    assert memo.ahead("t", asked("a", "x"), 10) == []
    assert memo.ahead("t", asked("a", "a"), 10) == []  # no remembered run made a second
    assert memo.ahead("u", asked("a"), 10) == []


def test_the_same_call_at_the_same_depth_after_other_calls_sends_nothing_ahead(monkeypatch):
    # The remembered run asked "e" third (after a, b); this run asks "e" third too, but after a, x:
    # the same call at the same depth, another place. Nothing is sent ahead there, so the child
    # answers no call this run does not make, and no check is needed.
    sandbox, recorder = _recorded_run(
        monkeypatch, {"t1": ["a", "b", "e", "f"]}, [("t1", "a"), ("t1", "x"), ("t1", "e"), ("t1", "g")]
    )
    assert sandbox.batches == [["a", "b", "e", "f"], ["x"], ["e"], ["g"]]
    assert recorder.deviation == ("t1", 1)  # b, e and f were answered after a: the first batch bet wrong


def _trace(test: str, path: list[tuple[str, str]], verdict: str) -> Trace:
    calls = [Call([[c], {}], Answer(True, value={"float": a}).key()) for c, a in path]
    return Trace(test, calls, {"name": test, "tier": "t", "status": verdict, "message": "", "score": 0.0, "max_score": 1.0})


def _memo_of_two_kinds() -> Memo:
    """Kind A answers t1 with 0.1, t2 with 0.3; kind B with 0.2 and 0.4; t3 is answered 0.5 by both."""
    memo = Memo()
    for t1, t2, status in (("0.1", "0.3", "pass"), ("0.2", "0.4", "fail")):
        traces = [_trace("t1", [("c1", t1)], status), _trace("t2", [("c2", t2)], status), _trace("t3", [("c3", "0.5")], "pass")]
        for trace in traces:
            assert memo.add(trace)
        memo.add_profile(Profile({t.test: [c.answer for c in t.calls] for t in traces}))
    return memo


def test_the_one_child_the_fitting_profiles_go_on_to_is_found_as_the_definition_finds_it():
    """memo._certain looks a fitting profile's next node up (next_of) where they are fewer than the children."""
    import itertools
    import random

    from grader.judging.memoized.memo import _certain

    memo, rnd = Memo(), random.Random(7)
    # 40 kinds: each answers c1 with one of 12 answers, then c2 with one of 3 (t1), and c3 (t2).
    for kind in range(40):
        a1, a2 = str(rnd.randrange(12)), str(rnd.randrange(3))
        traces = [_trace("t1", [("c1", a1), ("c2", a2)], "pass"), _trace("t2", [("c3", str(kind % 2))], "fail")]
        for trace in traces:
            assert memo.add(trace)
        memo.add_profile(Profile({t.test: [c.answer for c in t.calls] for t in traces}))

    def defined(node, fits):
        children = list(node.children.values())
        if fits is not None and len(children) > 1:
            children = [c for c in children if not c.profiles.isdisjoint(fits)]
        return children[0] if len(children) == 1 else None

    nodes, stack = [], list(memo.roots.values())
    while stack:
        node = stack.pop()
        nodes.append(node)
        stack += node.children.values()
    found = {"one": 0, "none": 0}
    for node in nodes:
        fitting = sorted(node.profiles)
        choices = [None, set(), {999}, set(fitting), *({p} for p in fitting[:5])]
        choices += [set(pair) for pair in itertools.islice(itertools.combinations(fitting, 2), 20)]
        choices += [set(rnd.sample(range(40), k)) for k in (3, 15, 39)]
        for fits in choices:
            got = _certain(node, fits)
            assert got is defined(node, fits), (node.call, fits)
            found["one" if got is not None else "none"] += 1
    assert found["one"] > 50 and found["none"] > 50  # both answers were asked for, both lookups too
    assert any(len(n.children) > 6 for n in nodes)


def test_once_the_answers_fit_one_kind_the_rest_of_the_run_is_one_batch():
    memo = _memo_of_two_kinds()
    box = FakeSandbox({"c1": "0.2", "c2": "0.4", "c3": "0.5"})
    walk = memo.walk(box, ["t1", "t2", "t3"])
    known, missing = walk.known, walk.missing
    assert missing == [] and [known[t].status for t in ("t1", "t2", "t3")] == ["fail", "fail", "pass"]
    # c1 splits the kinds; after its answer only kind B fits, and it knows every later call.
    assert box.batches == [["c1"], ["c2", "c3"]] and box.restarts == 0


def test_a_batch_that_bet_on_the_wrong_kind_is_dropped_and_the_memo_s_check_runs():
    memo = _memo_of_two_kinds()
    # Like kind B on t1, like kind A on t2: a mix no earlier run showed.
    box = FakeSandbox({"c1": "0.2", "c2": "0.3", "c3": "0.5"})
    walk = memo.walk(box, ["t1", "t2", "t3"])
    known, missing = walk.known, walk.missing
    assert missing == [] and [known[t].status for t in ("t1", "t2", "t3")] == ["fail", "pass", "pass"]
    # The batch bet that c2 is answered 0.4 and sent c3 along; after 0.3 the child saw a call
    # the tests might not have made: its answer is dropped, and c3 is asked again. The same
    # child goes on (a fresh one cost 3-6 ms, and no more left a full run's order): where the
    # order was left is noted, so the memo's check asks a fresh child the run again.
    assert box.batches == [["c1"], ["c2", "c3"], ["c3"]] and box.settles == ["dropped"] and box.restarts == 0
    assert walk.surprised and walk.deviation == (1, 1)


def test_an_answer_no_run_gave_leaves_that_test_to_a_real_run_and_the_others_replayed():
    memo = _memo_of_two_kinds()
    box = FakeSandbox({"c1": "0.2", "c2": "0.9", "c3": "0.5"})
    walk = memo.walk(box, ["t1", "t2", "t3"])
    known, missing = walk.known, walk.missing
    assert missing == ["t2"] and sorted(known) == ["t1", "t3"]
    # c3 had been sent after c2 already: its answer is taken and dropped, and the same child goes on
    # (the walk has left a full run's order there, so the memo's check runs).
    assert box.settles == ["dropped"] and box.restarts == 0 and walk.deviation == (1, 1)
    assert box.batches == [["c1"], ["c2", "c3"], ["c3"]]


def test_once_a_test_answered_something_new_the_walk_bets_no_further_than_the_end_of_a_test():
    memo = Memo()
    # One remembered run: t1 and t2 make two calls each, t3 one; all known ahead of the answers.
    for test, path in (("t1", [("a1", "0.1"), ("a2", "0.2")]), ("t2", [("b1", "0.3"), ("b2", "0.4")]), ("t3", [("c1", "0.5")])):
        assert memo.add(_trace(test, path, "pass"))
    box = FakeSandbox({"a1": "0.9", "a2": "0.2", "b1": "0.3", "b2": "0.4", "c1": "0.5"})
    walk = memo.walk(box, ["t1", "t2", "t3"])
    assert walk.missing == ["t1"] and sorted(walk.known) == ["t2", "t3"]
    # Before the surprise the batch ran to the end of the run; after it, one test a batch, so
    # another surprise would leave at most the rest of one test's calls to be answered for nothing.
    assert box.batches == [["a1", "a2", "b1", "b2", "c1"], ["b1", "b2"], ["c1"]]
    assert box.settles == ["dropped"]


def test_a_new_timeout_leaves_no_deviation_since_a_full_run_goes_on_in_a_fresh_child_too():
    memo = Memo()
    assert memo.add(_trace("t1", [("a1", "0.1")], "pass")) and memo.add(_trace("t2", [("b1", "0.3")], "pass"))

    class Hangs(FakeSandbox):
        def evaluate(self, calls):
            self.batches.append([c[0][0] for c in calls])
            yield Answer(False, kind="timeout", error="the call took longer than 1 s")

    walk = memo.walk(Hangs({}), ["t1", "t2"])
    # The hang is new: every test from there runs for real, starting in a fresh child, as a full
    # run's next call after a timeout does; so the memo's check has nothing to ask again.
    assert walk.missing == ["t1", "t2"] and walk.deviation is None
    assert [a.kind for _, a in walk.prefixes["t1"]] == ["timeout"]


def test_a_recorder_gives_each_stage_a_fresh_child_once_and_settles_its_batch_first():
    sandbox = FakeSandbox({"a": "0.5", "b": "0.5"})
    memo = Memo()
    assert memo.add(_trace("t1", [("a", "0.5"), ("b", "0.5")], "pass"))
    recorder = Recorder(sandbox, None, memo.ahead)
    provider = runner.SubmissionProvider(lambda: recorder)
    provider.get(0)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTEST_CURRENT_TEST", "hidden_tests/test_x.py::t1 (call)")
        assert recorder.call("a") == 0.5  # "b" was sent with it, and is owed
    for stage in (0, 1, 1, 2):
        provider.get(stage)
    assert sandbox.restarts == 2 and sandbox.settles == ["dropped"]


def test_a_full_run_after_the_memos_check_failed_has_the_whole_budget_again(tmp_path, monkeypatch):
    """When the memo's check fails, the submission gets a full run: with its whole budget, as a full run has.

    Before, that run paid for the run before it, and a submission whose runs took more than half
    the budget had its last tests reported "not run".
    """
    prepare_before_fork(EXERCISE)
    tests = catalogue(EXERCISE)
    path = tmp_path / "slowish.py"
    reference = (KIT_ROOT / "solutions" / "reference.py").read_text()
    path.write_text(reference.replace("def meteor_score(", "def _score(") + WRAPPED)
    spec = Spec("slowish.py", path)

    alone = Grader(Settings(EXERCISE, timeout=2.0, budget=600.0, memo=False), tests)
    try:
        result, _ = alone.grade(spec)
    finally:
        alone.close()
    assert result["passed"] == len(result["tests"])
    one_run = result["duration"]

    # A budget for one run and a half; the memo's check is made to fail at the last stage (every
    # tier has run by then), so there are two runs.
    last = tests.stages[-1]
    monkeypatch.setattr(Memoized, "_as_a_full_run", lambda self, sandbox, recorder, walk, names: names != last)
    settings = Settings(EXERCISE, timeout=2.0, budget=1.5 * one_run + 1.0, memo=True)
    grader = Grader(settings, tests, Memoized(settings, tests))
    try:
        again, _ = grader.grade(spec)
    finally:
        grader.close()
    assert [t["status"] for t in again["tests"]] == [t["status"] for t in result["tests"]]
    assert again["duration"] > 1.8 * one_run  # the two runs happened


# Each call takes a few milliseconds: a run pays a second or more.
WRAPPED = """
import time


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    time.sleep(0.004)
    return _score(reference, candidate, alpha, beta, gamma)
"""
