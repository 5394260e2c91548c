"""Feedback for each student (Markdown and HTML), and the report's LMS banner (an LMS's own bundle: grader/lms/).

What a student reads is what Gradescope would show them: the messages of the tiers whose
inputs are secret pass through the same filter (grader/reports/gradescope.py), and what the
submission printed is left out. Every piece of student text is escaped: names, messages,
reasons.
"""

from __future__ import annotations

import html
import re

from grader.core.exercise import Exercise
from grader.core.results import ClassRun, Status, SubmissionResult, SubmissionStatus
from grader.core.safe_text import for_terminal, safe_name, unique_name
from grader.reports.gradescope import student_message
from grader.reports.roster import Student

CSP = "default-src 'none'; style-src 'unsafe-inline'"
STYLE = (
    "body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1a202c;"
    "overflow-wrap:anywhere}"
    "h1{font-size:1.5rem}.score{font-size:1.25rem;font-weight:700}li{margin:.4rem 0}"
    ".msg{white-space:pre-wrap;font-family:ui-monospace,monospace;font-size:.9rem}"
)


def _line(text: object) -> str:
    return for_terminal(str(text), one_line=True)


# Every ASCII punctuation mark but the apostrophe and the comma: each may be markup somewhere in
# GitHub-flavoured Markdown (emphasis, strikethrough, links, images, HTML, entities, tables,
# headings, lists, math), or part of a link GFM makes from bare text (the dot of a domain, the
# colon after `http`, the @ of an address). CommonMark allows a backslash before any of them.
_MARKS = re.compile(r"""([!"#$%&()*+\-./:;<=>?@\[\\\]^_`{|}~])""")


def md_text(text: object) -> str:
    """Student text as one line of Markdown that renders as exactly that text: no markup of theirs, no link.

    Control characters and line breaks are written out (`\\n`), as on a terminal.
    """
    return _MARKS.sub(r"\\\1", for_terminal(str(text), one_line=True))


def md_block(text: str, indent: str = "  ") -> list[str]:
    """`text` as a fenced code block (nothing in it is markup, nor a link), its fence longer than any run of backticks in it."""
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall("`+", text)), default=0))
    return [indent + line for line in [fence + "text", *for_terminal(text).splitlines(), fence]]


def _failed(result: SubmissionResult, ex: Exercise) -> list[tuple[str, str]]:
    """(name, message) of each test not passed, as a student may see them."""
    return [(f"{t.tier}: {t.name}", student_message(t, ex)) for t in result.tests if t.status != Status.PASS]


def _score_line(result: SubmissionResult) -> tuple[str, str]:
    top = result.max_score
    if result.status == SubmissionStatus.NOT_GRADED:
        return "not graded yet", ""
    score = result.final_score
    share = f" ({score / top:.0%})" if top else ""
    was = f"the tests gave {result.score:g}; see the adjustments below" if result.adjusted_score is not None else ""
    return f"{score:g} / {top:g}{share}", was


def render(result: SubmissionResult, student: Student | None, ex: Exercise) -> tuple[str, str]:
    """One student's feedback on `ex`: (Markdown, HTML)."""
    title = ex.title
    name = (student.name if student else "") or (result.student.name if result.student else None) or result.submission
    score, was = _score_line(result)
    late = result.student.late if result.student else None
    failed = _failed(result, ex)
    tests = result.tests
    diagnosis = result.diagnosis.text if result.diagnosis else ""
    adjustments = [a.describe() for a in result.adjustments or []]
    message = result.message

    md = [
        f"# {md_text(title)}: feedback for {md_text(name)}",
        "",
        f"**Score: {score}**" + (f" ({was})" if was else ""),
    ]
    h = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(title)}: feedback for {html.escape(_line(name))}</title><style>{STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}: feedback for {html.escape(_line(name))}</h1>",
        f'<p class="score">Score: {html.escape(score)}</p>' + (f"<p>({html.escape(was)})</p>" if was else ""),
    ]
    if late:
        md += ["", "Submitted late."]
        h.append("<p>Submitted late.</p>")
    if message and result.status != SubmissionStatus.GRADED:
        md += ["", *md_block(message, indent="")]
        h.append(f'<p class="msg">{html.escape(for_terminal(message))}</p>')
    if adjustments:
        md += ["", "## Adjustments", ""] + [f"- {md_text(a)}" for a in adjustments]
        h.append("<h2>Adjustments</h2><ul>" + "".join(f"<li>{html.escape(for_terminal(a))}</li>" for a in adjustments) + "</ul>")
    if diagnosis:
        md += ["", "## Diagnosis", "", md_text(diagnosis)]
        h.append(f"<h2>Diagnosis</h2><p>{html.escape(for_terminal(diagnosis))}</p>")
    if result.status == SubmissionStatus.GRADED:
        heading = f"Tests not passed: {len(failed)} of {len(tests)}" if failed else f"Every test passed ({len(tests)})"
        md += ["", f"## {heading}"]
        h.append(f"<h2>{html.escape(heading)}</h2>")
        if failed:
            md.append("")
            for n, m in failed:
                md.append(f"- **{md_text(n)}**")
                md += md_block(m) if m else []
            h.append(
                "<ul>"
                + "".join(
                    f"<li><b>{html.escape(_line(n))}</b>"
                    + (f'<div class="msg">{html.escape(for_terminal(m))}</div>' if m else "")
                    + "</li>"
                    for n, m in failed
                )
                + "</ul>"
            )
    h.append("</body></html>")
    return "\n".join(md) + "\n", "\n".join(h) + "\n"


def file_base(result: SubmissionResult, student: Student | None, used: set[str]) -> str:
    """A file name for this student's feedback, from their LMS id and name, unique even ignoring case."""
    return unique_name(safe_name(f"{student.lms_id}-{student.name}" if student else result.submission), used)


def report_banner(run: ClassRun) -> str:
    """report.html's lines about the roster and the adjustments: who matched nobody, what was changed."""
    out = []
    lms = run.lms
    if lms:
        unmatched = lms.unmatched
        text = (
            f"Roster ({html.escape(lms.kind)}): {lms.matched} matched, "
            f"{len(lms.missing)} on the roster without a submission, "
            f"{len(unmatched)} submission{'' if len(unmatched) == 1 else 's'} matching nobody (unmatched.csv)."
        )
        out.append(f'<div class="banner note" id="roster">{text}')
        if unmatched:
            items = "".join(f"<li>{html.escape(u.submission)}: {html.escape(u.reason)}</li>" for u in unmatched[:50])
            more = f"<li>and {len(unmatched) - 50} more</li>" if len(unmatched) > 50 else ""
            out.append(f"<details><summary>Submissions matching nobody on the roster</summary><ul>{items}{more}</ul></details>")
        missing = lms.missing
        if missing:
            items = "".join(f"<li>{html.escape(m.name or m.lms_id)}</li>" for m in missing[:200])
            more = f"<li>and {len(missing) - 200} more</li>" if len(missing) > 200 else ""
            out.append(f"<details><summary>On the roster without a submission</summary><ul>{items}{more}</ul></details>")
        out.append("</div>")
    adjust = run.adjust
    if adjust:
        text = f"Adjustments from {html.escape(adjust.file)}: {adjust.adjusted} submission(s) adjusted."
        problems = [*adjust.unused, *adjust.clamped]
        items = "".join(f"<li>{html.escape(p)}</li>" for p in problems)
        out.append(f'<div class="banner note" id="adjustments">{text}{f"<ul>{items}</ul>" if items else ""}</div>')
    return "".join(out)


def adjustments_html(result: SubmissionResult) -> str:
    """A student's adjustments, for their page in the class report."""
    entries = result.adjustments or []
    if not entries:
        return ""
    items = "".join(f"<li>{html.escape(for_terminal(a.describe()))}</li>" for a in entries)
    return (
        f'<div class="diag none" id="adjustments">Adjusted from {result.score:g} to {result.final_score:g}:<ul>{items}</ul></div>'
    )
