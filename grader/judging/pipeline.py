"""One class, from the submissions found to every file written: what `grade`, `merge` and the Gradescope autograder run.

`grade_class(request)` takes the steps in order:

1. resume: a result of the last run into `out` is kept when the code, the settings and the kit are
   the same (resume.py); the rest is graded;
2. scheduling: one file of each kind of code first, files with a loop before the others
   (`first_of_each_kind`), while a process of its own checks similar code meanwhile;
3. grading: the worker pool (grade.py), whose results become the typed model here
   (grader/core/results.py): the points are already in them (grader/core/scoring.py);
4. similar code, over the whole class;
5. the LMS's side (`--roster`, `--adjust`: passback.py), whose adjustments are the grade's third step
   (grader/core/adjustments.py), then every file (grader/reports/files.py), Ctrl+C held off meanwhile.

`merge` gives the shards' results (`merged`): nothing is graded, steps 4 and 5 are taken. The
autograder gives no `out`: nothing is kept or written, and it renders its one result itself.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from grader.core import exercise, replay
from grader.core.results import ClassRun, RunSettings, SimilarPair, Student, SubmissionResult, SubmissionStatus
from grader.judging import passback, resume, similarity
from grader.judging.archive import ArchiveError, is_zip, unpacked
from grader.judging.discovery import SOURCE_LIMIT, Prepared, Spec, UsageError, prepare
from grader.judging.grade import Interrupted, Settings, grade_all, helper_note, paths, who
from grader.judging.passback import Passback
from grader.reports.files import write_outputs
from grader.reports.progress import Progress

SIMILAR_CUT = "the check for similar code was interrupted"
Downloads = dict[str, tuple[str, list[tuple[str, str]]]]  # a zip given -> (the folder it was unpacked into, what was skipped)


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
        pairs, note = similar_code(run.submissions, request.exercise, request.tell)
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
    keys = [_key(ex, p, settings) if request.out is not None else None for p in prepared]
    early = None
    if request.similar:
        # The code as each result will record it (Grader.grade): similar code is checked meanwhile.
        entries = [
            {"submission": s.name, "source": p.source[:SOURCE_LIMIT] if p.source else None} for s, p in zip(specs, prepared)
        ]
        early = similarity.InBackground(entries, ex.starter)
    todo = first_of_each_kind([i for i, k in enumerate(keys) if k is None or k not in earlier], prepared)
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
    results = [fresh[i] if i in fresh or k is None else _kept(earlier[k], spec) for i, (spec, k) in enumerate(zip(specs, keys))]
    pairs, note, cut = None, "", False
    if request.similar:
        try:
            pairs, note = similar_code(results, ex, request.tell, early)
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


def _key(ex: exercise.Exercise, prepared: Prepared, settings: Settings) -> str:
    """The resume key of one submission: its code as read, the settings that change verdicts, the kit."""
    # Helper modules change what a submission does: they are part of its key.
    limits = {
        "timeout": settings.timeout,
        "budget": settings.budget,
        **({"modules": prepared.modules} if prepared.modules else {}),
    }
    return resume.key(ex, prepared.source, prepared.problem, limits)


def _kept(earlier: SubmissionResult, spec: Spec) -> SubmissionResult:
    """A result of the last run, kept: named and placed as the submission is now (its file may have moved)."""
    # grade.py's helpers read the worker's dictionaries: the note is all `helper_note` reads.
    now = who(spec, helper_note({"note": earlier.note}, spec))
    student = Student.from_json(now["student"]) if now["student"] else None
    return replace(earlier, submission=spec.name, path=now["path"], student=student, note=now["note"], reused=True)


def first_of_each_kind(todo: list[int], prepared: list[Prepared]) -> list[int]:
    """`todo` with one file of each distinct code first (the same code but for comments and layout), then the copies.

    What the memo cannot answer comes first: it learns each kind early, and a file that hangs,
    which takes its whole budget, starts early too instead of keeping the class waiting at its
    end. In a class of 500 with 20 distinct files, the last hanging one started 10.3 s into a
    run whose other files were graded in 11.5 s, and the run ended at 15.3 s. Of those first,
    files with a `while` loop go first: a call hangs in one far more often than elsewhere (all 10
    hanging files of the diverse class of 300, among its 56 with one). Results keep the class's
    order; only the order of grading changes, and no verdict depends on it.
    """
    seen: set[bytes] = set()
    loops, first, copies = [], [], []
    for index in todo:
        tokens = similarity.normal(prepared[index].source or "")
        digest = similarity.digest_of(tokens)
        if digest in seen:
            copies.append(index)
        else:
            (loops if "while" in tokens.split("\0") else first).append(index)
        seen.add(digest)
    return loops + first + copies


def similar_code(
    results: list[SubmissionResult],
    ex: exercise.Exercise,
    tell: Callable[[str], None] = _to_stderr,
    early: similarity.InBackground | None = None,
) -> tuple[list[SimilarPair] | None, str]:
    """Pairs of submissions with identical or near-identical code, beyond `ex`'s starter (None: the check could not run).

    `early`: the check begun while the class was graded, on the code as read before; used if the
    code graded is that code (a file changed since is checked again here).
    """
    try:
        from grader.judging.similarity import MAX_PAIRS, similar_pairs
    except ImportError as exc:
        if early is not None:
            early.stop()
        tell(f"warning: similar code not checked ({exc})")
        return None, f"not checked: {exc}"
    usable = early is not None and [e["source"] for e in early.entries] == [r.source for r in results]
    if early is not None and not usable:
        early.stop()
    if not (usable and early is not None and early.ready()):
        tell(f"checking {len(results)} submission(s) for similar code...")
    pairs = early.pairs() if usable and early is not None else None
    if pairs is None:
        entries = [{"submission": r.submission, "source": r.source, "status": r.status} for r in results]
        pairs = similar_pairs(entries, ex.starter)
    else:
        # Those not graded (a Ctrl+C) are left out, as similar_pairs leaves them out.
        left_out = {r.submission for r in results if r.status == SubmissionStatus.NOT_GRADED}
        pairs = [p for p in pairs if p["a"] not in left_out and p["b"] not in left_out]
    found = [SimilarPair.from_json(p) for p in pairs]
    if len(found) > MAX_PAIRS:
        return found[:MAX_PAIRS], f"{len(found)} pairs in all; the {MAX_PAIRS} with the most overlap are listed."
    return found, ""


@contextmanager
def downloaded(paths: list[str]) -> Iterator[Downloads]:
    """The LMS download among `paths`, unpacked for as long as the class is graded (UsageError for a zip that is not one).

    A zip comes alone (one download at a time). A scheduler's SIGTERM (a time limit) ends the run
    as Ctrl+C does, so the unpacked zip is removed then too.
    """
    fake = next((text for text in paths if text.lower().endswith(".zip") and os.path.isfile(text) and not is_zip(text)), None)
    if fake is not None:
        raise UsageError(f"{fake} is not a zip archive (it does not start as one); download it again")
    zips = [text for text in paths if is_zip(text)]
    if len(zips) > 1 or zips and len(paths) > 1:
        raise UsageError("give a zip alone on the command line (one download at a time)")
    if not zips:
        yield {}
        return
    previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        with unpacked(zips[0]) as download:
            yield {zips[0]: (download.root, download.skipped)}
    except ArchiveError as exc:
        raise UsageError(f"{zips[0]}: {exc}") from None
    finally:
        signal.signal(signal.SIGTERM, previous)


def _terminated(*_: object) -> None:
    raise KeyboardInterrupt


def check_out(out: Path, paths: list[str]) -> None:
    """Refuse an --out that a later run would grade, or whose replaced folders hold submissions (UsageError)."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} exists and is not a directory")
    target = out.resolve()
    for text in paths:
        path = Path(text).resolve()
        if Path(text).is_dir() and (path == target or path in target.parents):
            raise UsageError(
                f"--out {out} is inside the class folder {text}: a later run would grade "
                "its own output as students; choose an --out outside it"
            )
        for replaced in ("gradescope", "report"):  # each run replaces these folders whole
            if path == target / replaced or target / replaced in path.parents:
                raise UsageError(f"{text} is inside {out / replaced}, which every run replaces; move it out of --out")


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
