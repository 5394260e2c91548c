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
import time
from dataclasses import dataclass, field
from typing import Any

from grader.runner import TestResult, truncate
from grader.sandbox import Answer, SandboxedSubmission
from grader.submission import SubmissionError

# Kinds of answer that depend on timing rather than on the submission's code alone.
UNSTABLE = ("timeout", "crash", "not_run")


@dataclass
class Call:
    test: str  # the name of the test that made the call
    call: list  # [args, kwargs], as sent
    answer: str  # Answer.key()


@dataclass
class Trace:
    """One full run: every call in order with its answer, and the verdicts it led to."""

    calls: list[Call]
    verdicts: list[dict]  # TestResult fields except output


@dataclass
class Node:
    test: str = ""
    call: list | None = None
    children: dict[str, "Node"] = field(default_factory=dict)
    verdicts: list[dict] | None = None


class Tree:
    def __init__(self) -> None:
        self.root = Node()
        self.traces = 0

    def add(self, trace: Trace) -> bool:
        """Insert a run; False if it contradicts the tree (the run was not deterministic)."""
        node = self.root
        for step in trace.calls:
            if node.verdicts is not None:
                return False
            if node.call is None:
                node.test, node.call = step.test, step.call
            elif node.call != step.call or node.test != step.test:
                return False
            node = node.children.setdefault(step.answer, Node())
        if node.call is not None:
            return False
        node.verdicts = trace.verdicts
        self.traces += 1
        return True

    def replay(self, sandbox: SandboxedSubmission, time_limit: float) -> list[TestResult] | None:
        """The submission's verdicts if it behaves like a remembered run, else None."""
        if self.root.call is None and self.root.verdicts is None:
            return None
        started = time.monotonic()
        outputs: dict[str, list[str]] = {}
        node = self.root
        while node.verdicts is None:
            segment = [node]
            while len(segment[-1].children) == 1:
                (only,) = segment[-1].children.values()
                if only.call is None:
                    break
                segment.append(only)
            answered = 0
            for step, answer in zip(segment, sandbox.evaluate([n.call for n in segment])):
                answered += 1
                if answer.kind in UNSTABLE:
                    return None
                child = step.children.get(answer.key())
                if child is None:
                    return None
                if answer.output:
                    outputs.setdefault(step.test, []).append(answer.output)
                node = child
            if answered < len(segment) or time.monotonic() - started > time_limit:
                return None
        return [
            TestResult(**verdict, output=truncate("".join(outputs.get(verdict["name"], []))))
            for verdict in node.verdicts
        ]


def current_test() -> str:
    """The running test's name, from the variable pytest keeps up to date."""
    nodeid = os.environ.get("PYTEST_CURRENT_TEST", "")
    return nodeid.split("::")[-1].rsplit(" (", 1)[0]


class Recorder:
    """Stands in for the sandbox during a full run and writes down every call and answer.

    It also fails a test fast after that test's first timeout: hypothesis would otherwise
    retry a hanging call while shrinking, each try costing the whole time limit.
    """

    def __init__(self, sandbox: SandboxedSubmission):
        self.sandbox = sandbox
        self.calls: list[Call] = []
        self.stable = True
        self._hung_in: str | None = None
        self._hung_error: SubmissionError | None = None

    def meteor_score(self, *args: Any, **kwargs: Any) -> Any:
        test = current_test()
        if self._hung_in == test and self._hung_error is not None:
            raise SubmissionError(self._hung_error.kind, self._hung_error.message + " (and the test stopped there)")
        call = [list(args), kwargs]
        answer: Answer = next(self.sandbox.evaluate([call]))
        if answer.kind in UNSTABLE:
            self.stable = False
        else:
            self.calls.append(Call(test, call, answer.key()))
        if answer.output:
            sys.stdout.write(answer.output)
        try:
            return answer.result()
        except SubmissionError as exc:
            if exc.kind == "timeout":
                self._hung_in, self._hung_error = test, exc
            raise

    def trace(self, tests: list[TestResult]) -> Trace | None:
        if not self.stable:
            return None
        verdicts = [{k: v for k, v in vars(t).items() if k != "output"} for t in tests]
        return Trace(self.calls, verdicts)
