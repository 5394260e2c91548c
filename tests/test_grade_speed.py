"""What makes class grading fast, checked by what it does (counts, statuses), never by timing.

The figures themselves are in bench/bench_grade.py and docs/performance.md.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import KIT_ROOT, load_module

from grader.core import exercise
from grader.core.submission import LocalSubmission
from grader.judging import diagnose
from grader.judging.discovery import read_source
from grader.judging.grade import Grader, Settings, Spec
from grader.judging.memo import Call, Memo, Profile, Recorder, Trace, history
from grader.judging.partial_run import catalogue, prepare_before_fork
from grader.sandbox.host import Answer, SandboxedSubmission
from grader.sandbox.timing import HUNG_FLOOR, SLOWEST_FACTOR, Pace

CATALOGUE = KIT_ROOT / "tests" / "catalogue"
EXERCISE = exercise.load(KIT_ROOT)
HANGS = "def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n    while True:\n        pass\n"


@pytest.fixture(scope="module")
def tests():
    prepare_before_fork(EXERCISE)
    return catalogue(EXERCISE)


def copy(tmp_path: Path, source: Path, name: str) -> Spec:
    path = tmp_path / name
    path.write_text(f"# {name}\n{source.read_text()}")
    return Spec(name, path)


# ---------------------------------------------------------------- the memo's batches


def test_a_submission_of_a_known_kind_is_walked_in_a_few_batches(tmp_path, tests):
    grader = Grader(Settings(EXERCISE, timeout=2.0, budget=60.0), tests)
    kinds = [
        KIT_ROOT / "solutions" / "reference.py",
        CATALOGUE / "wrong" / "no_clipping.py",
        CATALOGUE / "wrong" / "crash_on_empty.py",
    ]
    try:
        first = [grader.grade(copy(tmp_path, k, f"{k.stem}_1.py"))[0] for k in kinds]
        assert all(r["from_memo"] < len(r["tests"]) for r in first)  # each was new: a real run
        for kind, earlier in zip(kinds, first):
            before = grader.memo.round_trips
            again = grader.grade(copy(tmp_path, kind, f"{kind.stem}_2.py"))[0]
            batches = grader.memo.round_trips - before
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

    grader = Grader(Settings(EXERCISE, timeout=2.0, budget=60.0), tests)
    try:
        grader.grade(copy(tmp_path, KIT_ROOT / "solutions" / "reference.py", "reference.py"))
        for kind in ("alpha_hardcoded", "gamma_hardcoded"):
            grader.grade(copy(tmp_path, CATALOGUE / "wrong" / f"{kind}.py", f"{kind}.py"))
        both = tmp_path / "mixed.py"
        both.write_text(MIXED)
        monkeypatch.setattr(SandboxedSubmission, "settle", counted)
        sent = grader.memo.round_trips
        result = grader.grade(Spec("mixed.py", both))[0]
        trips = grader.memo.round_trips - sent
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
    grader = Grader(Settings(EXERCISE, timeout=2.0, budget=60.0), tests)
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

    def counted(self):
        spawns.append(1)
        return spawn(self)

    monkeypatch.setattr(SandboxedSubmission, "_spawn", counted)
    in_real_run = []
    real_run = Grader._run_for_real

    def watched(self, *args, **kwargs):
        before = len(spawns)
        try:
            return real_run(self, *args, **kwargs)
        finally:
            in_real_run.append(len(spawns) - before)

    monkeypatch.setattr(Grader, "_run_for_real", watched)
    grader = Grader(Settings(EXERCISE, timeout=2.0, budget=60.0), tests)
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

    from grader.judging.memo import _certain

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


# ---------------------------------------------------------------- the diagnosis


@pytest.mark.parametrize("name", ["no_clipping", "crash_on_empty", "p_r_swapped", "two_decimals"])
def test_probes_go_in_one_batch_and_name_the_mistake_the_one_by_one_run_names(name, monkeypatch):
    path = CATALOGUE / "wrong" / f"{name}.py"
    batches = []
    evaluate = SandboxedSubmission.evaluate

    def counted(self, calls):
        batches.append(len(calls))
        return evaluate(self, calls)

    monkeypatch.setattr(SandboxedSubmission, "evaluate", counted)
    with SandboxedSubmission(path, source=read_source(path)) as box:
        batched = diagnose.diagnose_submission(EXERCISE, box)
    one_by_one = diagnose.diagnose_submission(EXERCISE, LocalSubmission(path.read_text(), EXERCISE.function))
    assert batched == one_by_one and batched.mistake == name
    assert batches == [len(diagnose._table(EXERCISE)["probes"])]


def test_a_probe_that_hangs_ends_its_batch_and_later_probes_still_run():
    source = (
        "import time\n\ndef meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n"
        "    if 'cat' in reference:\n        time.sleep(60)\n    return 0.25\n"
    )
    table = diagnose._table(EXERCISE)
    with SandboxedSubmission("student.py", source=source, timeout=0.3) as box:
        outputs = diagnose._probe_in_batches(box, table, 30.0, diagnose.value_normalize(EXERCISE))
    hangs = [i for i, p in enumerate(table["probes"]) if "cat" in p["args"][0]]
    last = hangs[diagnose.MAX_TIMEOUTS]  # past this many timeouts the probing stops
    assert len(hangs) > diagnose.MAX_TIMEOUTS + 1 and hangs[0] > 0
    expected = [{"error": "timeout"} if i in hangs else 0.25 for i in range(last + 1)]
    assert outputs == expected + [{"error": "not_run"}] * (len(table["probes"]) - last - 1)


# ---------------------------------------------------------------- hangers


def test_a_submission_out_of_budget_stops_its_run_and_reports_the_rest_not_run(tmp_path, tests, monkeypatch):
    calls = []
    evaluate = SandboxedSubmission.evaluate

    def counted(self, batch):
        for answer in evaluate(self, batch):
            calls.append(answer.kind)
            yield answer

    monkeypatch.setattr(SandboxedSubmission, "evaluate", counted)
    formatted = count_formatted_tracebacks(monkeypatch)
    path = tmp_path / "spins.py"
    path.write_text(HANGS)
    grader = Grader(Settings(EXERCISE, timeout=0.5, budget=1.2, memo=False), tests)
    try:
        result, _ = grader.grade(Spec("spins.py", path))
    finally:
        grader.close()
    statuses = [t["status"] for t in result["tests"]]
    # How many 0.5 s timeouts fit in 1.2 s depends on how long loading took (a loaded host: one).
    assert statuses.count("timeout") in (1, 2, 3) and statuses.count("not_run") == len(statuses) - statuses.count("timeout")
    assert all(
        t["message"].endswith("not run: the submission used up its time budget of 1.2 s")
        for t in result["tests"]
        if t["status"] == "not_run"
    )
    # Once the budget is spent, the run stops: one call learns it, the diagnosis one more.
    assert calls.count("not_run") <= 2
    # As a session that ran fewer tests: pytest formats an interrupted one's traceback at length.
    assert formatted == []


def count_formatted_tracebacks(monkeypatch) -> list[str]:
    """The exceptions whose traceback pytest formats from now on (each reads the source of its frames)."""
    formatted: list[str] = []
    getrepr = pytest.ExceptionInfo.getrepr

    def counted(self, *args, **kwargs):
        formatted.append(self.typename)
        return getrepr(self, *args, **kwargs)

    monkeypatch.setattr(pytest.ExceptionInfo, "getrepr", counted)
    return formatted


def test_the_kit_s_pytest_run_formats_no_traceback_of_a_failing_test_and_its_verdicts_stay(monkeypatch):
    from grader.core import runner

    source = (CATALOGUE / "wrong" / "no_clipping.py").read_text()
    before = runner.run(
        EXERCISE, lambda: LocalSubmission(source, EXERCISE.function), "no_clipping", tiers=("examples", "properties")
    )
    formatted = count_formatted_tracebacks(monkeypatch)
    brief = runner.run(
        EXERCISE, lambda: LocalSubmission(source, EXERCISE.function), "no_clipping", tiers=("examples", "properties")
    )
    failed = [t for t in brief.tests if t.status != "pass"]
    assert len(failed) >= 3 and all(t.message for t in failed)
    assert formatted == []
    # pytest's own report of the same failures (BriefFailures left out) formats each one.
    monkeypatch.setattr(runner, "BriefFailures", lambda: object())
    full = runner.run(
        EXERCISE, lambda: LocalSubmission(source, EXERCISE.function), "no_clipping", tiers=("examples", "properties")
    )
    assert len(formatted) >= len(failed)
    assert [vars(t) for t in brief.tests] == [vars(t) for t in full.tests] == [vars(t) for t in before.tests]


def test_a_call_has_its_whole_time_limit_until_the_submission_hung_once():
    pace = Pace()
    assert pace.limit(2.0) == 2.0
    pace.took(0.3)
    assert pace.limit(2.0) == 2.0  # what it answered before changes nothing until it hangs


def test_a_submission_that_hung_gets_ten_times_its_slowest_call_in_cpu_time():
    # It hung before: it most likely hangs again, and each later hang costs little, unless its own calls are slow.
    pace = Pace()
    pace.hung = True
    assert pace.limit(2.0) == HUNG_FLOOR
    pace.took(0.001)
    assert pace.limit(2.0) == HUNG_FLOOR
    pace.took(0.03)
    assert pace.limit(2.0) == pytest.approx(SLOWEST_FACTOR * 0.03)
    pace.took(5.0)
    assert pace.limit(2.0) == 2.0  # never more than before it hung


def test_a_slow_submission_that_hung_keeps_the_time_its_slow_calls_need():
    source = (
        "import time\n"
        "def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n"
        "    t = time.process_time()\n"
        "    while reference == 'slow' and time.process_time() - t < 0.03:\n"
        "        pass\n"
        "    while reference == 'hang':\n"
        "        pass\n"
        "    return 0.5\n"
    )
    with SandboxedSubmission("student.py", source=source, timeout=0.6) as box:
        assert next(box.evaluate([(["hang", "b"], {})])).kind == "timeout"
        assert box._life.pace.limit(0.6) == HUNG_FLOOR  # it answered nothing slow: its next hang costs little
        assert box.meteor_score("slow", "b") == 0.5
        assert SLOWEST_FACTOR * 0.03 <= box._life.pace.limit(0.6) <= 0.6
        answer = next(box.evaluate([(["hang", "b"], {})]))
        assert answer.kind == "timeout" and "after a timeout, a call gets ten times" in answer.error


def test_a_submission_that_timed_out_once_is_marked_as_such():
    source = "def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n    while reference:\n        pass\n    return 0.5\n"
    with SandboxedSubmission("student.py", source=source, timeout=0.6) as box:
        assert box.meteor_score("", "b") == 0.5
        assert not box._life.pace.hung
        answer = next(box.evaluate([(["a", "b"], {})]))
        assert answer.kind == "timeout" and box._life.pace.hung


# ---------------------------------------------------------------- the private tier


def test_the_private_inputs_are_fixed_smallest_first_and_reach_the_edges():
    first = load_module(KIT_ROOT / "hidden_tests" / "test_private.py", "private_a")
    second = load_module(KIT_ROOT / "hidden_tests" / "test_private.py", "private_b")
    assert first.SENTENCES == second.SENTENCES and first.RAW_TEXTS == second.RAW_TEXTS
    sizes = [len(r) + len(c) + 4 * len(p) for r, c, p in first.SENTENCES]
    assert sizes == sorted(sizes) and len(first.SENTENCES) == 300
    cases = first.SENTENCES + first.RAW_TEXTS
    assert any(not r.strip() for r, _, _ in cases) and any(not c.strip() for _, c, _ in cases)
    assert any(r.split() == c.split() and r.split() for r, c, _ in cases)  # identical sentences
    assert {p.get("alpha") for _, _, p in cases} >= {0.0, 1.0} and {p.get("beta") for _, _, p in cases} >= {0, 1, 2}
    assert any("Straße" in r + c for r, c, _ in cases)


def test_the_private_tier_alone_catches_every_catalogue_mistake_and_passes_the_correct_ones():
    from grader.core import runner

    verdicts = {}
    for kind in ("wrong", "correct"):
        for path in sorted((CATALOGUE / kind).glob("*.py")):
            report = runner.run(
                EXERCISE, lambda p=path: LocalSubmission(p.read_text(), EXERCISE.function), path.stem, tiers=("private",)
            )
            verdicts[f"{kind}/{path.stem}"] = all(t.status == "pass" for t in report.tests)
    assert len(verdicts) >= 53
    assert [k for k, passed in verdicts.items() if k.startswith("wrong/") and passed] == []
    assert [k for k, passed in verdicts.items() if k.startswith("correct/") and not passed] == []


# ---------------------------------------------------------------- workers


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="pinning needs two cores to choose from")
def test_each_worker_and_its_jail_keep_to_one_core_and_the_workers_share_them_out(tmp_path, meteor_kit):
    import json

    source = (
        "import os\n\ndef meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n"
        "    print(sorted(os.sched_getaffinity(0)))\n    return 0.0\n"
    )
    for name in ("a.py", "b.py"):
        # Different code: copies of one would be graded one after the other (one waits for the other's run).
        (tmp_path / name).write_text(f"{source}\nNAME = {name!r}\n")
    run = subprocess.run(
        [meteor_kit, "grade", tmp_path / "a.py", tmp_path / "b.py", "--out", tmp_path / "out", "--jobs", "2"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    results = json.loads((tmp_path / "out" / "results.json").read_text())["submissions"]
    seen = [{t["output"].splitlines()[0] for t in r["tests"] if t["output"]} for r in results]
    assert all(len(cores) == 1 and len(json.loads(next(iter(cores)))) == 1 for cores in seen), seen
    assert len(set().union(*seen)) == 2  # two workers, two different cores


COUNTS = (
    "calls = 0\n\ndef meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n"
    "    global calls\n    calls += 1\n    if reference == 'hang':\n        while True:\n            pass\n"
    "    return float(calls)\n"
)


def test_a_batch_read_in_part_is_settled_in_the_same_child_and_a_hang_in_its_rest_gets_a_fresh_one():
    with SandboxedSubmission("student.py", source=COUNTS, timeout=2.0, budget=30.0) as box:
        answers = box.evaluate([[["a", "b"], {}]] * 5)
        assert next(answers).value == {"float": "1.0"}
        answers.close()
        used = box.used()
        # The four answers left unread are taken and dropped, not charged: the same child goes on.
        assert box.settle(1.0) == "dropped"
        assert box.used() == used
        assert [a.value for a in box.evaluate([[["a", "b"], {}]])] == [{"float": "6.0"}]
        answers = box.evaluate([[["a", "b"], {}], [["hang", "b"], {}], [["a", "b"], {}]])
        assert next(answers).value == {"float": "7.0"}
        answers.close()
        started = time.monotonic()
        # The rest hangs: the settling gives up after its own short wait, with a fresh child.
        assert box.settle(0.1) == "fresh"
        assert time.monotonic() - started < 1.5
        assert [a.value for a in box.evaluate([[["a", "b"], {}]])] == [{"float": "1.0"}]
        assert box.settle(0.1) == "none"  # nothing owed: nothing to do


# ---------------------------------------------------------------- the child's tracebacks

RAISES = """
def helper(x):
    return [1][x] + 0


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    if alpha > 1:
        return helper(5)
    if beta == 0:
        raise ValueError(f"bad {reference!r}")
    if gamma < 0:
        return meteor_score(reference, candidate, alpha, beta, gamma + 0.25)
    return {}[reference]
"""


def test_the_child_formats_each_place_a_submission_raises_from_once_and_the_text_stays(monkeypatch):
    import traceback

    from grader.sandbox import child

    monkeypatch.setattr(child, "SOURCE", [RAISES])
    monkeypatch.setattr(child, "FORMATTED_FRAMES", {})
    namespace: dict = {}
    exec(compile(RAISES, "raises.py", "exec"), namespace)
    extract = traceback.extract_tb

    def as_before(exc):
        frames = [f for f in extract(exc.__traceback__) if f.filename == "raises.py"]
        return "".join(traceback.format_list(frames) + traceback.format_exception_only(type(exc), exc)).rstrip()

    def raised(reference, **kwargs):
        try:
            namespace["meteor_score"](reference, "x", **kwargs)
        except Exception as exc:  # each raises, on purpose
            return exc
        raise AssertionError("it returned")

    by_child = []
    monkeypatch.setattr(traceback, "extract_tb", lambda *a, **k: by_child.append(1) or extract(*a, **k))
    places = ({"alpha": 2}, {"beta": 0}, {"gamma": -1}, {"gamma": -0.5}, {})
    for round_ in range(3):
        for reference in ("a", "b c"):
            for kwargs in places:
                exc = raised(reference, **kwargs)
                assert child.student_traceback(exc, "raises.py") == as_before(exc)
        if round_ == 0:
            first = len(by_child)
    assert first == len(places)  # formatted once per place (the message differs: it is not kept)
    assert len(by_child) == first  # and never again
    deep = child.student_traceback(raised("a", gamma=-0.5), "raises.py")
    assert deep.count('File "raises.py"') == 3 and "^^^" in deep
    # A traceback limit the submission sets is a different text: not the one kept.
    monkeypatch.setattr(sys, "tracebacklimit", 1, raising=False)
    exc = raised("a", gamma=-0.5)
    assert child.student_traceback(exc, "raises.py") == as_before(exc) != deep
    assert 'File "raises.py"' not in as_before(exc)  # the limit keeps the outermost frame: the test's own
