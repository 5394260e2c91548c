"""The memo never changes a verdict, even for a submission whose answers depend on its history."""

from __future__ import annotations

import json
import subprocess

from conftest import KIT_ROOT
from test_memo_walk import FakeSandbox, _memo_of_two_kinds

from grader.judging.memoized.memo import Memo, confirm, full_run
from grader.sandbox.host import Answer

REFERENCE = (KIT_ROOT / "solutions" / "reference.py").read_text()


def with_history(body: str) -> str:
    """The reference, wrapped in a function that counts its calls (`_calls`) and answers as `body` says."""
    return (
        REFERENCE + "\n\n_calls = 0\n_real = meteor_score\n\n\n"
        "def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n"
        "    global _calls\n    _calls += 1\n    right = _real(reference, candidate, alpha, beta, gamma)\n" + body
    )


HISTORY = {
    # Right for its first N calls, then 0.0: a restart (which the memo's walk makes) resets it.
    "c_right_for_40_calls": with_history("    return right if _calls <= 40 else 0.0\n"),
    "d_right_for_300_calls": with_history("    return right if _calls <= 300 else 0.0\n"),
    # Wrong on its 30th call only.
    "e_wrong_on_call_30": with_history("    return 0.0 if _calls == 30 else right\n"),
    # Each answer is the one the previous call deserved.
    "f_one_call_late": with_history("    global _last\n    got, _last = globals().get('_last', 0.0), right\n    return got\n"),
    # Right answers, but what it prints depends on its history.
    "g_prints_its_count": with_history("    print(_calls)\n    return right\n"),
}


def grade(meteor_kit, *args) -> dict[str, dict]:
    run = subprocess.run([meteor_kit, "grade", *map(str, args)], capture_output=True, text=True, timeout=1200)
    assert run.returncode == 0, run.stderr[-3000:]
    out = args[args.index("--out") + 1]
    return {r["submission"]: r for r in json.loads((out / "results.json").read_text())["submissions"]}


def test_a_class_mixing_submissions_with_a_history_and_ordinary_ones_gets_the_verdicts_of_no_memo(tmp_path, meteor_kit):
    klass = tmp_path / "class"
    klass.mkdir()
    ordinary = {"a_reference": REFERENCE, "b_no_clipping": (KIT_ROOT / "tests/catalogue/wrong/no_clipping.py").read_text()}
    for name, text in ordinary.items():
        (klass / f"{name}_1.py").write_text("# one student\n" + text)
    for name, text in HISTORY.items():
        (klass / f"{name}.py").write_text(text)
    for name, text in ordinary.items():  # graded after those: still wholly from the memo
        (klass / f"z_{name}_2.py").write_text("# another one\n" + text)
    memo = grade(meteor_kit, klass, "--out", tmp_path / "memo", "--jobs", "1")
    fresh = grade(meteor_kit, klass, "--out", tmp_path / "fresh", "--jobs", "2", "--no-memo")
    assert sorted(memo) == sorted(fresh) and len(memo) == 9
    for name in fresh:
        assert memo[name]["tests"] == fresh[name]["tests"], name
        assert memo[name]["diagnosis"] == fresh[name]["diagnosis"], name
    assert memo["z_a_reference_2.py"]["from_memo"] == len(memo["z_a_reference_2.py"]["tests"])
    assert memo["z_b_no_clipping_2.py"]["from_memo"] == len(memo["z_b_no_clipping_2.py"]["tests"])
    # The counters cost them points in a full run: the memo's restarts must not hand those back.
    assert memo["c_right_for_40_calls.py"]["score"] < memo["a_reference_1.py"]["score"]
    assert memo["e_wrong_on_call_30.py"]["score"] < memo["a_reference_1.py"]["score"]


# ---------------------------------------------------------------- the check itself, on a fake sandbox


class FreshChild(FakeSandbox):
    """A fake sandbox whose answers to a call can depend on how many calls its current child has had."""

    def __init__(self, answers, late=None):
        super().__init__(answers)
        self.late = late or {}  # call -> (after this many calls, the answer then)
        self.made = 0
        self.gathered: list[bool] = []  # per batch: whether its answers were gathered

    def evaluate(self, calls, gather_until=None):
        self.batches.append([c[0][0] for c in calls])
        self.gathered.append(gather_until is not None)
        for call in calls:
            self.made += 1
            if isinstance(self.answers[call[0][0]], Answer):  # a timeout, say: the batch ends there
                yield self.answers[call[0][0]]
                return
            after, then = self.late.get(call[0][0], (None, None))
            yield Answer(True, value={"float": then if after is not None and self.made > after else self.answers[call[0][0]]})

    def restart(self):
        self.restarts += 1
        self.made = 0

    def uncharged(self):
        import contextlib

        return contextlib.nullcontext()


def steps(*pairs):
    return [([[c], {}], Answer(True, value={"float": a})) for c, a in pairs]


def test_a_run_whose_calls_a_fresh_child_answers_alike_is_confirmed_from_the_last_fresh_child_before_the_deviation():
    box = FreshChild({"c1": "0.1", "c2": "0.2", "c3": "0.3"})
    run = steps(("c1", "0.1"), ("c2", "0.2"), ("c3", "0.3"))
    assert confirm(box, run, 1, 60.0)
    assert box.restarts == 1 and box.batches == [["c1", "c2", "c3"]]
    # A timeout before the deviation: a full run starts a fresh child there, so the check starts there too.
    hang = Answer(False, kind="timeout", error="the call took longer than 2 s")
    box = FreshChild({"c1": "0.1", "c2": "0.2", "c3": "0.3"})
    assert confirm(box, [run[0], ([["h"], {}], hang), run[1], run[2]], 3, 60.0)
    assert box.batches == [["c2", "c3"]]
    # A timeout after the deviation: the calls the run answered go gathered, the one that timed out alone.
    box = FreshChild({"c1": "0.1", "h": hang, "c2": "0.2", "c3": "0.3"})
    assert confirm(box, [run[0], ([["h"], {}], hang), run[1], run[2]], 0, 60.0)
    assert box.batches == [["c1"], ["h"], ["c2", "c3"]] and box.gathered == [True, False, True]
    # No deviation inside the run: nothing to ask.
    box = FreshChild({})
    assert confirm(box, run, 3, 60.0) and box.batches == []


def test_a_run_a_fresh_child_answers_otherwise_is_not_confirmed():
    # The third call of a child is answered differently: the walk's restarts had hidden it.
    box = FreshChild({"c1": "0.1", "c2": "0.2", "c3": "0.3"}, late={"c3": (2, "0.0")})
    assert not confirm(box, steps(("c1", "0.1"), ("c2", "0.2"), ("c3", "0.3")), 2, 60.0)


def test_the_walk_notes_where_its_calls_left_a_full_runs_order():
    memo = _memo_of_two_kinds()
    box = FakeSandbox({"c1": "0.2", "c2": "0.4", "c3": "0.5"})
    walk = memo.walk(box, ["t1", "t2", "t3"])
    assert walk.deviation is None  # every bet was right: one child, a full run's calls in order
    memo = _memo_of_two_kinds()
    box = FakeSandbox({"c1": "0.2", "c2": "0.3", "c3": "0.5"})
    walk = memo.walk(box, ["t1", "t2", "t3"])
    assert box.settles == ["dropped"] and walk.deviation == (1, 1)  # c3 had reached the child after c2
    run, at = full_run(["t1", "t2", "t3"], walk.walked, walk.deviation)
    assert [c[0][0] for c, _ in run] == ["c1", "c2", "c3"] and at == 2
    memo = Memo()
    assert memo.walk(FakeSandbox({}), ["t1"]).deviation == (0, 0)  # a test never seen runs for real, in a fresh child


def test_the_memo_stops_learning_once_it_holds_its_most_calls(monkeypatch):
    from test_memo_walk import _trace

    from grader.core import tuning

    monkeypatch.setattr(tuning, "MAX_NODES", 5)
    memo = Memo()
    learned = [memo.add(_trace(f"t{i}", [("c1", f"0.{i}"), ("c2", "0.5")], "pass")) for i in range(6)]
    assert learned == [True, True, True, False, False, False] and memo.nodes == 6 and memo.full


def _tree(memo: Memo) -> list:
    """Everything a memo holds, node by node, to compare two memos."""

    def dump(node) -> list:
        return [
            repr(node.call),
            node.verdict,
            sorted(node.profiles),
            sorted((k, n.call is None and n.verdict) for k, n in node.next_of.items()),
            [(key, dump(child)) for key, child in node.children.items()],
        ]

    return [(test, dump(root)) for test, root in memo.roots.items()] + [memo.nodes, memo.profile_count]


def test_traces_packed_for_another_worker_teach_it_exactly_what_they_taught_their_own():
    """Workers pass traces on packed (marshal, else pickle): the memo learned from them is the same, hostile values and all."""
    from test_memo_walk import _trace

    from grader.judging.memoized.memo import Call, Profile, Trace, pack

    odd = ["\ud800 lone", "a\x00b\u202e", float("nan"), -0.0, float("inf"), 10**400, ("tuple", 1), [[], {}], {"k": [1.5]}]
    traces = [_trace("t1", [("c1", "0.1"), ("c2", "0.3")], "pass"), _trace("t2", [("c2", "0.4")], "fail")]
    traces.append(
        Trace("t3", [Call([odd, {"alpha": odd[2]}], "\udcff answer")], {"name": "t3", "status": "error", "message": "\ud83d"})
    )
    profile = Profile({"t1": ["x", "y"], "t2": ["z"], "t3": ["\udcff answer"]})
    for items, flag in (([*traces, profile], b"m"), ([*traces, _trace("t4", [(range(3), "0.5")], "pass"), profile], b"p")):
        packed = pack(items)
        assert packed[:1] == flag  # a value marshal cannot write (range here) sends the whole batch pickled
        direct, learned = Memo(), Memo()
        for item in items:
            direct.learn(item)
        learned.learn_packed(packed)
        assert _tree(learned) == _tree(direct)
        assert learned.nodes >= 4 and learned.profile_count == 1
        assert learned.ahead("t1", 0, 5) == direct.ahead("t1", 0, 5)


def test_a_memoized_verdict_equals_a_fresh_run(tmp_path, kit_root, meteor_kit):
    klass = tmp_path / "class"
    klass.mkdir()
    sources = {
        "a_reference": kit_root / "solutions" / "reference.py",
        "b_no_clipping": KIT_ROOT / "tests" / "catalogue" / "wrong" / "no_clipping.py",
        "c_crash_on_empty": KIT_ROOT / "tests" / "catalogue" / "wrong" / "crash_on_empty.py",
    }
    for name, path in sources.items():
        # Two copies that differ in text only: with one job, the second is graded from the memo.
        (klass / f"{name}_1.py").write_text("# one student\n" + path.read_text())
        (klass / f"{name}_2.py").write_text("# another one\n" + path.read_text())
    runs = {}
    for flags in (["--jobs", "1"], ["--jobs", "2", "--no-memo"]):
        out = tmp_path / flags[-1]
        run = subprocess.run([str(meteor_kit), "grade", klass, "--out", out, *flags], capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stderr
        runs[flags[-1]] = {r["submission"]: r for r in json.loads((out / "results.json").read_text())["submissions"]}
    memo, fresh = runs["1"], runs["--no-memo"]
    assert all(memo[f"{name}_2.py"]["from_memo"] == len(memo[f"{name}_2.py"]["tests"]) for name in sources)
    assert all(r["from_memo"] == 0 for r in fresh.values())
    for name in fresh:
        assert memo[name]["tests"] == fresh[name]["tests"], name
        assert memo[name]["diagnosis"] == fresh[name]["diagnosis"], name
    assert memo["b_no_clipping_2.py"]["diagnosis"]["mistake"] == "no_clipping"
    assert memo["a_reference_1.py"]["diagnosis"] is None
