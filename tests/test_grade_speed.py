"""What makes class grading fast, checked by what it does (counts, statuses), never by timing.

The figures themselves are in bench/bench_grade.py and docs/performance.md.
"""

from __future__ import annotations

import os
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
from grader.judging.partial_run import catalogue, prepare_before_fork
from grader.sandbox.host import Limits, SandboxedSubmission
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
        assert grader.jail is not None and grader.jail.limits == Limits.of(EXERCISE)  # the exercise's [limits]
    finally:
        grader.close()
    statuses = [t["status"] for t in result["tests"]]
    # How many 0.5 s timeouts fit in 1.2 s depends on how long loading took (a loaded host: one).
    assert statuses.count("timeout") in (1, 2, 3) and statuses.count("not_run") == len(statuses) - statuses.count("timeout")
    assert all(
        t["message"] == "not run: the submission used up its time budget of 1.2 s"
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


def test_an_exercise_s_after_timeout_is_what_a_call_has_once_one_timed_out():
    source = (
        "import time\n"
        "def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):\n"
        "    t = time.process_time()\n"
        "    while reference == 'hang' or (reference == 'slow' and time.process_time() - t < 0.1):\n"
        "        pass\n"
        "    return 0.5\n"
    )
    for after, slow_passes in ((0.3, True), (HUNG_FLOOR, False)):
        limits = Limits(after_timeout=after)
        with SandboxedSubmission("student.py", source=source, timeout=1.0, limits=limits) as box:
            assert next(box.evaluate([(["hang", "b"], {})])).kind == "timeout"
            answer = next(box.evaluate([(["slow", "b"], {})]))  # its first call to answer: no slowest call to go by
            assert answer.ok is slow_passes, answer
            if not slow_passes:
                assert f"at least {after:g} s" in answer.error


def test_after_timeout_is_read_from_the_exercise_and_checked(kit_root):
    import tomllib

    data = tomllib.loads((kit_root / "problem" / "exercise.toml").read_text())
    limits = data["limits"]
    assert exercise.parse({**data, "limits": {k: v for k, v in limits.items() if k != "after_timeout"}}).after_timeout == 0.05
    ex = exercise.parse({**data, "limits": {**limits, "after_timeout": 0.2, "memory_mb": 300}})
    assert (Limits.of(ex).after_timeout, Limits.of(ex).memory_mb) == (0.2, 300)
    for bad in (0, -1, "0.1", limits["call_timeout"] + 1):
        with pytest.raises(ValueError, match="after_timeout"):
            exercise.parse({**data, "limits": {**limits, "after_timeout": bad}})


def test_the_exercise_s_memory_limit_reaches_the_sandbox():
    # memory_mb was read from exercise.toml and never used: every exercise had 512 MB.
    source = "def meteor_score(r, c, **k):\n    return len(bytearray(int(r) << 20))\n"
    small = Limits(memory_mb=200)
    with SandboxedSubmission("a.py", source=source, timeout=5.0, limits=small) as box:
        assert box.meteor_score("16", "") == 16 << 20
        answer = next(box.evaluate([(["300", ""], {})]))
    assert not answer.ok and "MemoryError" in answer.error


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
