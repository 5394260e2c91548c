"""One class, from the submissions found to every file written: what `grade`, `merge` and the Gradescope autograder run.

`grade_class(request)` takes the steps in order:

1. resume: a result of the last run into `out` is kept when the code, the settings and the kit are
   the same (resume.py); the rest is graded;
2. scheduling: one file of each kind of code first, files with a loop before the others
   (similarity.py's `first_of_each_kind`), while a process of its own checks similar code meanwhile;
3. grading: the worker pool (grade.py), whose results become the typed model here
   (grader/core/results.py): the points are already in them (grader/core/scoring.py);
4. similar code, over the whole class;
5. the LMS's side (`--roster`, `--adjust`: passback.py), whose adjustments are the grade's third step
   (grader/core/adjustments.py), then every file (grader/reports/files.py), Ctrl+C held off meanwhile.

`merge` gives the shards' results (`merged`): nothing is graded, steps 4 and 5 are taken. The
autograder gives no `out`: nothing is kept or written, and it renders its one result itself.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from grader.core import exercise, replay
from grader.core.results import ClassRun, RunSettings, SubmissionResult
from grader.judging import passback, resume, similarity
from grader.judging.discovery import SOURCE_LIMIT, Spec, prepare
from grader.judging.grade import Interrupted, Settings, grade_all, paths
from grader.judging.passback import Passback
from grader.reports.files import write_outputs
from grader.reports.progress import Progress

SIMILAR_CUT = "the check for similar code was interrupted"


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class ClassRequest:
    """What to grade, how, and where its files go."""

    exercise: exercise.Exercise
    settings: Settings | None = None  # the limits, and whether the memo is used (None: the exercise's)
    specs: list[Spec] = field(default_factory=list)  # the submissions found (grader/judging/intake.py)
    jobs: int = 1
    isolation: str = ""  # the mode the sandbox entered (grader.sandbox.host.enter_mode)
    isolation_note: str | None = None
    out: Path | None = None  # None: nothing is kept from an earlier run, nor written (the autograder)
    fresh: bool = False  # grade every submission again, even those unchanged since the last run into `out`
    shard: tuple[int, int] | None = None
    passback: Passback = field(default_factory=Passback)
    merged: ClassRun | None = None  # `merge`'s parts, put together: graded already
    similar: bool = True  # check similar code (a class's; not one upload's)
    tell: Callable[[str], None] = _to_stderr  # a line for the person waiting
    progress: bool = True  # the progress bar (on stderr)


class ResultsNotWritten(Exception):
    """results.json itself could not be written: nothing is left to say the run's results with."""


def grade_class(request: ClassRequest) -> ClassRun:
    """The class graded (or merged), its files written into `request.out`.

    Raises KeyboardInterrupt when Ctrl+C came before any submission was graded (nothing is
    written), and ResultsNotWritten when results.json could not be. A Ctrl+C later writes what
    was graded, the rest `not_graded`, and the run says `interrupted`.
    """
    started = time.monotonic()
    if request.merged is not None:
        run = request.merged
        pairs, note = similarity.class_pairs(run.submissions, request.exercise, request.tell)
        run = replace(run, similar=pairs, similar_note=note)
    else:
        run = _graded(request, started)
    if request.out is None:
        return run
    with _no_interrupt():
        try:
            run, matched = passback.apply(run, request.passback)
            run = passback.write(request.out, run, request.passback, matched, request.exercise)
            unwritten = write_outputs(request.out, run, request.exercise)
        except OSError as exc:
            raise ResultsNotWritten(str(exc)) from exc
    return replace(run, unwritten=unwritten or None)


def _graded(request: ClassRequest, started: float) -> ClassRun:
    """Steps 1 to 4: the results, kept or graded, and similar code."""
    ex, specs = request.exercise, request.specs
    settings = request.settings or Settings(ex, ex.call_timeout, ex.budget)
    # A result from the last run into `out` is kept when the code, the settings and the kit are the same.
    earlier = resume.previous(request.out) if request.out is not None and not request.fresh else {}
    prepared = [prepare(spec) for spec in specs]
    keys = [resume.key(ex, p, settings.timeout, settings.budget) if request.out is not None else None for p in prepared]
    early = None
    if request.similar:
        # The code as each result will record it (Grader.grade): similar code is checked meanwhile.
        entries = [
            {"submission": s.name, "source": p.source[:SOURCE_LIMIT] if p.source else None} for s, p in zip(specs, prepared)
        ]
        early = similarity.InBackground(entries, ex.starter)
    todo = [i for i, k in enumerate(keys) if k is None or k not in earlier]
    todo = similarity.first_of_each_kind(todo, [p.source for p in prepared])
    if len(todo) < len(specs):
        request.tell(
            f"{len(specs) - len(todo)} submission(s) unchanged since the last run into {request.out}: their results are kept "
            "(--fresh grades every one)"
        )
    if todo and replay.enabled() and replay.current(ex) is None:
        # Seconds before the first submission (the recording and its pool of simplest inputs): say why.
        request.tell("drawing the property tests' examples against the reference (once per kit version)...")
    progress = Progress(len(todo), sys.stderr) if request.progress else None
    try:
        graded, interrupted = grade_all([specs[i] for i in todo], settings, request.jobs, progress), False
    except Interrupted as stop:
        graded, interrupted = stop.results, True
    except KeyboardInterrupt:  # before the first worker started
        if early is not None:
            early.stop()
        raise
    finally:
        if progress is not None:
            progress.finish()
    # The worker pool's results are dictionaries (as its workers send them): typed from here on.
    fresh = {i: SubmissionResult.from_json({**r, "key": keys[i], "reused": False}) for i, r in zip(todo, graded)}
    results = [
        fresh[i] if i in fresh or k is None else resume.kept(earlier[k], spec) for i, (spec, k) in enumerate(zip(specs, keys))
    ]
    pairs, note, cut = None, "", False
    if request.similar:
        try:
            pairs, note = similarity.class_pairs(results, ex, request.tell, early)
        except KeyboardInterrupt:
            if early is not None:
                early.stop()
            cut, note = True, SIMILAR_CUT
    elif early is not None:
        early.stop()
    return ClassRun(
        exercise=ex.id,
        isolation=request.isolation,
        isolation_note=request.isolation_note,
        settings=RunSettings(settings.timeout, settings.budget, request.jobs),
        paths=paths(settings),  # which way the tests and the property tests ran (grader/judging/runs.py, replay.py)
        duration=round(time.monotonic() - started, 3),
        interrupted=interrupted or cut,
        shard=request.shard,
        similar=pairs,
        similar_note=note,
        submissions=results,
    )


@contextmanager
def _no_interrupt() -> Iterator[None]:
    """Ctrl+C held off: writing takes a second or two, and a Ctrl+C meanwhile would leave files from two runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
