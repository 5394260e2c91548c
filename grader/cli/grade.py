"""`meteor-kit grade`: the command line of class grading (grader.judging.grade does the grading)."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path

from grader.cli.exercise_option import add_exercise_option
from grader.core import exercise, replay
from grader.core.safe_text import for_terminal
from grader.judging import passback, resume, similarity
from grader.judging.archive import ArchiveError, is_zip, unpacked
from grader.judging.discovery import SOURCE_LIMIT, Spec, UsageError, prepare
from grader.judging.grade import Interrupted, Settings, grade_all, helper_note, paths, who
from grader.judging.intake import discover_all
from grader.judging.shard import in_shard, parse_shard
from grader.judging.similarity import InBackground
from grader.lms import registry
from grader.reports.files import write_outputs
from grader.reports.progress import Progress, summary
from grader.sandbox.host import enter_mode, isolation_note, unhide


def register(commands: argparse._SubParsersAction, ex: exercise.Exercise) -> None:
    parser = commands.add_parser(
        "grade",
        help="grade a class: every submission sandboxed, several at a time",
        description=f"Grade every SUBMISSION (a .py file, an .ipynb notebook, or a directory of them) on {ex.title}'s "
        "tests and write results.json, grades.csv and Gradescope results into --out.",
    )
    parser.add_argument("submissions", nargs="+", metavar="SUBMISSION")
    parser.add_argument(
        "--from",
        dest="layout",
        choices=registry.names(),
        help="the download's layout, when its detection is wrong (default: recognised from its names)",
    )
    parser.add_argument("--out", required=True, type=Path, help="directory for the output files")
    parser.add_argument(
        "--jobs",
        type=_positive_int,
        default=os.cpu_count() or 1,
        help="submissions graded in parallel (default: the number of cores)",
    )
    parser.add_argument(
        "--timeout",
        type=_positive_float,
        default=ex.call_timeout,
        help=f"seconds for one call into a submission (default {ex.call_timeout:g})",
    )
    parser.add_argument(
        "--budget",
        type=_positive_float,
        default=ex.budget,
        help=f"seconds of wall time for one submission in all (default {ex.budget:g})",
    )
    parser.add_argument(
        "--no-memo",
        dest="memo",
        action="store_false",
        help="run the tests in full for every submission, even one that behaves like an earlier one",
    )
    parser.add_argument(
        "--no-sandbox",
        action="store_true",
        help="where no isolation works (not root, no usable bubblewrap), run the submissions "
        "anyway, NOT isolated; every output then says so",
    )
    parser.add_argument(
        "--shard",
        type=parse_shard,
        metavar="K/N",
        help="grade only the Kth of N parts of the class (by a digest of each name); "
        "`meteor-kit merge` puts the parts' --out folders together",
    )
    parser.add_argument(
        "--fresh", action="store_true", help="grade every submission again, even those unchanged since the last run into --out"
    )
    passback.add_options(parser)
    add_exercise_option(parser)
    parser.set_defaults(func=cmd_grade)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return value


def _check_out(out: Path, paths: list[str]) -> None:
    """Refuse an --out that a later run would grade, or whose replaced folders hold submissions."""
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


def _similar(results: list[dict], ex: exercise.Exercise, early: InBackground | None = None) -> tuple[list[dict] | None, str]:
    """Pairs of submissions with identical or near-identical code, beyond `ex`'s starter (None: the check could not run).

    `early`: the check begun while the class was graded, on the code as read before; used if the
    code graded is that code (a file changed since is checked again here).
    """
    try:
        from grader.judging.similarity import MAX_PAIRS, similar_pairs
    except ImportError as exc:
        if early is not None:
            early.stop()
        print(f"warning: similar code not checked ({exc})", file=sys.stderr)
        return None, f"not checked: {exc}"
    usable = early is not None and [e["source"] for e in early.entries] == [r.get("source") for r in results]
    if early is not None and not usable:
        early.stop()
    if not (usable and early.ready()):
        print(f"checking {len(results)} submission(s) for similar code...", file=sys.stderr, flush=True)
    pairs = early.pairs() if usable else None
    if pairs is None:
        pairs = similar_pairs(results, ex.starter)
    else:
        # Those not graded (a Ctrl+C) are left out, as similar_pairs leaves them out.
        left_out = {str(r["submission"]) for r in results if r.get("status") == "not_graded"}
        pairs = [p for p in pairs if p["a"] not in left_out and p["b"] not in left_out]
    if len(pairs) > MAX_PAIRS:
        return pairs[:MAX_PAIRS], f"{len(pairs)} pairs in all; the {MAX_PAIRS} with the most overlap are listed."
    return pairs, ""


def _first_of_each_kind(todo: list[int], prepared: list) -> list[int]:
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


def cmd_grade(args: argparse.Namespace) -> int:
    fake = next(
        (text for text in args.submissions if text.lower().endswith(".zip") and os.path.isfile(text) and not is_zip(text)), None
    )
    if fake is not None:
        print(
            for_terminal(
                f"meteor-kit grade: {fake} is not a zip archive (it does not start as one); download it again", one_line=True
            ),
            file=sys.stderr,
        )
        return 2
    zips = [text for text in args.submissions if is_zip(text)]
    if len(zips) > 1 or zips and len(args.submissions) > 1:
        print("meteor-kit grade: give a zip alone on the command line (one download at a time)", file=sys.stderr)
        return 2
    if not zips:
        return _cmd_grade(args, {})
    # A scheduler's SIGTERM (a time limit) ends the run as Ctrl+C does, so the unpacked zip is removed too.
    previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        with unpacked(zips[0]) as download:
            return _cmd_grade(args, {zips[0]: (download.root, download.skipped)})
    except ArchiveError as exc:
        print(for_terminal(f"meteor-kit grade: {zips[0]}: {exc}", one_line=True), file=sys.stderr)
        return 2
    finally:
        signal.signal(signal.SIGTERM, previous)


def _tell_unwritten(unwritten: list[dict]) -> None:
    for u in unwritten:
        print(for_terminal(f"NOT WRITTEN: {u['output']}: {u['error']}", one_line=True), file=sys.stderr)


def _terminated(*_: object) -> None:
    raise KeyboardInterrupt


def _cmd_grade(args: argparse.Namespace, downloads: dict[str, tuple[str, list]]) -> int:
    try:
        _check_out(args.out, args.submissions)
        ex = args.exercise
        args.passback = passback.load(args, ex)  # before grading: a typo in either file must not cost the run
        specs = discover_all(
            args.submissions,
            args.layout,
            lambda line: print(for_terminal(line, one_line=True), file=sys.stderr),
            ex.function,
            ex.submission_file,
            downloads,
        )
        if args.shard:
            specs = [spec for spec in specs if in_shard(spec.name, args.shard)]
    except UsageError as exc:
        print(for_terminal(f"meteor-kit grade: {exc}"), file=sys.stderr)
        return 2
    hidden = [*map(Path, args.submissions), *(Path(root) for root, _ in downloads.values()), args.out, ex.root]
    mode = enter_mode("meteor-kit grade", args.no_sandbox, hidden, create=(args.out,))
    if mode is None:
        return 2
    try:
        return _grade_and_write(args, specs, mode)
    finally:
        unhide()


def _grade_and_write(args: argparse.Namespace, specs: list[Spec], mode: str) -> int:
    ex = args.exercise
    settings = Settings(ex, args.timeout, args.budget, args.memo)
    started = time.monotonic()
    # A result from the last run into --out is kept when the code, the settings and the kit are the same.
    earlier = {} if args.fresh else resume.previous(args.out)
    # Helper modules change what a submission does: they are part of its key.
    prepared = [prepare(spec) for spec in specs]
    keys = [
        resume.key(
            ex,
            p.source,
            p.problem,
            {"timeout": settings.timeout, "budget": settings.budget, **({"modules": p.modules} if p.modules else {})},
        )
        for p in prepared
    ]
    # The code as each result will record it (Grader.grade): similar code is checked meanwhile.
    early = InBackground(
        [{"submission": s.name, "source": p.source[:SOURCE_LIMIT] if p.source else None} for s, p in zip(specs, prepared)],
        ex.starter,
    )
    todo = _first_of_each_kind([i for i, k in enumerate(keys) if k not in earlier], prepared)
    if len(todo) < len(specs):
        print(
            f"{len(specs) - len(todo)} submission(s) unchanged since the last run into {args.out}: their results are kept "
            "(--fresh grades every one)",
            file=sys.stderr,
        )
    if todo and replay.enabled() and replay.current(ex) is None:
        # Seconds before the first submission (more with counterexample = "smallest-drawn"): say why.
        print("drawing the property tests' examples against the reference (once per kit version)...", file=sys.stderr)
    progress = Progress(len(todo), sys.stderr)
    try:
        graded, interrupted = grade_all([specs[i] for i in todo], settings, args.jobs, progress), False
    except Interrupted as stop:
        graded, interrupted = stop.results, True
    except KeyboardInterrupt:  # before the first worker started
        early.stop()
        progress.finish()
        print("meteor-kit grade: interrupted before any submission was graded; nothing was written", file=sys.stderr)
        return 130
    progress.finish()
    fresh = dict(zip(todo, graded))
    results = [
        {**fresh[i], "key": k, "reused": False}
        if i in fresh
        else {**earlier[k], "submission": spec.name, **who(spec, helper_note(earlier[k], spec)), "reused": True}
        for i, (spec, k) in enumerate(zip(specs, keys))
    ]
    similar, note, cut = None, "", False
    try:
        similar, note = _similar(results, ex, early)
    except KeyboardInterrupt:
        early.stop()
        cut, note = True, "the check for similar code was interrupted"
    elapsed = time.monotonic() - started
    document = {
        "exercise": ex.id,
        "isolation": mode,
        "isolation_note": isolation_note(mode),
        "settings": {"timeout": settings.timeout, "budget": settings.budget, "jobs": args.jobs},
        "paths": paths(settings),  # which way the tests and the property tests ran (grader/judging/runs.py, replay.py)
        "duration": round(elapsed, 3),
        "interrupted": interrupted or cut,
        "shard": list(args.shard) if args.shard else None,
        "similar": similar,
        "similar_note": note,
        "submissions": results,
    }
    # Writing takes a second or two: a Ctrl+C now would leave files from two different runs.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        done = passback.apply(document, args.passback)
        passback.write(args.out, document, args.passback, done, ex)
        unwritten = write_outputs(args.out, document, ex)
    except OSError as exc:  # results.json itself: nothing is left to write it with
        print(for_terminal(f"meteor-kit grade: results.json could not be written: {exc}", one_line=True), file=sys.stderr)
        return 1
    finally:
        signal.signal(signal.SIGINT, previous)
    if cut or interrupted:
        _tell_unwritten(unwritten)
    if cut and not interrupted:
        print(f"meteor-kit grade: interrupted; every submission graded, {note}; written to {args.out}/", file=sys.stderr)
        return 130
    if interrupted:
        left = sum(r["status"] == "not_graded" for r in results)
        print(
            f"meteor-kit grade: interrupted; {len(results) - left} of {len(results)} graded, written to "
            f"{args.out}/ with the other {left} marked not_graded",
            file=sys.stderr,
        )
        return 130
    print(summary(results, elapsed, args.out, similar, mode, unwritten, document["paths"]))
    for line in passback.summary(document, done):
        print(line)
    return 1 if unwritten else 0
