"""`Memoized`: a submission's tests, stage by stage, through the memo; the verdicts `Plain` gives, faster.

Each stage is walked through the memo (memo.Walk), the tests the memo cannot answer are run for
real in the same child (a Recorder stands in for the sandbox), and, where the child's calls left
a full run's order, a fresh child is asked the run's calls again (memo.confirm). A stage whose
check fails gets a full run, every stage from a fresh child with the whole budget again: what
`Plain` does, the traces kept.
"""

from __future__ import annotations

import ast
import gc
import hashlib
from collections.abc import Callable

from grader.core import runner, tuning
from grader.judging.memoized.memo import Memo, Profile, Recorder, Trace, Walk, confirm, full_run, pack
from grader.judging.partial_run import Catalogue
from grader.judging.runs import Deferred, Ran, Runs, Settings
from grader.sandbox.host import SandboxedSubmission


class Memoized(Runs):
    """Grades submissions one after another, remembering behaviours: one memo per worker, shared through the pool."""

    path = "memoized"

    def __init__(self, settings: Settings, tests: Catalogue):
        super().__init__(settings, tests)
        self.memo = Memo()

    def learn(self, batches: list[bytes]) -> None:
        """Learn the other workers' new traces, then keep the garbage collector off everything this worker holds.

        The memo only grows (a worker of the diverse class of 500 ends with about 80,000 nodes,
        each a few dicts and a set), and each full collection looked at all of it: 2.1-2.2 s of
        the 6.4-7 s of CPU each of the two workers used, most of it while learning. So before
        each submission what the last one left in cycles is collected (a collection now looks only
        at what came since the last freeze), and everything left is frozen: never looked at
        again, still freed when nothing refers to it.
        """
        gc.collect()
        for batch in batches:
            self.memo.learn_packed(batch)
        gc.freeze()

    def run(self, name: str, sandbox: SandboxedSubmission, source: str) -> Ran:
        """The verdicts, and what the memo learned from them (to share with the other workers).

        Stage by stage (Exercise.stages), as `Plain` runs them; each stage walked through the memo
        and checked as a full run of it would be.
        """
        known: dict[str, runner.TestResult] = {}
        traces: list[Trace] = []
        paths: dict[str, list[str]] = {}  # this submission's profile: the answer keys along each test's path
        remembered, status, message = 0, "graded", ""
        walk: Walk | None = None
        explored = False  # a test ran for real: it answered something new
        for number, names in enumerate(self.tests.stages):
            if number and not self.next_stage(sandbox, names, known):
                continue
            # What the last stage's walk learned of this submission (the kinds it answers like) holds here too.
            walk = self.memo.walk(sandbox, names, walk)
            stage = self._remembered(name, sandbox, source, number, walk, known, explored)
            if stage is None:
                # Its answers depend on the calls it had before (a counter, a cache...): verdicts pieced
                # together from remembered runs are not those of a full run. It gets a full run.
                status, message, known, learned = self._full_run(sandbox)
                return Ran(self.report(name, status, message, known), 0, pack(learned) if learned else None)
            status, message, ran = stage
            remembered += len(walk.known)
            explored = explored or bool(walk.missing)
            traces += ran
            paths.update(walk.paths)
            paths.update({t.test: [c.answer for c in t.calls] for t in ran})
            if status != "graded":
                break
        learned: list[Trace | Profile] = list(traces)
        if walk is not None and status == "graded" and (explored or walk.surprised):
            # A new kind of behaviour (or a new mix of known ones): later ones like it replay in few batches.
            profile = Profile(paths)
            self.memo.add_profile(profile)
            if learned:
                learned.append(profile)
        return Ran(self.report(name, status, message, known), remembered, pack(learned) if learned else None)

    def _remembered(
        self, name: str, sandbox: SandboxedSubmission, source: str, number: int, walk: Walk, known: dict, explored: bool
    ) -> tuple[str, str, list[Trace]] | None:
        """One stage after its walk: (status, message, the traces its real run taught the memo); None
        when its verdicts are not those of a full run.

        `explored`: an earlier stage ran tests for real already, so this submission waits for no other.
        """
        known.update(walk.known)
        missing = walk.missing
        # A submission that hung does not wait for another that hung alike: what that one teaches
        # the memo saves no time, for each timeout is waited for again (the memo never assumes one).
        if missing and not walk.hung and not explored and self.on_explore is not None:
            if not self.on_explore(_behaviour(walk, number, source)):
                raise Deferred(name)
        status, message, recorder, ran = "graded", "", None, []
        if missing:
            # In the child the walk asked, or the one just loaded: no fresh one (see _run_for_real).
            status, message, recorder, ran = self._run_for_real(sandbox, missing, known, walk.prefixes, self.memo.ahead)
        if status == "graded" and not self._as_a_full_run(sandbox, recorder, walk, walk.tests):
            return None
        learned: list[Trace] = []
        if status == "graded" and recorder is not None and not self.memo.full:
            learned = recorder.traces(ran)
            for trace in learned:
                self.memo.add(trace)
        return status, message, learned

    def _full_run(self, sandbox: SandboxedSubmission) -> tuple[str, str, dict[str, runner.TestResult], list[Trace | Profile]]:
        """Every stage run for real from a fresh child, the whole budget again: (status, message, verdicts, traces learned)."""
        sandbox.start_over()  # a full run does not pay for the runs before it
        known: dict[str, runner.TestResult] = {}
        learned: list[Trace | Profile] = []
        status, message = "graded", ""
        for number, names in enumerate(self.tests.stages):
            if number and not self.next_stage(sandbox, names, known):
                continue
            status, message, recorder, ran = self._run_for_real(sandbox, names, known, None, None)
            if status != "graded":
                break
            if not self.memo.full:
                traces = recorder.traces(ran)
                for trace in traces:
                    self.memo.add(trace)
                learned += traces
        return status, message, known, learned

    def _run_for_real(
        self,
        sandbox: SandboxedSubmission,
        missing: list[str],
        known: dict[str, runner.TestResult],
        prefixes: dict | None,
        ahead: Callable[[str, int, int], list[list]] | None,
    ) -> tuple[str, str, Recorder, list[runner.TestResult]]:
        """Run the `missing` tests (of one stage) for real, in the child the sandbox has; their verdicts go into `known`.

        The first run of a stage goes on in the child it has: one just loaded (the first stage), one
        the walk left fresh after a timeout or a crash (as a full run would be then), or one the walk
        asked other calls, and then the memo's check asks a fresh child a full run's calls from where
        the walk left a full run's order (Walk.deviation), so the verdicts stand only if a full run
        gives them. A fresh child there cost 0.02-0.03 s of each new behaviour.
        """
        recorder = Recorder(sandbox, prefixes, ahead)
        try:
            status, message, ran = self.run_stage(sandbox, missing, known, recorder)
        finally:
            recorder.finish()
        return status, message, recorder, ran

    def _as_a_full_run(self, sandbox: SandboxedSubmission, recorder: Recorder | None, walk: Walk, names: list[str]) -> bool:
        """Whether the memo's verdicts for the stage of `names` are those a full run gives (see memo.confirm)."""
        deviations = [walk.deviation] if walk.deviation is not None else []
        if recorder is not None and recorder.deviation is not None:
            test, made = recorder.deviation
            # The real run's batch sent ahead, in part unasked (a test it cannot place: the whole run).
            deviations.append((names.index(test), made) if test in names else (0, 0))
        if not deviations:
            return True  # every call reached one child in a full run's order
        if walk.missing == names and not walk.prefixes and recorder is not None and recorder.deviation is None:
            return True  # every test ran for real, from a fresh child: that was a full run
        paths = {**(recorder.answers if recorder is not None else {}), **walk.walked}
        steps, deviation = full_run(names, paths, min(deviations))
        return confirm(sandbox, steps, deviation, tuning.CHECK_FACTOR * sandbox.used() + tuning.CHECK_SLACK)


def _behaviour(walk: Walk, stage: int, source: str) -> str:
    """A key for the new behaviour the replay just met in `stage`: equal for submissions that answered every call alike.

    Before the memo made any call, the code itself: copies that differ only in comments and layout.
    """
    if not walk.paths and not walk.prefixes:
        try:
            what = ast.dump(ast.parse(source))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            what = source
    else:
        prefixes = {t: [(c, a.key()) for c, a in calls] for t, calls in walk.prefixes.items()}
        what = repr((sorted(walk.paths.items()), sorted(prefixes.items()), walk.missing))
    return hashlib.sha256(f"{stage}\0{what}".encode("utf-8", "surrogatepass")).hexdigest()
