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
EXERCISE = exercise.load()


def properties(path: Path, replaying: bool) -> list[dict]:
    """Every property test's verdict, message and output for the file, replay on or off."""
    os.environ[replay.ENV_SWITCH] = "1" if replaying else "0"
    try:
        report = run(
            lambda: SandboxedSubmission(path, EXERCISE.function, EXERCISE.call_timeout, source=read_source(path)),
            path.name,
            tiers=("properties",),
        )
    finally:
        os.environ.pop(replay.ENV_SWITCH, None)
    return [{**vars(t)} for t in report.tests] + [{"status": report.status, "message": report.message}]


def test_the_recording_holds_every_property_test_but_those_that_draw_in_their_body():
    recording = replay.ensure(run)
    assert recording is not None
    assert set(recording.skipped) == {
        "test_properties.py::test_whitespace_does_not_change_the_score",
        "test_properties.py::test_more_chunks_never_raise_the_score",
    }
    assert all("st.data()" in why for why in recording.skipped.values())
    assert len(recording.tests) == 8
    for examples in recording.tests.values():
        assert sum(e.outcome == replay.PASS for e in examples) == EXERCISE.hypothesis_examples
        assert sorted(e.rank for e in examples) == list(range(len(examples)))


@pytest.mark.parametrize("path", EVERY_FILE, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_replay_gives_the_verdicts_and_counterexamples_hypothesis_gives(path):
    assert properties(path, replaying=True) == properties(path, replaying=False)


def test_replay_calls_the_submission_once_per_example_of_a_passing_test():
    replay.ensure(run)
    calls = []

    class Counting:
        function = EXERCISE.function

        def meteor_score(self, reference, candidate, **params):
            calls.append((reference, candidate, params))
            return REFERENCE.meteor_score(reference, candidate, **params)

    from grader.core.submission import load_local

    REFERENCE = load_local(str(EXERCISE.root / "solutions" / "reference.py"))
    counts = {}
    for replaying in (False, True):
        calls.clear()
        os.environ[replay.ENV_SWITCH] = "1" if replaying else "0"
        try:
            report = run(lambda: Counting(), "counting", tiers=("properties",))
        finally:
            os.environ.pop(replay.ENV_SWITCH, None)
        assert report.passed == len(report.tests) == 10
        counts[replaying] = list(calls)
    # The same calls, in the same order: replay skips hypothesis, never an input.
    assert counts[True] == counts[False]


def test_a_value_that_does_not_survive_json_is_refused_and_the_tagged_ones_come_back_the_same():
    values = {"f": [0.5, -0.0, float("inf")], "t": (1, "a"), "d": {"k": [True, None]}, "fn": str.upper, "cls": str}
    assert replay.same(replay.decode(json.loads(json.dumps(replay.encode(values)))), values)
    assert not replay.same(replay.decode(replay.encode(1)), 1.0)
    with pytest.raises(replay.Unrecordable):
        replay.encode(object())
    with pytest.raises(replay.Unrecordable):
        replay.encode(lambda: 0)


def test_a_recording_made_by_another_hypothesis_is_not_used(tmp_path):
    data = replay.ensure(run).as_json()
    assert replay.from_json(data) is not None
    assert replay.from_json({**data, "hypothesis": "0.0.1"}) is None
    assert replay.from_json({**data, "format": replay.FORMAT + 1}) is None
