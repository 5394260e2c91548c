"""On a hypothesis the kit does not know, nothing of its internals is used: one warning, and hypothesis's own verdicts.

grader/core/hypothesis_adapter.py holds every use of hypothesis's internals, for the versions in
KNOWN. These tests pretend the installed version is another (KNOWN emptied) and check that replay,
the direct calls and the speed-ups turn themselves off, that the twins run their examples through
hypothesis's public API, and that the verdicts stay those of plain hypothesis. CI also runs the
suite's grading tests with the newest hypothesis (.ci/run).
"""

from __future__ import annotations

import warnings

import pytest
from conftest import KIT_ROOT

from grader.core import direct_run, exercise, replay, runner, twins
from grader.core import hypothesis_adapter as internals
from grader.core.submission import LocalSubmission

EXERCISE = exercise.load(KIT_ROOT)
CATALOGUE = KIT_ROOT / "tests" / "catalogue"
WER = exercise.load(KIT_ROOT / "tests" / "exercises" / "wer")
# The test modules' tier mark is registered by their own conftest, which twins.properties does not load.
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnknownMarkWarning")


@pytest.fixture
def unknown(monkeypatch):
    """The installed hypothesis, as if it were a version the kit does not know."""
    monkeypatch.setattr(internals, "KNOWN", ())
    monkeypatch.setattr(internals, "_warned", False)


def local(path) -> LocalSubmission:
    return LocalSubmission(path.read_text(), EXERCISE.function)


def verdicts(path, tiers: tuple[str, ...]) -> list[tuple[str, str, str]]:
    report = runner.run(EXERCISE, lambda: local(path), path.name, tiers=tiers)
    return [(t.name, t.status, t.message) for t in report.tests]


@pytest.mark.pinned_hypothesis
def test_the_installed_hypothesis_is_one_the_kit_knows(monkeypatch):
    """The pin (pyproject.toml) and KNOWN move together: upgrading is the pin, then this adapter."""
    monkeypatch.delenv(replay.ENV_SWITCH, raising=False)
    assert internals.known() and internals.version() in internals.KNOWN
    assert replay.path() == {"property_tests": "replay", "hypothesis": internals.version()}


def test_on_an_unknown_hypothesis_replay_is_off_and_one_warning_says_so(unknown, monkeypatch):
    monkeypatch.delenv(replay.ENV_SWITCH, raising=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert not replay.enabled() and not replay.enabled()
        said = replay.path()
    warned = [w for w in caught if issubclass(w.category, internals.UnknownHypothesis)]
    assert len(warned) == 1 and internals.version() in str(warned[0].message)
    assert said["property_tests"] == "plain hypothesis" and "not a version the kit knows" in said["why"]
    # The direct calls of `grade` set what hypothesis's pytest plugin sets: pytest sessions instead.
    assert direct_run.Tests.collect(EXERCISE, []) is None


@pytest.mark.parametrize("name", ["wrong/no_clipping", "wrong/crash_on_empty", "correct/functional"])
def test_on_an_unknown_hypothesis_the_verdicts_are_plain_hypothesis_s(name, unknown, monkeypatch):
    """Replay off by the version gives what KIT_REPLAY=0 gives: hypothesis runs each property test, messages and all."""
    path = CATALOGUE / f"{name}.py"
    by_version = verdicts(path, ("properties",))
    monkeypatch.setattr(internals, "KNOWN", (internals.version(),))
    monkeypatch.setenv(replay.ENV_SWITCH, "0")
    assert by_version == verdicts(path, ("properties",))
    monkeypatch.delenv(replay.ENV_SWITCH)
    replayed = verdicts(path, ("properties",))  # the kit's own way: the same statuses
    assert [(n, s) for n, s, _ in replayed] == [(n, s) for n, s, _ in by_version]


def test_on_an_unknown_hypothesis_the_twins_give_the_same_verdicts_and_messages(unknown, monkeypatch):
    """The twins' examples run through @example on an unknown version, directly on a known one: alike."""
    strategies = __import__("hypothesis").strategies
    words = strategies.lists(strategies.sampled_from(["sun", "moon"]), min_size=1, max_size=4)
    found = twins.properties(WER.tests_dir / "test_properties.py", {"ws": words, "a": words, "b": words})
    submissions = {
        "reference": (WER.root / "solutions" / "reference.py").read_text(),
        "counts": "def word_error_rate(reference, hypothesis, detail=False):\n    return float(reference.count('S'))\n",
        "crashes": "def word_error_rate(reference, hypothesis, detail=False):\n    raise ValueError(reference)\n",
        "upper": "def word_error_rate(reference, hypothesis, detail=False):\n    return 0.0 if reference.islower() else 1.0\n",
    }

    def outcomes() -> dict:
        seen = {}
        for key, twin in found.items():
            for name, code in submissions.items():
                try:
                    twin(LocalSubmission(code, WER.function))
                    seen[key, name] = "pass"
                except Exception as exc:  # the verdict is the exception's type and message
                    seen[key, name] = (type(exc).__name__, str(exc))
        return seen

    public = outcomes()
    monkeypatch.setattr(internals, "KNOWN", (internals.version(),))
    direct = outcomes()
    assert public == direct
    assert {v for v in public.values() if v != "pass"} and public[
        "properties-case_does_not_change_the_rate", "reference"
    ] == "pass"


def test_run_examples_skips_rejected_examples_and_stops_at_the_first_failure_on_either_path(unknown, monkeypatch):
    from hypothesis import assume, note

    for known in (False, True):
        if known:
            monkeypatch.setattr(internals, "KNOWN", (internals.version(),))
        seen: list[int] = []

        def body(box: list, x: int) -> None:
            note(f"x={x}")  # notes need hypothesis's build context, and stay quiet
            assume(x != 2)
            box.append(x)
            assert x < 4, f"too big: {x}"

        with pytest.raises(AssertionError, match="too big: 4"):
            internals.run_examples(body, [{"x": 1}, {"x": 2}, {"x": 3}, {"x": 4}, {"x": 5}], seen)
        assert seen == [1, 3, 4], known
