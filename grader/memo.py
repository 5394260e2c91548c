"""Verdicts remembered by behaviour: a submission that answers like an earlier one gets its verdicts.

The test run is a deterministic function of the answers the submission gives (the hypothesis
profile is derandomized, the tests are trusted code). So a full run is a path: the first
call, its answer, the call the tests make next given that answer, and so on, ending in the
verdicts. Paths of many runs share prefixes and form a tree keyed by answers.

To grade a new submission, walk the tree: make the call at the current node in the
submission's sandbox, follow the edge of its answer. Reaching a leaf means the tests would
have made exactly these calls and seen exactly these answers, so the leaf's verdicts are
this submission's verdicts. An answer with no edge is new behaviour: run the tests for real.
Only the submission's printed output differs between submissions; it is attached per test.

Calls along a chain of single-child nodes go to the sandbox as one batch. The batch ends at
the first node with several children, so the submission never sees a call the tests would
not have made: the check holds even for a submission that keeps state between calls.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any

from grader.runner import TestResult, truncate
from grader.sandbox import Answer, SandboxedSubmission
from grader.submission import SubmissionError

# A budget that ran out depends on the clock, not on the submission's answers: never remembered.
UNSTABLE = ("not_run",)


@dataclass
class Call:
    call: list  # [args, kwargs], as sent
    answer: str  # Answer.key()


@dataclass
class Trace:
    """One test of one run: its calls in order with their answers, and the verdict they led to."""

    test: str
    calls: list[Call]
    verdict: dict  # TestResult fields except output


@dataclass
class Node:
    call: list | None = None
    children: dict[str, "Node"] = field(default_factory=dict)
    verdict: dict | None = None


class Memo:
    """One tree per test: tests do not share state, so each is a function of its own answers."""

    def __init__(self) -> None:
        self.roots: dict[str, Node] = {}
        self._stopped = False

    def add(self, trace: Trace) -> bool:
        """Insert a test's run; False if it contradicts the tree (the run was not deterministic)."""
        node = self.roots.setdefault(trace.test, Node())
        for step in trace.calls:
            if node.verdict is not None:
                return False
            if node.call is None:
                node.call = step.call
            elif node.call != step.call:
                return False
            node = node.children.setdefault(step.answer, Node())
        if node.call is not None or (node.verdict is not None and node.verdict != trace.verdict):
            return False
        node.verdict = trace.verdict
        return True

    def replay(self, sandbox: SandboxedSubmission, tests: list[str]) -> tuple[dict[str, TestResult], list[str]]:
        """Verdicts of the `tests` this submission answers like a remembered run; the others, to run."""
        known: dict[str, TestResult] = {}
        missing: list[str] = []
        for index, name in enumerate(tests):
            used = sandbox._used
            result = self._replay_test(sandbox, name)
            if result is not None:
                known[name] = result
                continue
            # A test that will run for real must not pay twice from the submission's budget.
            sandbox._used = used
            missing.append(name)
            if self._stopped:
                # It hung or crashed where no remembered run did: such a submission will likely
                # do it again, and each try costs a time limit. The real run decides the rest.
                missing += tests[index + 1 :]
                break
        return known, missing

    def _replay_test(self, sandbox: SandboxedSubmission, name: str) -> TestResult | None:
        self._stopped = False
        node = self.roots.get(name)
        if node is None or (node.call is None and node.verdict is None):
            return None
        outputs: list[str] = []
        while node.verdict is None:
            segment = [node]
            while len(segment[-1].children) == 1:
                (only,) = segment[-1].children.values()
                if only.call is None:
                    break
                segment.append(only)
            answers = sandbox.evaluate([n.call for n in segment])
            answered = 0
            for step, answer in zip(segment, answers):
                answered += 1
                child = None if answer.kind in UNSTABLE else step.children.get(answer.key())
                if answer.output:
                    outputs.append(answer.output)
                if child is None:
                    self._stopped = answer.kind in ("timeout", "crash", "not_run")
                    if answered < len(segment) and answer.kind not in ("timeout", "crash", "not_run"):
                        # The child is still busy with calls the tests would not make now.
                        answers.close()
                        sandbox.restart()
                    return None
                node = child
                if answer.kind in ("timeout", "crash"):
                    break  # the test stopped there (see Recorder): this node is its leaf
        return TestResult(**node.verdict, output=truncate("".join(outputs)))


def current_test() -> str:
    """The running test's name, from the variable pytest keeps up to date."""
    nodeid = os.environ.get("PYTEST_CURRENT_TEST", "")
    return nodeid.split("::")[-1].rsplit(" (", 1)[0]


class Recorder:
    """Stands in for the sandbox during a real run and writes down every call and answer, per test.

    It also fails a test fast after that test's first timeout or crash: hypothesis would
    otherwise retry while shrinking, each try costing the whole time limit (or a new
    process). So such a test is decided by that one call, which is what the memo remembers.
    """

    def __init__(self, sandbox: SandboxedSubmission):
        self.sandbox = sandbox
        self.calls: dict[str, list[Call]] = {}
        self.unstable: set[str] = set()
        self._hung: dict[str, SubmissionError] = {}

    def meteor_score(self, *args: Any, **kwargs: Any) -> Any:
        test = current_test()
        if test in self._hung:
            error = self._hung[test]
            raise SubmissionError(error.kind, error.message, error.traceback)
        call = [list(args), kwargs]
        answer: Answer = next(self.sandbox.evaluate([call]))
        if answer.kind in UNSTABLE:
            self.unstable.add(test)
        self.calls.setdefault(test, []).append(Call(call, answer.key()))
        if answer.output:
            sys.stdout.write(answer.output)
        try:
            return answer.result()
        except SubmissionError as exc:
            if exc.kind in ("timeout", "crash"):
                self._hung[test] = exc
            raise

    def traces(self, tests: list[TestResult]) -> list[Trace]:
        return [
            Trace(t.name, self.calls.get(t.name, []), {k: v for k, v in vars(t).items() if k != "output"})
            for t in tests
            if t.name not in self.unstable
        ]
