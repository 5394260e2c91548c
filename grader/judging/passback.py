"""`--roster`, `--assignment`, `--missing` and `--adjust` of `grade` and `merge`: grades back into the LMS.

Both files are read and checked before grading starts (a typo must not cost a class's run);
after grading, the adjustments are applied, the results matched with the roster, and the
gradebook, unmatched.csv and the feedback files written next to the other outputs.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from grader.core import exercise
from grader.core.safe_text import for_terminal
from grader.judging.discovery import UsageError
from grader.lms import registry
from grader.lms.adapter import Fill
from grader.lms.registry import read_roster
from grader.reports import adjust, feedback, gradebook
from grader.reports.adjust import AdjustError, Plan
from grader.reports.files import attempt, replace_folder, write_atomic
from grader.reports.roster import Match, Roster, RosterError, Student, match


@dataclass
class Passback:
    roster: Roster | None = None
    column: int | None = None  # the assignment's column, in an export with one per assignment
    plan: Plan | None = None
    missing: str = "zero"


@dataclass
class Done:
    """What `apply` found, for the files and the summary."""

    matched: Match | None = None
    outcome: adjust.Outcome | None = None
    warnings: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)


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
        plan = adjust.read_plan(args.adjust) if getattr(args, "adjust", None) else None
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


def apply(document: dict, passback: Passback) -> Done:
    """Match the results with the roster and apply the adjustments: in the results and in the document."""
    results = document["submissions"]
    for r in results:
        r.pop("lms_student", None)
    document.pop("lms", None)
    document.pop("adjust", None)
    done = Done()
    if passback.roster is not None:
        done.matched = match(results, passback.roster)
        for i, s in done.matched.by_result.items():
            results[i]["lms_student"] = {"lms_id": s.lms_id, "name": s.name}
        document["lms"] = {
            "roster": str(passback.roster.path),
            "kind": passback.roster.kind,
            "matched": len(done.matched.by_result),
            "missing": [{"lms_id": s.lms_id, "name": s.name} for s in done.matched.missing],
            "unmatched": [{"submission": results[i].get("submission"), "reason": why} for i, why in done.matched.unmatched],
            # Students two submissions claim equally: left blank in the gradebook, the submissions in `unmatched`.
            "contested": [
                {"lms_id": s.lms_id, "name": s.name, "submissions": [results[i].get("submission") for i in claimants]}
                for s, claimants in done.matched.contested
            ],
        }
        done.warnings += passback.roster.warnings
    done.outcome = adjust.apply(results, passback.plan, _identities(done.matched))
    if passback.plan is not None:
        document["adjust"] = {
            "file": passback.plan.path,
            "adjusted": done.outcome.adjusted,
            "unused": done.outcome.unused,
            "clamped": done.outcome.clamped,
        }
    return done


def write(out: Path, document: dict, passback: Passback, done: Done, ex: exercise.Exercise) -> None:
    """The gradebook, unmatched.csv, feedback/ (and the LMS's feedback bundle) of a class graded on `ex`, if asked for.

    A file that cannot be written is listed in the document's `unwritten` (the report and the
    summary show it), and the others are written still.
    """
    if passback.roster is None and passback.plan is None:
        return
    results = document["submissions"]
    roster, matched = passback.roster, done.matched
    owners: dict[int, Student] = matched.by_result if matched else {}
    unwritten: list[dict] = []
    pages: list = []

    def written(name: str, make: Callable[[], str | bytes]) -> None:
        if attempt(unwritten, name, lambda: write_atomic(out / name, make())):
            done.files.append(name)

    def render() -> None:
        pages.extend((i, r, owners.get(i), *feedback.render(r, owners.get(i), ex)) for i, r in enumerate(results))

    rendered = attempt(unwritten, "feedback/", render)
    if roster is not None and matched is not None:
        lms = registry.of_roster(roster)
        written(lms.gradebook_file, lambda: _gradebook(roster, results, matched, passback, done))
        written("unmatched.csv", lambda: gradebook.unmatched_csv(results, matched))
        if lms.feedback_bundle and rendered:
            written(lms.feedback_bundle, lambda: lms.write_feedback([(s, page) for _, _, s, _, page in pages if s is not None]))
    if rendered and attempt(
        unwritten, "feedback/", lambda: replace_folder(out / "feedback", lambda into: _write_folder(into, pages))
    ):
        done.files.append("feedback/")
    if unwritten:
        document["unwritten"] = [*(document.get("unwritten") or []), *unwritten]


def _gradebook(roster: Roster, results: list[dict], matched: Match, passback: Passback, done: Done) -> str:
    """The gradebook in the LMS's own format, ready to import."""
    text, warnings = registry.of_roster(roster).write_gradebook(roster, results, matched, Fill(passback.column, passback.missing))
    done.warnings += warnings
    return text


def _write_folder(folder: Path, pages: list) -> None:
    """feedback/'s files: a Markdown and an HTML file per student."""
    used: set[str] = set()
    for _, r, student, md, page in pages:
        base = feedback.file_base(r, student, used)
        # The folder is swapped in whole, as report/ is: one fsync per file (write_atomic's) cost
        # 3 ms each, 6 s for a class of 1,000, and bought nothing a reader could see.
        (folder / f"{base}.md").write_text(md, encoding="utf-8")
        (folder / f"{base}.html").write_text(page, encoding="utf-8")


def summary(document: dict, done: Done) -> list[str]:
    """The terminal summary's lines about the roster and the adjustments."""
    lines = []
    lms = document.get("lms")
    if lms:
        unmatched = lms["unmatched"]
        lines.append(
            f"roster ({lms['kind']}): {lms['matched']} matched, {len(lms['missing'])} without a submission, "
            f"{len(unmatched)} submission(s) matching nobody" + (" (unmatched.csv):" if unmatched else "")
        )
        for u in unmatched[:10]:
            lines.append(f"  {for_terminal(str(u['submission']), one_line=True)}: {for_terminal(u['reason'], one_line=True)}")
        if len(unmatched) > 10:
            lines.append(f"  and {len(unmatched) - 10} more")
        for c in (lms.get("contested") or [])[:10]:
            claimants = ", ".join(for_terminal(str(x), one_line=True) for x in c["submissions"][:5])
            lines.append(
                f"  claimed equally, left blank in the gradebook: {for_terminal(c['name'] or c['lms_id'], one_line=True)} "
                f"({claimants})"
            )
        if lms["missing"]:
            names = [for_terminal(m["name"] or m["lms_id"], one_line=True) for m in lms["missing"][:10]]
            more = f" and {len(lms['missing']) - 10} more" if len(lms["missing"]) > 10 else ""
            lines.append(f"  without a submission (marked missing in the gradebook): {'; '.join(names)}{more}")
    adjusted = document.get("adjust")
    if adjusted:
        lines.append(
            f"adjustments ({for_terminal(adjusted['file'], one_line=True)}): {adjusted['adjusted']} submission(s) adjusted"
        )
        for problem in [*adjusted["unused"], *adjusted["clamped"]]:
            lines.append(f"  warning: {for_terminal(problem, one_line=True)}")
    for warning in done.warnings:
        lines.append(f"warning: {for_terminal(warning, one_line=True)}")
    if done.files:
        lines.append(f"for the LMS: {', '.join(done.files)}")
    return lines
