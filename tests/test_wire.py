"""The answer pipe: what a submission that writes on it directly can and cannot do to the grader.

A submission runs in the process that writes the answers, so it can always find the pipe
(here through the jail child's frames). The trusted side must bound what it reads, refuse
answers to calls it never made, and never wait on the submission past its time limits.
"""

from __future__ import annotations

import collections
import enum
import functools
import json
import marshal
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from conftest import KIT_ROOT
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.core.checks import Opaque
from grader.core.submission import LoadError, SubmissionError
from grader.sandbox import wire
from grader.sandbox.host import SandboxedSubmission
from grader.sandbox.timing import wall_cap

# The jail child's own variables, from any frame below its loop: the pipes and the request.
CHILD_LOCALS = (
    "import sys, os, json, time, threading\n"
    "def child():\n"
    "    f = sys._getframe()\n"
    "    while 'resp_w' not in f.f_locals:\n"
    "        f = f.f_back\n"
    "    return f.f_locals\n"
    "def forge(line, fd=None):\n"
    "    fd = child()['resp_w'] if fd is None else fd\n"
    "    data = line.encode() if isinstance(line, str) else line\n"
    "    while data:\n"
    "        data = data[os.write(fd, data):]\n"
)


def jail(source: str, **kwargs) -> SandboxedSubmission:
    return SandboxedSubmission("student.py", source=CHILD_LOCALS + textwrap.dedent(source), **kwargs)


def malformed(box: SandboxedSubmission, *args) -> str:
    with pytest.raises(SubmissionError) as caught:
        box.meteor_score(*args)
    assert caught.value.kind == "crash" and "malformed answer" in caught.value.message, caught.value.message
    return caught.value.message


def test_the_config_and_descriptors_are_not_on_any_command_line_in_the_jail():
    source = """
    def meteor_score(r, c, **k):
        lines = [repr(sys.argv)]
        for pid in os.listdir('/proc'):
            try:
                lines.append(open(f'/proc/{pid}/cmdline', 'rb').read().decode(errors='replace'))
            except OSError:
                pass
        # The jail's own processes (without bubblewrap, the machine's others are listed too).
        return ' | '.join(line for line in lines if 'jail_child.py' in line)[:900]
    """
    with jail(source) as box:
        seen = box.meteor_score("", "")
    assert seen.count("jail_child.py") >= 3  # sys.argv, the server's and the child's command lines
    assert "fds" not in seen and "RLIMIT" not in seen and "{" not in seen, seen


def test_an_answer_line_that_never_ends_is_malformed_and_read_no_further():
    source = """
    def meteor_score(r, c, **k):
        if r == 'flood':
            forge(b'x' * (8 << 20))
        return 0.5
    """
    with jail(source, timeout=5.0) as box:
        started = time.monotonic()
        malformed(box, "flood", "")
        assert time.monotonic() - started < 4.0  # refused on reading, not at the time limit
        assert box.meteor_score("", "") == 0.5  # a fresh child took over


@pytest.mark.parametrize(
    "field, value",
    ids=["string", "output", "error", "output size"],
    argvalues=[
        ("value", "x" * 100_000),  # the child never sends a string longer than 1000 characters
        ("output", "y" * 100_000),  # nor more than 400 bytes of printed output
        ("error", "z" * 100_000),
        ("output_size", 10**40),
    ],
)
def test_a_forged_answer_longer_than_the_child_ever_sends_is_malformed(field, value):
    answer = {"ok": True, "value": {"float": "0.5"}} if field != "error" else {"ok": False, "error": "", "traceback": ""}
    answer[field] = value
    if field.startswith("output"):
        answer.setdefault("output", "printed")
        answer.setdefault("output_size", 7)
    source = f"""
    def meteor_score(r, c, **k):
        forge(str(child()['request']['seq']) + ' j:' + json.dumps({answer!r}) + '\\n')
        time.sleep(0.5)  # the forged line is read before the child's own
        return 0.5
    """
    with jail(source) as box:
        malformed(box, "", "")


@pytest.mark.parametrize("took", ["-1.0", "'0.1'", "1e300", "float('nan')", "True"])
def test_a_forged_call_time_is_malformed(took):
    """A call's time, as the child says, only makes later calls yield sooner; one that is not a time is refused."""
    source = f"""
    def meteor_score(r, c, **k):
        answer = {{'ok': True, 'value': {{'float': '0.5'}}, 'took': {took}}}
        forge(str(child()['request']['seq']) + ' j:' + json.dumps(answer) + '\\n')
        time.sleep(0.5)  # the forged line is read before the child's own
        return 0.5
    """
    with jail(source) as box:
        malformed(box, "", "")


def test_a_call_s_cpu_time_reaches_the_grader_only_from_a_millisecond_on():
    source = """
    def meteor_score(r, c, **k):
        t = time.process_time()
        while r == "slow" and time.process_time() - t < 0.03:
            pass
        if r == "sleeps":
            time.sleep(0.05)
        return 0.5
    """
    with jail(source) as box:
        fast = next(box.evaluate([(["a", "b"], {})]))
        assert fast.took == 0.0 and box._life.pace.slowest == 0.0  # most answers stay short
        slow = next(box.evaluate([(["slow", "b"], {})]))
        assert slow.key() == fast.key() and 0.03 <= slow.took < 0.5  # it is not part of the answer
        assert box._life.pace.slowest == slow.took
        assert next(box.evaluate([(["a", "b"], {})])).took == 0.0 and box._life.pace.slowest == slow.took
        assert next(box.evaluate([(["sleeps", "b"], {})])).took < 0.03  # its CPU time: a sleep is not slowness


@pytest.mark.parametrize(
    "how, code",
    ids=["wrong sequence number", "more answers than calls", "written ahead"],
    argvalues=[
        # A line for a request that does not exist.
        ("wrong sequence number", "forge('999999 f:0.5\\n')"),
        # The current request's number, one answer too many: the next call finds it.
        ("more answers than calls", "forge(str(child()['request']['seq']) + ' f:0.75\\n')"),
        # Answers to the next requests, guessed and written ahead by a helper thread.
        (
            "written ahead",
            "(lambda fd: threading.Thread(target=lambda: [time.sleep(0.2), "
            "forge(''.join(f'{s} f:0.5\\n' for s in range(1, 50)), fd)]).start())(child()['resp_w'])",
        ),
    ],
)
def test_an_answer_to_a_call_never_made_is_malformed(how, code):
    source = f"""
    calls = [0]
    def meteor_score(r, c, **k):
        calls[0] += 1
        if calls[0] == 1:
            {code}
        else:
            time.sleep(0.5)
        return 0.25
    """
    with jail(source, timeout=2.0) as box:
        answers = []
        for _ in range(2):
            try:
                answers.append(box.meteor_score("", ""))
            except SubmissionError as exc:
                answers.append(exc.message)
    assert any("malformed answer" in str(a) for a in answers), answers
    assert 0.5 not in answers


def test_a_submission_that_stops_reading_its_requests_cannot_block_the_grader():
    # It shrinks the request pipe to one page and never reads again (its first call never ends, and
    # the sandbox's own reads do not go through os.read, which it replaces): a large batch cannot be written.
    source = """
    import fcntl
    fcntl.fcntl(child()['req_r'], 1031, 4096)  # F_SETPIPE_SZ
    os.read = lambda *a: time.sleep(3600)
    def meteor_score(r, c, **k):
        time.sleep(3600)
    """
    calls = [[["the cat sat on the mat " * 4, "a cat sat on a mat " * 4], {}]] * 400
    with jail(source, timeout=1.0) as box:
        done: list = []
        started = time.monotonic()
        thread = threading.Thread(target=lambda: done.append(list(box.evaluate(calls))), daemon=True)
        thread.start()
        thread.join(timeout=20)
        took = time.monotonic() - started
        assert done, "the grader was still blocked writing the request after 20 s"
    ((answer,),) = done
    assert answer.kind == "timeout" and took < wall_cap(1.0) + 1.5, (answer, took)


def test_grading_a_submission_that_stops_reading_ends_within_its_budget(tmp_path):
    """The memo sends a whole remembered run as one batch: the grader must not block on it."""
    from grader.core import exercise
    from grader.judging.grade import Grader, Settings, Spec
    from grader.judging.partial_run import catalogue, prepare_before_fork

    ex = exercise.load(KIT_ROOT)
    prepare_before_fork(ex)
    reference = (KIT_ROOT / "solutions" / "reference.py").read_text()
    (tmp_path / "a.py").write_text(reference)
    (tmp_path / "b.py").write_text(
        reference + CHILD_LOCALS + "import fcntl\nfcntl.fcntl(child()['req_r'], 1031, 4096)\n"
        "os.read = lambda *a: time.sleep(3600)\n"
        "def meteor_score(*a, **k):\n    time.sleep(3600)\n"  # it never asks for the rest of a batch
    )
    grader = Grader(Settings(ex, timeout=1.0, budget=3.0), catalogue(ex))
    try:
        grader.grade(Spec("a.py", tmp_path / "a.py"))
        done: list = []
        started = time.monotonic()
        thread = threading.Thread(target=lambda: done.append(grader.grade(Spec("b.py", tmp_path / "b.py"))[0]), daemon=True)
        thread.start()
        thread.join(timeout=30)
        took = time.monotonic() - started
        assert done, "grading was still blocked after 30 s"
    finally:
        grader.close()
    assert took < 3.0 + 5.0, took
    assert done[0]["passed"] == 0


# ---------------------------------------------------------------- memory

FLOOD = (
    CHILD_LOCALS
    + """
n = [0]
def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    n[0] += 1
    seq = child()['request']['seq']
    if n[0] <= 150:
        how = len(reference) % 3
        if how == 0:
            forge(b'x' * (48 << 20))  # a line that never ends
        elif how == 1:
            forge(f"{seq} j:{json.dumps({'ok': True, 'value': 'v' * (1 << 20)})}\\n")
        else:
            output = {'ok': True, 'value': {'float': '0.5'}, 'output': 'o' * (1 << 20), 'output_size': 1 << 20}
            forge(f'{seq} j:{json.dumps(output)}\\n')
        time.sleep(0.05)  # the forged line is read before the child's own
    return 0.5
"""
)

PEAK = """
import json, resource, sys
from pathlib import Path
from grader.core import exercise
from grader.judging.grade import Grader, Settings, Spec
from grader.judging.partial_run import catalogue, prepare_before_fork

ex = exercise.load(exercise.KIT_ROOT)
prepare_before_fork(ex)
grader = Grader(Settings(ex, timeout=2.0, budget=60.0), catalogue(ex))
peaks = {}
for name in sys.argv[1:]:
    result = grader.grade(Spec(Path(name).name, Path(name)))[0]
    peaks[Path(name).stem] = [resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, result["passed"]]
grader.close()
print(json.dumps(peaks))
"""


def worker_peaks(tmp_path, files: dict[str, str]) -> dict:
    for name, text in files.items():
        (tmp_path / f"{name}.py").write_text(text)
    run = subprocess.run(
        [sys.executable, "-c", PEAK, *(str(tmp_path / f"{n}.py") for n in files)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=KIT_ROOT,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.splitlines()[-1])


def test_a_grading_worker_stays_small_whatever_a_submission_writes_on_the_answer_pipe(tmp_path):
    reference = (KIT_ROOT / "solutions" / "reference.py").read_text()
    peaks = worker_peaks(tmp_path, {"reference": reference, "flood": FLOOD, "after": reference})
    (before, _), (flooded, passed), (_, again) = peaks["reference"], peaks["flood"], peaks["after"]
    print(f"worker peak RSS: {before} MB after the reference, {flooded} MB after the flood")
    # 48 MiB in one line and 150 answers of 1 MiB reached the pipe; a few MB may be the memo's new paths.
    assert flooded - before < 30, peaks
    assert passed < again


# ---------------------------------------------------------------- the module both sides import


def imported_names(path: Path) -> set[str]:
    import ast

    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names |= {node.module} if node.module != "grader.sandbox" else {f"grader.sandbox.{a.name}" for a in node.names}
    return names


def test_the_child_imports_only_the_standard_library_and_the_wire_and_the_wire_only_the_standard_library():
    sandbox = KIT_ROOT / "grader" / "sandbox"
    stdlib = lambda name: name.split(".")[0] in sys.stdlib_module_names or name == "__future__"  # noqa: E731
    # The child imports the wire as "wire" in the jail (bound beside it) and by its package outside.
    assert {n for n in imported_names(sandbox / "child.py") if not stdlib(n)} == {"wire", "grader.sandbox.wire"}
    assert {n for n in imported_names(sandbox / "wire.py") if not stdlib(n)} == set()


def test_a_helper_module_named_wire_is_the_students_not_the_sandboxs():
    source = "import wire\ndef meteor_score(r, c, **k):\n    return wire.ANSWER\n"
    with SandboxedSubmission("student.py", source=source, modules={"wire": "ANSWER = 0.25\n"}) as box:
        assert box.meteor_score("a", "b") == 0.25
    with pytest.raises(LoadError, match="No module named 'wire'"):
        SandboxedSubmission("student.py", source=source)


def test_the_tests_values_reach_the_submission_as_they_passed_them():
    # JSON made a list of a tuple and a string of an int key, and refused a set: the page passes them all as they are.
    source = "def meteor_score(r, c, **k):\n    return repr((r, c, k))\n"
    with SandboxedSubmission("student.py", source=source) as box:
        assert box.meteor_score((1, "a"), {1: {2.5}}, alpha=b"x") == repr(((1, "a"), {1: {2.5}}, {"alpha": b"x"}))
        point = collections.namedtuple("Point", "x y")(1, 2)  # what marshal cannot write goes as JSON, as before
        assert box.meteor_score(point, "c") == repr(([1, 2], "c", {}))


def _request_body(message: dict) -> bytes:
    framed = wire.request(message)
    assert int.from_bytes(framed[:4], "big") == len(framed) - 4
    return framed[4:]


def test_a_request_is_marshal_unless_marshal_cannot_write_it_and_a_malformed_one_is_refused(tmp_path):
    calls = [[[(1, 2), {3: "x"}], {}]]
    assert _request_body({"seq": 1, "calls": calls})[:1] == b"m"
    assert _request_body({"seq": 1, "calls": [[[enum.IntEnum("E", "A").A], {}]]})[:1] == b"j"
    for body, expected in [
        (_request_body({"seq": 1, "calls": calls}), {"seq": 1, "calls": calls}),
        (b"m" + marshal.dumps([1]), wire.ProtocolError),  # not a dict
        (b"m" + marshal.dumps({"seq": 1})[:-3], wire.ProtocolError),  # cut short
        (b"x{}", wire.ProtocolError),
        (b"j[]", wire.ProtocolError),
    ]:
        read, write = os.pipe()
        os.write(write, len(body).to_bytes(4, "big") + body)
        os.close(write)
        try:
            if expected is wire.ProtocolError:
                with pytest.raises(wire.ProtocolError):
                    wire.read_request(read, wire.REQUEST_LIMIT)
            else:
                assert wire.read_request(read, wire.REQUEST_LIMIT) == expected
        finally:
            os.close(read)


INTS = st.integers(-(2**62), 2**62)  # past 2**63 an int crosses as a float, by design
PLAIN = st.recursive(
    st.none() | st.booleans() | INTS | st.floats(allow_nan=False) | st.text(max_size=50),
    lambda inner: (
        st.lists(inner, max_size=5) | st.tuples(inner, inner) | st.dictionaries(st.text(max_size=5) | INTS, inner, max_size=5)
    ),
    max_leaves=40,
)


@settings(max_examples=100, deadline=None)
@given(PLAIN)
def test_plain_data_crosses_the_wire_unchanged(value):
    encoded = json.loads(json.dumps(wire.plain(value)))  # as it travels, in a "j:" answer
    wire.check_value(encoded)
    assert wire.decode(encoded, Opaque) == value


@pytest.mark.parametrize(
    "value, opaque",
    ids=["too deep", "too many items", "too many bytes", "a subclass"],
    argvalues=[
        (functools.reduce(lambda v, _: [v], range(wire.PLAIN_DEPTH + 1), 0), "list"),
        ([[0] * 1000, [0] * 1001], "list"),
        (["x" * 900] * 100, "list"),  # past PLAIN_BYTES (the grader's line limit bounds a forged one)
        (type("Mine", (list,), {})([1]), "test_wire.Mine"),
    ],
)
def test_a_value_past_the_bounds_crosses_as_opaque(value, opaque):
    assert wire.plain(value) == {"opaque": opaque}


@pytest.mark.parametrize("bound", ["depth", "items"])
def test_a_forged_value_past_the_bounds_is_malformed(bound):
    at_bound = functools.reduce(lambda v, _: [v], range(wire.PLAIN_DEPTH), 0) if bound == "depth" else [0] * wire.PLAIN_ITEMS
    wire.check_value(at_bound)
    with pytest.raises(wire.ProtocolError, match="larger than any answer"):
        wire.check_value([at_bound] if bound == "depth" else [*at_bound, 0])


def test_answer_lines_must_answer_the_request_in_flight_and_stay_bounded():
    lines = wire.AnswerLines()
    lines.feed(wire.answer_line(7, {"ok": True, "value": {"float": "0.5"}}) + b"7 j:{")
    assert lines.next(7) == b"f:0.5" and lines.next(7) is None and not lines.has_line()
    lines.feed(b'"ok": true, "value": 1}\n8 f:0.5\n')
    assert wire.check_answer(wire.json_payload(lines.next(7))) == {"ok": True, "value": 1, "output": "", "took": 0.0}
    with pytest.raises(wire.ProtocolError, match="never made"):
        lines.next(7)
    lines.clear()
    lines.feed(b"7 " + b"x" * wire.LINE_LIMIT)
    with pytest.raises(wire.ProtocolError, match="longer than"):
        lines.next(7)


def _payload(answer: dict) -> bytes:
    return b"j:" + json.dumps({"output": "", **answer}).encode()


def test_an_answer_repeated_is_checked_once_and_shared_with_its_key(monkeypatch):
    from grader.sandbox import answer as answers

    monkeypatch.setattr(answers, "_OTHERS", {})
    crash = _payload({"ok": False, "error": "meteor_score raised ZeroDivisionError: division by zero", "traceback": "line 9"})
    first, again = answers.answer_from(crash), answers.answer_from(crash)
    assert again is first
    fresh = answers.Answer(False, kind="exception", error=first.error, traceback="line 9")
    assert first == fresh and first.key() == fresh.key() and first.key().startswith('["e"')
    listed = _payload({"ok": True, "value": [1, {"float": "0.5"}]})
    value = answers.answer_from(listed).result()
    value.append("changed by a caller")
    assert answers.answer_from(listed).result() == [1, 0.5]  # a shared answer gives each caller its own value


def test_the_answers_kept_are_bounded_and_a_malformed_one_is_never_kept(monkeypatch):
    from grader.sandbox import answer as answers

    monkeypatch.setattr(answers, "_OTHERS", {})
    monkeypatch.setattr(answers, "OTHERS_KEPT", 3)
    for i in range(10):
        answers.answer_from(_payload({"ok": True, "value": i}))
        assert len(answers._OTHERS) <= 3
    long = _payload({"ok": True, "value": list(range(answers.OTHER_KEPT_BYTES // 4))})
    assert len(long) > answers.OTHER_KEPT_BYTES
    assert answers.answer_from(long) is not answers.answer_from(long)  # too long to keep
    forged = _payload({"ok": "yes", "value": 1})
    for _ in range(2):
        with pytest.raises(wire.ProtocolError):
            answers.answer_from(forged)
    assert forged not in answers._OTHERS
