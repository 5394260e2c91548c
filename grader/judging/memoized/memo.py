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

A walk whose calls reached one child in the order a full run makes them gives a full run's
verdicts even for a submission with a history (a counter, a cache): same calls, same answers.
A walk that left that order (a batch settled after a wrong bet or a new answer; a test the memo
has no tree for, run for real after the walk asked later tests' calls) is checked: a fresh child
is asked the run's calls again, from the last fresh child before the point where the order was
left, and must give the same answers. One that does not is graded in full (see `confirm`), so
the memo never changes a verdict.

Round trips are what a walk costs, so calls go to the sandbox in batches. A batch runs on
while the next call is certain, and that is the case more often than "the node has one
child": a class has a few kinds of behaviour (correct, and each common bug), each kind
answers every call the same way, and a run of each kind is remembered as a *profile*.
While the answers so far fit the same profiles, and these all answer the next call alike,
the call after it is known too, across test boundaries. So a submission of a known kind is
walked in a handful of batches, one per split between kinds, not one per test. A batch
that turns out wrong (an answer other than the one it bet on, known or new) is settled: the
child answers the rest, the answers are dropped uncharged, and the walk goes on in the same
child (a fresh one only if settling takes longer than SETTLE). The walk notes where the child
left a full run's order (`Walk.deviation`), and the memo's check covers what those calls might
have changed (docs/memo.md).

The grader walks each stage of the tests (Exercise.stages) on its own, in its own child (an
exercise without a `fresh_child` tier has one: its secret tiers run last, in the public ones' child).
"""

from __future__ import annotations

import marshal
import pickle
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from grader.core import tuning
from grader.core.runner import TestResult, truncate
from grader.core.submission import LoadError
from grader.core.tuning import AHEAD, SETTLE
from grader.judging.runs import ENDS_TEST, Guard
from grader.sandbox.host import Answer, SandboxedSubmission

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
class Profile:
    """One whole run, test by test: the answer keys along each test's path."""

    paths: dict[str, list[str]]


class Node:
    """A point of one test's runs: the call made there, and the node each answer to it leads to.

    A plain class with slots: a worker makes one for each call of each new behaviour of the
    class, its own and the other workers' (81,506 on the diverse class of 500), and a
    dataclass's generated __init__ with three default factories took 0.43 s of them.
    """

    __slots__ = ("call", "children", "verdict", "profiles", "next_of")

    def __init__(self) -> None:
        self.call: list | None = None
        self.children: dict[str, Node] = {}
        self.verdict: dict | None = None
        self.profiles: set[int] = set()  # the profiles whose runs pass here
        self.next_of: dict[int, Node] = {}  # the child each of them goes on to


@dataclass
class _Step:
    test: int  # index into the tests being replayed
    node: Node  # whose call is made
    expect: Node | None  # the child the batch assumed the answer leads to (None: the batch ends here)


class Memo:
    """One tree per test: tests do not share state, so each is a function of its own answers."""

    def __init__(self) -> None:
        self.roots: dict[str, Node] = {}
        self.profile_count = 0
        self.nodes = 0
        self.round_trips = 0  # batches sent, for the benchmark and the tests
        # Each node by its test and the calls that led to it and its own (`history`): where a real run's
        # call sits in a remembered run that asked the same, whatever it was answered (see `ahead`).
        self._at: dict[tuple[str, int], Node] = {}

    def learn(self, item: Trace | Profile) -> None:
        if isinstance(item, Profile):
            self.add_profile(item)
        else:
            self.add(item)

    @property
    def full(self) -> bool:
        """Past tuning.MAX_NODES calls remembered it learns no more: odd submissions cannot grow a worker without bound."""
        return self.nodes >= tuning.MAX_NODES

    def add(self, trace: Trace) -> bool:
        """Insert a test's run; False if it contradicts the tree (the run was not deterministic) or the tree is full."""
        return self._add(trace.test, [(step.call, step.answer) for step in trace.calls], trace.verdict)

    def learn_packed(self, packed: bytes) -> None:
        """Learn what `pack` made of another worker's new traces and profiles."""
        body = memoryview(packed)[1:]
        for item in marshal.loads(body) if packed[:1] == b"m" else pickle.loads(body):
            if len(item) == 1:
                self.add_profile(Profile(item[0]))
            else:
                self._add(*item)

    def _add(self, test: str, steps: list[tuple[list, str]], verdict: dict) -> bool:
        if self.full:
            return False
        node = self.roots.get(test)
        if node is None:
            node = self.roots[test] = Node()
        at, asked = self._at, 0
        for call, answer in steps:
            if node.verdict is not None:
                return False
            asked = history(asked, call)
            if node.call is None:
                node.call = call
                at.setdefault((test, asked), node)
            elif node.call != call:
                return False
            child = node.children.get(answer)
            if child is None:
                child = node.children[answer] = Node()
                self.nodes += 1
            node = child
        if node.call is not None or (node.verdict is not None and node.verdict != verdict):
            return False
        node.verdict = verdict
        return True

    def ahead(self, test: str, asked: int, most: int) -> list[list]:
        """The calls a remembered run of `test` made after the ones a real run `asked` (their `history`): what it likely asks next.

        From the node of a remembered run that made the same calls up to there, whatever their
        answers (after a failure, the examples tried next are the same ones), along the answers the
        first run through it gave (up to `most` calls, and not past the end of the test).
        """
        node = self._at.get((test, asked))
        calls: list[list] = []
        while node is not None and len(calls) < most:
            node = next(iter(node.children.values()), None)
            if node is None or node.call is None:
                break
            calls.append(node.call)
        return calls

    def add_profile(self, profile: Profile) -> None:
        """Remember a whole run's kind, so later submissions of that kind are walked in few batches."""
        number = self.profile_count
        self.profile_count += 1
        for test, keys in profile.paths.items():
            node = self.roots.get(test)
            path = []
            for key in keys:
                if node is None:
                    break
                path.append(node)
                node = node.children.get(key)
            if node is None or node.verdict is None:
                continue  # a path the tree does not hold (its trace was unstable): no hint there
            for step, after in zip(path, (*path[1:], node)):
                step.next_of[number] = after
                step.profiles.add(number)
            node.profiles.add(number)

    def walk(self, sandbox: SandboxedSubmission, tests: list[str], before: Walk | None = None) -> Walk:
        """Replay the `tests` against this submission: the verdicts it answers like a remembered run, and the rest.

        `before`: the walk of this submission's stage before (Exercise.stages), in another child:
        the kinds its answers fit, and whether it surprised, still hold.
        """
        walk = Walk(self, sandbox, tests, before)
        walk.run()
        return walk


class Walk:
    """One submission's replay: its state lives here, not on the long-lived Memo, and the grader reads it after.

    `known`: verdicts settled from the memo; `missing`: tests to run for real, with `prefixes`,
    the calls and answers each had so far; `walked`: the settled tests' calls and answers;
    `paths`: their answer keys (this submission's profile so far); `hung`: it stopped at a new
    timeout (or at the budget's end); `surprised`: a batch bet wrong or a test was new, so this
    kind is worth remembering; `deviation`: where the child's calls first left a full run's
    order, as (test index, calls of it made in order); `fits`: the profiles the answers so far fit
    (None: no hint), which the walk of the submission's next stage starts from.
    """

    def __init__(self, memo: Memo, sandbox: SandboxedSubmission, tests: list[str], before: Walk | None = None):
        self.memo = memo
        self.roots = memo.roots
        self.tests = tests
        self.known: dict[str, TestResult] = {}
        self.missing: list[str] = []
        self.paths: dict[str, list[str]] = {}
        self.surprised = before.surprised if before is not None else False
        self.fits: set[int] | None = before.fits if before is not None else None
        self.prefixes: dict[str, list[tuple[list, Answer]]] = {}
        self.walked: dict[str, list[tuple[list, Answer]]] = {}
        self.deviation: tuple[int, int] | None = None
        self._sandbox = sandbox
        self._index: int = 0
        self._node: Node | None = None
        self.hung = False  # it stopped at a call that timed out (or at the budget's end): see Grader._run
        self._start_test()

    @property
    def profile(self) -> Profile:
        """The answer keys along the settled tests' paths: that part of this submission's profile."""
        return Profile(self.paths)

    def run(self) -> None:
        """Walk the trees, a batch of calls at a time, until every test is settled or left to run."""
        tests, sandbox = self.tests, self._sandbox
        while self._next_node():
            plan = self._plan(self.fits)
            self.memo.round_trips += 1
            answers = sandbox.evaluate([step.node.call for step in plan])
            for done, step in enumerate(plan, 1):
                answer = next(answers, None)
                if answer is None:
                    break  # the last answer was a failure, and evaluate ended there
                key = answer.key()
                child = None if answer.kind in UNSTABLE else step.node.children.get(key)
                if answer.output:
                    self._outputs.append(answer.output)
                if child is None or (answer.kind in ENDS_TEST and child.verdict is None):
                    # New behaviour: this test runs for real. Its run starts with the answers
                    # seen here, so no call is made (or waited for, or paid from the budget) twice.
                    self.missing.append(tests[step.test])
                    if answer.kind not in ENDS_TEST:
                        # Its next call goes to another child. After a timeout or a crash it does in a
                        # full run too (a fresh one), so the order still holds there: no check needed.
                        self._deviate(step.test, len(self._seen) + 1)
                    if answer.kind not in UNSTABLE:
                        self.prefixes[tests[step.test]] = [*self._seen, (step.node.call, answer)]
                    self.surprised = True
                    if answer.kind in ENDS_TEST + UNSTABLE:
                        # It hung or crashed where no remembered run did: such a submission will
                        # likely do it again, and each try costs a time limit. The real run decides.
                        self.missing += tests[step.test + 1 :]
                        self.hung = answer.kind != "crash"
                        return
                    if done < len(plan):
                        # The child is busy with calls the tests would not make: once they are answered,
                        # it goes on (the order is left already, so the check runs), else a fresh child.
                        answers.close()
                        sandbox.settle(SETTLE)
                    self._index, self._node = step.test + 1, None
                    self._start_test()
                    break
                self._keys.append(key)
                self._seen.append((step.node.call, answer))
                made = (step.test, len(self._seen))
                self.fits = _narrow(self.fits, child)
                if child.verdict is not None:
                    self._finish(child.verdict)
                else:
                    self._node = child
                if child is not step.expect:
                    if done < len(plan):
                        # A known answer, but not the one the batch bet on: the rest of it is moot.
                        answers.close()
                        sandbox.settle(SETTLE)
                        self.surprised = True
                        self._deviate(*made)  # the child saw calls a full run does not make
                    break

    def _next_node(self) -> bool:
        """Move to the next test that makes a call, settling the others; False at the end."""
        while self._node is None:
            if self._index >= len(self.tests):
                return False
            root = self._root(self._index)
            if root is not None and root.call is not None:
                self._node = root
            elif _calls_nothing(root):
                self._finish(root.verdict)
            else:
                self.missing.append(self.tests[self._index])
                self._deviate(self._index, 0)
                self._index += 1
                self._start_test()
        return True

    def _deviate(self, test: int, made: int) -> None:
        if self.deviation is None or (test, made) < self.deviation:
            self.deviation = (test, made)

    def _start_test(self) -> None:
        self._outputs: list[str] = []
        self._keys: list[str] = []
        self._seen: list[tuple[list, Answer]] = []

    def _finish(self, verdict: dict) -> None:
        """The current test reached a leaf; tests after it that make no call are settled too."""
        while True:
            name = self.tests[self._index]
            self.known[name] = TestResult(**verdict, output=truncate("".join(self._outputs)))
            self.paths[name] = self._keys
            self.walked[name] = self._seen
            self._index, self._node = self._index + 1, None
            self._start_test()
            root = self._root(self._index)
            if root is not None and root.call is not None:
                self._node = root  # a batch's next step is this root
            if not _calls_nothing(root):
                return
            verdict = root.verdict

    def _plan(self, fits: set[int] | None) -> list[_Step]:
        """Calls from the current node on, while the next one is certain for the profiles that fit."""
        plan: list[_Step] = []
        index, node = self._index, self._node
        while True:
            step = _Step(index, node, None)
            plan.append(step)
            child = _certain(node, fits)
            if child is None:
                return plan  # the answer decides what comes next
            fits = _narrow(fits, child)
            step.expect = child
            if child.verdict is None:
                if child.call is None:
                    return plan
                node = child
                continue
            # The test ends there; the next one that makes a call follows (see _finish). Not once
            # this submission has answered something new, or a batch has bet wrong on it: more
            # surprises are likely, and each would leave the rest of the batch to be answered for
            # nothing (145 diverse files: 53,000 calls of the 318,000, before).
            if self.surprised:
                return plan
            index += 1
            while _calls_nothing(self._root(index)):
                index += 1
            root = self._root(index)
            if root is None or root.call is None:
                return plan
            node = root

    def _root(self, index: int) -> Node | None:
        """The tree of the `index`th test being replayed (None past the end or if none is remembered)."""
        return self.roots.get(self.tests[index]) if index < len(self.tests) else None


def pack(items: list[Trace | Profile]) -> bytes:
    """A worker's new traces and profiles as the other workers learn them (`Memo.learn_packed`).

    marshal, not pickle: they hold only lists, dicts, strings and numbers, and a worker learns
    every other worker's (11 MB on the diverse class of 500). Unpickled, their 91,615 `Call`
    objects took 0.62 s of each worker and learning them 0.79 s more; marshal reads the same
    data as tuples in 0.03 s. What marshal cannot write (an answer's value of a type it does
    not know) goes pickled, flagged by its first byte.
    """
    plain = [
        (item.paths,) if isinstance(item, Profile) else (item.test, [(c.call, c.answer) for c in item.calls], item.verdict)
        for item in items
    ]
    try:
        return b"m" + marshal.dumps(plain)
    except ValueError:
        return b"p" + pickle.dumps(plain, pickle.HIGHEST_PROTOCOL)


def history(asked: int, call: list) -> int:
    """The calls of a test so far, `asked` before and `call` now, as one number: equal for equal calls.

    A hash, computed alike in this process for a remembered run (Memo.add) and a real one (Recorder):
    two different histories that meet by chance only send a batch that bets wrong.
    """
    return hash((asked, repr(call)))


def _calls_nothing(root: Node | None) -> bool:
    """A remembered test that makes no call: its verdict needs no sandbox."""
    return root is not None and root.call is None and root.verdict is not None


def _certain(node: Node, fits: set[int] | None) -> Node | None:
    """The one child the profiles that `fit` go on to from `node` (any child if it has one only); None if not one.

    Looked up from the fewer: the fitting profiles, each in `next_of`, or the children, each
    asked whether its profiles meet them (290 diverse files: 39 children a node, where they split).
    """
    children = node.children
    if len(children) == 1:
        return next(iter(children.values()))
    if fits is None:
        return None
    if len(fits) < len(children):
        fitting = map(node.next_of.get, fits)  # None for a profile that does not pass here
    else:
        fitting = (child for child in children.values() if not child.profiles.isdisjoint(fits))
    only = None
    for child in fitting:
        if child is not None and child is not only:
            if only is not None:
                return None
            only = child
    return only


def _narrow(fits: set[int] | None, child: Node) -> set[int] | None:
    """The profiles that fit once the answer led to `child` (a new mix of known kinds starts over)."""
    if not child.profiles:
        return fits
    if fits is not None:
        both = fits & child.profiles
        if both:
            return both
    return child.profiles


def full_run(
    tests: list[str], paths: dict[str, list[tuple[list, Answer]]], deviation: tuple[int, int]
) -> tuple[list[tuple[list, Answer]], int]:
    """The calls a full run makes, in order, with the answers the verdicts came from; and where `deviation` is in it.

    It ends where the budget ran out: from there on nothing is a submission's answer.
    """
    steps: list[tuple[list, Answer]] = []
    at = None
    for index, test in enumerate(tests):
        if index == deviation[0]:
            at = len(steps) + deviation[1]
        for call, answer in paths.get(test, []):
            if answer.kind in UNSTABLE:
                return steps, len(steps) if at is None else at
            steps.append((call, answer))
    return steps, len(steps) if at is None else at


def confirm(sandbox: SandboxedSubmission, steps: list[tuple[list, Answer]], deviation: int, seconds: float) -> bool:
    """Whether a fresh child, asked a full run's calls in order, gives the same answers (printed output too).

    Up to `deviation` the calls reached the child in a full run's order, so only the part of
    the run from the last fresh child before it is asked again (a full run starts a fresh child
    after each timeout or crash, and so does the sandbox). This is the grader's own check: it
    is not paid from the submission's budget, and gives up (False) after `seconds`.
    """
    if deviation >= len(steps):
        return True  # every call of the run reached the child in order
    start = 0
    for index, (_, answer) in enumerate(steps[:deviation]):
        if answer.kind in ENDS_TEST:
            start = index + 1
    deadline = time.monotonic() + seconds
    with sandbox.uncharged():
        try:
            sandbox.restart()
        except LoadError:
            return False
        at = start
        while at < len(steps):
            batch_start = at
            # The calls the run answered go gathered (the child writes its answers a block at a
            # time: only compared, never blamed); one that timed out or crashed goes alone, its
            # answer waited for as in the run.
            end = next((i for i in range(at, len(steps)) if steps[i][1].kind in ENDS_TEST), len(steps))
            if end > at:
                answers = sandbox.evaluate([call for call, _ in steps[at:end]], gather_until=deadline)
            else:
                answers = sandbox.evaluate([steps[at][0]])
            for got in answers:  # it ends early after a timeout or a crash, as in the run
                want = steps[at][1]
                at += 1
                if got.key() != want.key() or got.output != want.output or time.monotonic() > deadline:
                    answers.close()
                    return False
            if at == batch_start:
                return False
    return True


class Recorder(Guard):
    """The sandbox as a real run sees it (a Guard), writing down every call and answer, per test, for the memo.

    Calls go to the sandbox one at a time, a round trip each, except where the memo knows what
    comes next: where a remembered run of this test made the same calls so far (whatever it was
    answered), the call is sent with the calls that run made after it (`ahead`, Memo.ahead), and
    the answers are taken as the test asks for them. The property tests' replayed examples make
    the same calls whatever the answers until an example fails, and so do the examples tried
    after it (the smallest-drawn pool, or shrinking) for submissions that fail alike. When the test
    asks something else, the rest of the batch is settled, and the child has answered calls a
    full run does not make: `deviation` says where, for the memo's check (as Walk.deviation).
    """

    def __init__(
        self,
        sandbox: SandboxedSubmission,
        prefixes: dict[str, list[tuple[list, Answer]]] | None = None,
        ahead: Callable[[str, int, int], list[list]] | None = None,
    ):
        super().__init__(sandbox)
        self.calls: dict[str, list[Call]] = {}
        self.answers: dict[str, list[tuple[list, Answer]]] = {}  # the same calls, with whole answers
        self.unstable: set[str] = set()
        # Per test, the calls (and answers) the replay already made: the run makes them again
        # first, in the same order, and takes those answers instead of asking the sandbox.
        self._prefixes = dict(prefixes or {})
        self._predict = ahead
        self._asked: dict[str, int] = {}  # each test's calls so far (history), to find them in a remembered run
        # The batch sent ahead: its test, the calls not yet asked for, and its answers.
        self._ahead: tuple[str, list[list], Iterator[Answer]] | None = None
        self.deviation: tuple[str, int] | None = None  # (test, calls of it made) where the child first left a full run's order

    def answer(self, test: str, call: list) -> Answer:
        prefix = self._prefixes.get(test)
        made = len(self.calls.get(test, []))
        if self._predict is not None:
            self._asked[test] = history(self._asked.get(test, 0), call)
        if prefix and made < len(prefix) and prefix[made][0] == call:
            answer: Answer = prefix[made][1]
        else:
            self._prefixes.pop(test, None)
            answer = self._ask(test, call)
        if answer.kind in UNSTABLE:
            self.unstable.add(test)
        self.calls.setdefault(test, []).append(Call(call, answer.key()))
        self.answers.setdefault(test, []).append((call, answer))
        return answer

    def _ask(self, test: str, call: list) -> Answer:
        """The answer to `call` of `test`: from the batch sent ahead, or the sandbox's."""
        if self._ahead is not None:
            ahead_test, calls, answers = self._ahead
            if ahead_test == test and calls[0] == call:
                del calls[0]
                answer = next(answers, None)
                if answer is not None:
                    if not calls or answer.kind in ENDS_TEST + UNSTABLE:
                        self._ahead = None  # the batch ended: nothing left unread
                    return answer
            self.finish(deviates=True)
        batch = [call]
        if self._predict is not None:
            batch += self._predict(test, self._asked[test], AHEAD)
        answers = self.sandbox.evaluate(batch)
        answer = next(answers)
        if len(batch) > 1 and answer.kind not in ENDS_TEST + UNSTABLE:
            self._ahead = (test, batch[1:], answers)
        return answer

    def finish(self, deviates: bool = False) -> None:
        """Settle the batch sent ahead, if the tests left a part of it unasked.

        `deviates`: the run goes on, so the child's answers from now on follow calls a full run does not make.
        """
        if self._ahead is None:
            return
        test, _, answers = self._ahead
        self._ahead = None
        answers.close()
        settled = self.sandbox.settle(SETTLE)
        if deviates and settled != "none" and self.deviation is None:
            self.deviation = (test, len(self.calls.get(test, [])))

    def restart(self) -> None:
        self.finish()
        super().restart()

    def traces(self, tests: list[TestResult]) -> list[Trace]:
        return [
            Trace(t.name, self.calls.get(t.name, []), {k: v for k, v in vars(t).items() if k != "output"})
            for t in tests
            if t.name not in self.unstable
        ]
