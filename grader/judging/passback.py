"""`--roster`, `--assignment`, `--missing` and `--adjust` of `grade` and `merge`: grades back into the LMS.

Both files are read and checked before grading starts (a typo must not cost a class's run);
after grading, the adjustments are applied, the results matched with the roster, and the
gradebook, unmatched.csv and the feedback files written next to the other outputs.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from grader.core import adjustments, exercise
from grader.core.adjustments import AdjustError, Plan
from grader.core.results import ClassRun, Contested, LmsStudent, LmsSummary, SubmissionResult, Unmatched, Unwritten
from grader.core.safe_text import for_terminal
from grader.judging.discovery import UsageError
from grader.lms import registry
from grader.lms.adapter import Fill
from grader.lms.registry import read_roster
from grader.reports import feedback, gradebook
from grader.reports.atomic import attempt, replace_folder, write_atomic
from grader.reports.roster import Match, Roster, RosterError, Student, match


@dataclass
class Passback:
    roster: Roster | None = None
    column: int | None = None  # the assignment's column, in an export with one per assignment
    plan: Plan | None = None
    missing: str = "zero"


def add_options(parser: argparse.ArgumentParser) -> None:
    exports = [a.roster_title for a in registry.ADAPTERS if a.roster_title]
    parser.add_argument(
        "--roster",
        type=Path,
        metavar="FILE",
        help=f"the gradebook your LMS exported ({', '.join(exports[:-1])}, or {exports[-1]}): writes an "
        "import-ready gradebook, unmatched.csv and feedback/ into --out",
    )
    parser.add_argument(
        "--assignment",
        metavar="NAME",
        help=f"{_choosers()}: the assignment column to fill (its title, id or whole heading), when the roster has several",
    )
    parser.add_argument(
        "--missing",
        choices=("zero", "blank"),
        default="zero",
        help="the grade of a student on the roster with no submission (default zero; blank leaves the LMS's value alone)",
    )
    parser.add_argument(
        "--adjust",
        type=Path,
        metavar="FILE",
        help="a TOML file of grade changes: per student, with a reason, and per diagnosis, with a comment "
        "(docs/lms-gradebook.md)",
    )


def load(args: argparse.Namespace, ex: exercise.Exercise) -> Passback:
    """The roster and adjustments named on the command line for `ex`, checked; UsageError for either's problem."""
    if getattr(args, "roster", None) and getattr(args, "shard", None):
        # A shard's gradebook would give every student of the other shards a 0.
        raise UsageError("--roster with --shard: give --roster to `meteor-kit merge`, which sees the whole class")
    try:
        roster = read_roster(args.roster) if getattr(args, "roster", None) else None
        lms = registry.of_roster(roster) if roster is not None else None
        column = None
        if roster is not None and lms is not None and lms.has_assignments:
            column = lms.assignment_column(roster, args.assignment, ex.id, ex.title)
        elif getattr(args, "assignment", None):
            raise RosterError(
                f"--assignment chooses a column of a {_choosers()} gradebook: "
                + ("give one with --roster" if roster is None else f"this roster is {roster.kind}'s")
            )
        plan = adjustments.read_plan(args.adjust) if getattr(args, "adjust", None) else None
    except (RosterError, AdjustError) as exc:
        raise UsageError(str(exc)) from None
    return Passback(roster, column, plan, getattr(args, "missing", "zero"))


def _choosers() -> str:
    """The LMSes whose gradebook export has a column per assignment, for --assignment's help and errors."""
    return " or ".join(a.title for a in registry.ADAPTERS if a.has_assignments)


def _identities(matched: Match | None) -> dict[int, list[str]]:
    if matched is None:
        return {}
    return {i: [s.lms_id, s.name, s.login, s.email] for i, s in matched.by_result.items()}


def apply(run: ClassRun, passback: Passback) -> tuple[ClassRun, Match | None]:
    """The run with its results matched with the roster and adjusted (each run from scratch), and who matched whom."""
    results = [replace(r, lms_student=None) if r.lms_student is not None else r for r in run.submissions]
    matched = lms = None
    if passback.roster is not None:
        matched = match(results, passback.roster)
        for i, s in matched.by_result.items():
            results[i] = replace(results[i], lms_student=LmsStudent(s.lms_id, s.name))
        lms = LmsSummary(
            roster=str(passback.roster.path),
            kind=passback.roster.kind,
            matched=len(matched.by_result),
            missing=[LmsStudent(s.lms_id, s.name) for s in matched.missing],
            unmatched=[Unmatched(results[i].submission, why) for i, why in matched.unmatched],
            # Students two submissions claim equally: left blank in the gradebook, the submissions in `unmatched`.
            contested=[
                Contested(s.lms_id, s.name, [results[i].submission for i in claimants]) for s, claimants in matched.contested
            ],
            warnings=list(passback.roster.warnings),
        )
    results, adjusted = adjustments.apply(results, passback.plan, _identities(matched))
    return replace(run, submissions=results, lms=lms, adjust=adjusted), matched


def write(out: Path, run: ClassRun, passback: Passback, matched: Match | None, ex: exercise.Exercise) -> ClassRun:
    """The gradebook, unmatched.csv, feedback/ (and the LMS's feedback bundle) of a class graded on `ex`, if asked for.

    Returns the run with what writing the gradebook warned of (in `lms.warnings`). A file that
    cannot be written is added to the run's `unwritten` (the report and the summary show it), and
    the others are written still.
    """
    if passback.roster is None and passback.plan is None:
        return run
    results = run.submissions
    roster = passback.roster
    owners: dict[int, Student] = matched.by_result if matched else {}
    unwritten: list[Unwritten] = []
    warnings: list[str] = []
    pages: list[tuple[int, SubmissionResult, Student | None, str, str]] = []

    def written(name: str, make: Callable[[], str | bytes]) -> None:
        attempt(unwritten, name, lambda: write_atomic(out / name, make()))

    def render() -> None:
        pages.extend((i, r, owners.get(i), *feedback.render(r, owners.get(i), ex)) for i, r in enumerate(results))

    rendered = attempt(unwritten, "feedback/", render)
    if roster is not None and matched is not None:
        lms = registry.of_roster(roster)
        written(lms.gradebook_file, lambda: _gradebook(roster, results, matched, passback, warnings))
        written("unmatched.csv", lambda: gradebook.unmatched_csv(results, matched))
        if lms.feedback_bundle and rendered:
            written(lms.feedback_bundle, lambda: lms.write_feedback([(s, page) for _, _, s, _, page in pages if s is not None]))
        elif lms.feedback_bundle:
            unwritten.append(Unwritten(lms.feedback_bundle, "the feedback it holds could not be made (see feedback/)"))
    if rendered:
        attempt(unwritten, "feedback/", lambda: replace_folder(out / "feedback", lambda into: _write_folder(into, pages)))
    if run.lms is not None and warnings:
        run = replace(run, lms=replace(run.lms, warnings=[*run.lms.warnings, *warnings]))
    if unwritten:
        run = replace(run, unwritten=[*(run.unwritten or []), *unwritten])
    return run


def files(run: ClassRun, passback: Passback) -> list[str]:
    """The files this run wrote for the LMS: those its options ask for, but any it could not write."""
    if passback.roster is None and passback.plan is None:
        return []
    wanted = []
    if passback.roster is not None:
        lms = registry.of_roster(passback.roster)
        wanted += [lms.gradebook_file, "unmatched.csv", *([lms.feedback_bundle] if lms.feedback_bundle else [])]
    failed = {u.output for u in run.unwritten or []}
    return [name for name in [*wanted, "feedback/"] if name not in failed]


def _gradebook(roster: Roster, results: list[SubmissionResult], matched: Match, passback: Passback, warnings: list[str]) -> str:
    """The gradebook in the LMS's own format, ready to import; what writing it warned of goes into `warnings`."""
    text, said = registry.of_roster(roster).write_gradebook(roster, results, matched, Fill(passback.column, passback.missing))
    warnings += said
    return text


def _write_folder(folder: Path, pages: list[tuple[int, SubmissionResult, Student | None, str, str]]) -> None:
    """feedback/'s files: a Markdown and an HTML file per student."""
    used: set[str] = set()
    for _, r, student, md, page in pages:
        base = feedback.file_base(r, student, used)
        # The folder is swapped in whole, as report/ is: one fsync per file (write_atomic's) cost
        # 3 ms each, 6 s for a class of 1,000, and bought nothing a reader could see.
        (folder / f"{base}.md").write_text(md, encoding="utf-8")
        (folder / f"{base}.html").write_text(page, encoding="utf-8")


def summary(run: ClassRun, passback: Passback) -> list[str]:
    """The terminal summary's lines about the roster and the adjustments."""
    lines = []
    lms = run.lms
    if lms:
        unmatched = lms.unmatched
        lines.append(
            f"roster ({lms.kind}): {lms.matched} matched, {len(lms.missing)} without a submission, "
            f"{len(unmatched)} submission(s) matching nobody" + (" (unmatched.csv):" if unmatched else "")
        )
        for u in unmatched[:10]:
            lines.append(f"  {for_terminal(u.submission, one_line=True)}: {for_terminal(u.reason, one_line=True)}")
        if len(unmatched) > 10:
            lines.append(f"  and {len(unmatched) - 10} more")
        for c in lms.contested[:10]:
            claimants = ", ".join(for_terminal(x, one_line=True) for x in c.submissions[:5])
            lines.append(
                f"  claimed equally, left blank in the gradebook: {for_terminal(c.name or c.lms_id, one_line=True)} ({claimants})"
            )
        if lms.missing:
            names = [for_terminal(m.name or m.lms_id, one_line=True) for m in lms.missing[:10]]
            more = f" and {len(lms.missing) - 10} more" if len(lms.missing) > 10 else ""
            lines.append(f"  without a submission (marked missing in the gradebook): {'; '.join(names)}{more}")
    adjusted = run.adjust
    if adjusted:
        lines.append(f"adjustments ({for_terminal(adjusted.file, one_line=True)}): {adjusted.adjusted} submission(s) adjusted")
        for problem in [*adjusted.unused, *adjusted.clamped]:
            lines.append(f"  warning: {for_terminal(problem, one_line=True)}")
    for warning in lms.warnings if lms else []:
        lines.append(f"warning: {for_terminal(warning, one_line=True)}")
    written = files(run, passback)
    if written:
        lines.append(f"for the LMS: {', '.join(written)}")
    return lines
