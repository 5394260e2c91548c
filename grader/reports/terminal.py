"""Renders a report for a person at a terminal. It never decides a verdict.

Names, messages and printed output come from the submission: their control characters are
written out (ESC as `\\e`), never obeyed. Only this module's own colours reach the terminal.
"""

from __future__ import annotations

from grader.core.runner import Report
from grader.core.safe_text import for_terminal

MARKS = {"pass": "✓", "fail": "✗", "error": "!", "timeout": "⏱", "not_run": "-"}
COLORS = {"pass": "32", "fail": "31", "error": "31", "timeout": "33", "not_run": "90"}


def _paint(text: str, code: str, color: bool) -> str:
    return f"\033[{code}m{text}\033[0m" if color else text


def _indent(text: str, prefix: str = "      ") -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def _points(value: float) -> str:
    return f"{value:g}"


def render_report(report: Report, color: bool = False) -> str:
    lines = [for_terminal(report.submission, one_line=True)]
    if report.message:
        lines.append(_paint(for_terminal(report.message), "31", color))
    tier = None
    for test in report.tests:
        if test.tier != tier:
            tier = test.tier
            in_tier = [t for t in report.tests if t.tier == tier]
            passed = sum(t.status == "pass" for t in in_tier)
            lines.append(f"\n  {tier}: {passed}/{len(in_tier)} passed")
        mark = _paint(MARKS[test.status], COLORS[test.status], color)
        lines.append(f"    {mark} {for_terminal(test.name, one_line=True)}  ({_points(test.score)}/{_points(test.max_score)})")
        if test.status != "pass" and test.message:
            lines.append(_indent(for_terminal(test.message)))
        if test.output and test.status != "pass":
            lines.append(_indent("printed: " + for_terminal(test.output)))
    total = len(report.tests)
    summary = f"\n{report.passed}/{total} passed, {_points(report.score)}/{_points(report.max_score)} points"
    lines.append(_paint(summary, "32" if report.passed == total and total else "31", color))
    return "\n".join(lines)
