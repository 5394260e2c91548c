"""The instructor's class report: report.html, an overview of the class, and report/, one page per student.

It never decides a verdict: it only draws what the batch grader recorded. Everything is
inline (styles, the SVG chart, highlighted code). A Content-Security-Policy forbids every
request, and every script but the overview's own sorting script (allowed by its hash), so the
files work offline and student code in them cannot run.

Made for a class of a thousand: the overview holds one table row per student and opens in a
fraction of a second; the code and the tests of each student live in that student's page.
"""

from __future__ import annotations

import base64
import builtins
import hashlib
import html
import keyword
import re
from collections import Counter
from dataclasses import dataclass
from statistics import mean, median
from typing import Any

from pygments.formatters import HtmlFormatter

from grader.core.results import ClassRun, Diagnosis, SimilarPair, Status, SubmissionResult, TestResult
from grader.core.safe_text import safe_name, unique_name
from grader.reports.feedback import adjustments_html, report_banner
from grader.reports.tally import BINS, UNSCORED, Tally, category, fraction, mistake_key, tally

STATUS_MARK = {"pass": "✓", "fail": "✗", "error": "!", "timeout": "⏱", "not_run": "–"}
PAGES = "report"  # the folder of per-student pages, beside report.html
_CODE_STYLE = HtmlFormatter(cssclass="code", style="friendly").get_style_defs(".code")
TROUBLES_OPEN = 20  # longer lists of errors start collapsed
TOP_DIAGNOSES = 8  # the rest start collapsed
SIMILAR_SHOWN = 200  # pairs of similar code in the overview; results.json keeps them all
SIMILAR_SHOWN_PER_STUDENT = 20

# Sorting the overview's rows: buttons in the column headings, so a keyboard reaches them.
SORT_SCRIPT = """
(() => {
  const body = document.querySelector("#class .rows");
  const rows = Array.from(body.children, (row) =>
    ({row, name: row.dataset.name, score: Number(row.dataset.score), diag: row.dataset.diag}));
  const byName = (a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  const compare = {
    name: byName,
    score: (a, b) => a.score - b.score || byName(a, b),
    diagnosis: (a, b) => (a.diag === "") - (b.diag === "")
      || (a.diag < b.diag ? -1 : a.diag > b.diag ? 1 : 0) || a.score - b.score || byName(a, b),
  };
  const headings = document.querySelectorAll("#class [role=columnheader]");
  for (const button of document.querySelectorAll("#class button[data-key]")) {
    button.addEventListener("click", () => {
      const heading = button.parentElement;
      const ascending = heading.getAttribute("aria-sort") !== "ascending";
      const order = compare[button.dataset.key];
      rows.sort(ascending ? order : (a, b) => order(b, a));
      for (const other of headings) other.removeAttribute("aria-sort");
      heading.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      body.replaceChildren(...rows.map((r) => r.row));
      document.getElementById("sorted").textContent =
        `Sorted by ${button.dataset.key}, ${ascending ? "ascending" : "descending"}.`;
    });
  }
})();
"""
_SCRIPT_HASH = base64.b64encode(hashlib.sha256(SORT_SCRIPT.encode()).digest()).decode()
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
OVERVIEW_CSP = f"{CSP}; script-src 'sha256-{_SCRIPT_HASH}'"

CSS = """
:root { --ink: #1f2933; --muted: #5a6673; --line: #e4e7eb; --bg: #f5f7fa; --card: #fff;
  --pass: #2f855a; --fail: #c53030; --warn: #b7791f; --accent: #2b6cb0; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", "Liberation Sans", Arial, sans-serif; color: var(--ink); background: var(--bg); overflow-wrap: anywhere; }
body > header { background: #1a365d; color: #fff; padding: 24px 0 52px; }
body > header > div, main { max-width: 1180px; margin: 0 auto; padding: 0 32px; }
main { padding-bottom: 60px; }
header h1 { margin: 0 0 4px; font-size: 26px; font-weight: 650; }
header p { margin: 0; color: #bee3f8; }
header a { color: #bee3f8; }
.banner { border-radius: 10px; padding: 10px 16px; margin: 0 0 16px; font-weight: 600; }
.banner.ok { background: #c6f6d5; color: #22543d; margin-top: -40px; }
.banner.loud { background: #c53030; color: #fff; font-size: 17px; border: 3px solid #742a2a; margin-top: -40px; }
.banner.note { background: #feebc8; color: #7b341e; }
.stats { display: flex; gap: 12px; flex-wrap: wrap; margin: 0 0 22px; }
.stat { background: var(--card); border-radius: 10px; padding: 10px 16px; min-width: 130px; flex: 1 1 130px; box-shadow: 0 1px 3px rgba(0,0,0,.12); }
.stat b { display: block; font-size: 22px; }
.stat span { color: var(--muted); font-size: 13px; }
section.card { background: var(--card); border-radius: 10px; padding: 16px 20px 18px; margin: 0 0 22px; box-shadow: 0 1px 3px rgba(0,0,0,.08); min-width: 0; }
h2 { font-size: 19px; margin: 0 0 12px; }
h3 { font-size: 17px; margin: 0; }
table { border-collapse: collapse; width: 100%; font: inherit; }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: 12px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); overflow-wrap: normal; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.grid2 { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 22px; align-items: start; }
.bar { background: #edf2f7; border-radius: 4px; height: 12px; width: 100%; max-width: 160px; overflow: hidden; display: inline-block; vertical-align: middle; }
.bar i { display: block; height: 100%; background: var(--pass); }
.bar i.low { background: var(--fail); } .bar i.mid { background: var(--warn); }
.tier { font-size: 12px; color: var(--muted); }
.chip { display: inline-block; border-radius: 999px; padding: 1px 9px; font-size: 12px; font-weight: 600; white-space: nowrap; }
.chip.pass { background: #c6f6d5; color: #22543d; } .chip.fail { background: #fed7d7; color: #742a2a; }
.chip.error, .chip.timeout { background: #feebc8; color: #7b341e; } .chip.not_graded { background: #e2e8f0; color: #2d3748; }
.diag { border-left: 4px solid var(--accent); background: #ebf8ff; padding: 8px 12px; border-radius: 0 6px 6px 0; margin: 10px 0; }
.diag.none { border-color: var(--muted); background: #f7fafc; }
.mistake { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 13px; color: var(--accent); }
.legend { display: flex; flex-wrap: wrap; gap: 6px 16px; list-style: none; padding: 0; margin: 8px 0 0; font-size: 13px; color: var(--muted); }
.legend i { display: inline-block; width: 12px; height: 12px; border-radius: 3px; margin-right: 6px; vertical-align: -1px; }
#class [role=row] { display: grid; grid-template-columns: minmax(0, 34fr) minmax(0, 17fr) minmax(0, 13fr) minmax(0, 36fr); border-bottom: 1px solid var(--line); }
/* Rows off screen are not laid out: a class of a thousand opens and sorts as fast as a class of fifty. */
#class .rows > [role=row] { content-visibility: auto; contain-intrinsic-size: auto 48px; }
#class [role=cell], #class [role=columnheader] { padding: 6px 8px; min-width: 0; }
#class [role=columnheader] { font-size: 12px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); font-weight: 700; overflow-wrap: normal; }
#class .num { text-align: right; font-variant-numeric: tabular-nums; }
#class button { all: unset; cursor: pointer; border-radius: 4px; padding: 2px 4px; margin: -2px -4px; }
#class button:focus-visible { outline: 3px solid var(--accent); }
#class button::after { content: " ↕"; color: #a0aec0; }
#class [aria-sort=ascending] button::after { content: " ▲"; color: var(--ink); }
#class [aria-sort=descending] button::after { content: " ▼"; color: var(--ink); }
#class .score { font-weight: 650; font-variant-numeric: tabular-nums; border-radius: 4px; }
#class .score small { font-weight: 400; }
.s-hi { background: #c6f6d5; color: #22543d; } .s-mid { background: #fefcbf; color: #744210; }
.s-lo { background: #fed7d7; color: #742a2a; } .s-none { background: #e2e8f0; color: #2d3748; }
.submission header { all: unset; display: flex; flex-wrap: wrap; align-items: baseline; gap: 8px 12px; margin-bottom: 6px; }
.submission .side { display: grid; grid-template-columns: minmax(0, 1.15fr) minmax(0, 1fr); gap: 18px; align-items: start; }
.code { font-size: 12.5px; overflow: auto; max-height: 560px; border: 1px solid var(--line); border-radius: 6px; overflow-wrap: normal; }
.code pre { margin: 0; line-height: 1.45; }
.code td.linenos { background: #f7fafc; color: #a0aec0; padding: 0 6px; border: 0; text-align: right; user-select: none; }
.code td.code { padding: 0 8px; border: 0; }
.code table { width: auto; }
.missing { color: var(--muted); font-style: italic; }
ul.tests { list-style: none; margin: 0; padding: 0; font-size: 13.5px; }
ul.tests li { padding: 3px 0; border-bottom: 1px solid var(--line); }
ul.tests .m { font-weight: 700; display: inline-block; width: 1.3em; }
ul.tests .pass .m { color: var(--pass); } ul.tests .fail .m, ul.tests .error .m { color: var(--fail); }
ul.tests .timeout .m { color: var(--warn); }
ul.tests pre { white-space: pre-wrap; margin: 4px 0 4px 1.3em; font-size: 12px; color: #4a5568; background: #f7fafc; padding: 6px 8px; border-radius: 4px; }
.muted { color: var(--muted); }
a { color: var(--accent); }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
svg text { font-family: system-ui, sans-serif; }
@media (max-width: 900px) {
  .grid2, .submission .side { grid-template-columns: minmax(0, 1fr); }
}
@media (max-width: 600px) {
  body > header > div, main { padding: 0 12px; }
  header h1 { font-size: 21px; }
  section.card { padding: 12px 10px; }
  th, td { padding: 5px 4px; }
  #class { font-size: 13.5px; }
  #class [role=row] { grid-template-columns: minmax(0, 38fr) minmax(0, 24fr) minmax(0, 38fr); }
  #class .passed { display: none; }
  #class [role=cell], #class [role=columnheader] { padding: 5px 4px; }
  .stat { min-width: 100px; flex-basis: 100px; padding: 8px 10px; }
}
"""


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _points(value: float) -> str:
    return f"{value:g}"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


# Score ranges and their colours: the histogram, its legend and the table's cells agree.
BANDS = (("s-lo", "below 50 %", "#dd6b20"), ("s-mid", "50–79 %", "#d69e2e"), ("s-hi", "80 % and more", "#2f855a"))
UNSCORED_SHADE = {"never_loaded": "#718096", "grader_error": "#9b2c2c", "not_graded": "#cbd5e0"}


def _band(share: float) -> str:
    return "s-lo" if share < 0.5 else "s-mid" if share < 0.8 else "s-hi"


def histogram_svg(counts: Tally, width: int = 620, height: int = 250) -> str:
    """Scores in ten bins of 10 points (the last includes 100 %), then, after a gap, a bar for each
    kind of result without a score, so that a file that never loaded is not read as a low score."""
    bins = list(counts.bins)
    extra = [(kind, counts.categories[kind]) for kind in UNSCORED if kind == "never_loaded" or counts.categories[kind]]
    left, bottom, top, right = 44, 40, 18, 8
    plot_w, plot_h = width - left - right, height - top - bottom
    slots = BINS + len(extra) + 0.6  # the gap sets the unscored bars apart
    slot = plot_w / slots
    peak = max(bins + [c for _, c in extra] + [1])
    magnitude = 10 ** max(0, len(str(-(-peak // 5))) - 1)
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude * 5 >= peak)  # round grid lines
    ceiling = step * -(-peak // step)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="100%" style="max-width:{width}px;display:block" '
        f'role="img" aria-label="Histogram of scores" class="histogram">'
    ]
    for value in range(0, ceiling + 1, step):
        y = top + plot_h - plot_h * value / ceiling
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e2e8f0"/>')
        parts.append(f'<text x="{left - 8}" y="{y + 4:.1f}" font-size="11" fill="#718096" text-anchor="end">{value}</text>')
    bars = [
        (
            f"{i * 10}–{100 if i == BINS - 1 else i * 10 + 9}%",
            f"{i * 10}–{100 if i == BINS - 1 else i * 10 + 9}",
            count,
            dict((b[0], b[2]) for b in BANDS)[_band(i / BINS)],
            "bin",
            left + i * slot,
        )
        for i, count in enumerate(bins)
    ]
    bars += [
        (
            UNSCORED[kind],
            UNSCORED[kind].split(" (")[0],
            count,
            UNSCORED_SHADE[kind],
            f"unscored {kind}",
            left + (BINS + 0.6 + j) * slot,
        )
        for j, (kind, count) in enumerate(extra)
    ]
    for label, short, count, shade, kind, x0 in bars:
        x = x0 + 3
        h = plot_h * count / ceiling
        y = top + plot_h - h
        parts.append(
            f'<rect class="{kind}" data-count="{count}" x="{x:.1f}" y="{y:.1f}" width="{slot - 6:.1f}" height="{h:.1f}" '
            f'rx="3" fill="{shade}"><title>{label}: {_plural(count, "submission")}</title></rect>'
        )
        middle = x + (slot - 6) / 2
        if count:
            parts.append(
                f'<text x="{middle:.1f}" y="{y - 5:.1f}" font-size="12" font-weight="600" text-anchor="middle" fill="#2d3748">{count}</text>'
            )
        if kind == "bin":
            parts.append(
                f'<text x="{middle:.1f}" y="{top + plot_h + 16:.1f}" font-size="10" text-anchor="middle" fill="#4a5568">{short}</text>'
            )
        else:
            words = short.split()
            for k, word in enumerate(words):
                parts.append(
                    f'<text x="{middle:.1f}" y="{top + plot_h + 14 + 11 * k:.1f}" font-size="10" text-anchor="middle" fill="#4a5568">{word}</text>'
                )
    parts.append(f'<line x1="{left}" x2="{left + BINS * slot}" y1="{top + plot_h}" y2="{top + plot_h}" stroke="#718096"/>')
    parts.append(
        f'<text x="{left + BINS * slot / 2:.1f}" y="{height - 4}" font-size="12" text-anchor="middle" fill="#4a5568">score (% of the maximum)</text>'
    )
    parts.append(
        f'<text x="12" y="{top + plot_h / 2:.1f}" font-size="12" text-anchor="middle" fill="#4a5568" transform="rotate(-90 12 {top + plot_h / 2:.1f})">submissions</text>'
    )
    parts.append("</svg>")
    legend = [f'<li><i style="background:{shade}"></i>score {label}</li>' for _, label, shade in BANDS]
    legend += [f'<li><i style="background:{UNSCORED_SHADE[kind]}"></i>{UNSCORED[kind]}: no score</li>' for kind, _ in extra]
    return "".join(parts) + f'<ul class="legend" aria-label="Legend">{"".join(legend)}</ul>'


@dataclass
class PassRate:
    """How many of the graded submissions passed one test."""

    tier: str
    name: str
    passed: int = 0
    total: int = 0


def pass_rates(submissions: list[SubmissionResult]) -> list[PassRate]:
    """Per test, in the order tests first appear: how many of the graded submissions passed it."""
    rows: dict[tuple[str, str], PassRate] = {}
    for sub in submissions:
        if category(sub) != "graded":
            continue  # a file that never loaded says nothing about a test
        for test in sub.tests:
            row = rows.setdefault((test.tier, test.name), PassRate(test.tier, test.name))
            row.total += 1
            row.passed += test.status == Status.PASS
    return list(rows.values())


def _rate_bar(passed: int, total: int) -> str:
    share = passed / total if total else 0
    kind = "low" if share < 0.5 else "mid" if share < 0.8 else ""
    return f'<span class="bar" title="{share:.0%}"><i class="{kind}" style="width:{share * 100:.1f}%"></i></span>'


# What the submissions grouped under a diagnosis that names no model have in common, by its kind.
GROUP_SENTENCES = {
    "rules": "No model of a known mistake fits; the failing tests point to this rule first.",
    "constant": "One answer to every input we tried.",
    "no_answer": "Every call raised an error or ran out of time.",
    "unknown": "No model of a known mistake matches these submissions.",
}


def _diagnosis_html(diagnosis: Diagnosis | None) -> str:
    if not diagnosis:
        return ""
    # A model's id names the mistake; a rule-level diagnosis, the rules it points to (most likely first).
    label = diagnosis.mistake or (f"rules: {', '.join(diagnosis.rules)}" if diagnosis.rules else "")
    kind = "" if label else " none"
    name = f'<span class="mistake">{_e(label)}</span> ' if label else ""
    return f'<div class="diag{kind}">{name}{_e(diagnosis.text)}</div>'


def _code_html(source: str | None) -> str:
    if source is None:
        return '<p class="missing">The code of this submission was not recorded in results.json.</p>'
    lines = source.count("\n") + (not source.endswith("\n"))
    numbers = "\n".join(f'<span class="normal">{n}</span>' for n in range(1, lines + 1))
    return (
        f'<div class="code"><table class="codetable"><tr><td class="linenos"><div class="linenodiv"><pre>{numbers}'
        f'</pre></div></td><td class="code"><div><pre>{highlight_python(source)}</pre></div></td></tr></table></div>'
    )


# One pass of one regular expression: a class of 500 took 1.6 s with pygments' lexer and takes
# about 0.3 s this way. The spans use pygments' class names, so its stylesheet colours them.
_TOKENS = re.compile(
    r"(?P<c1>#[^\n]*)"
    r"|(?P<s>(?:\b[rRbBuUfF]{1,2})?(?:'''[\s\S]*?(?:'''|\Z)|\"\"\"[\s\S]*?(?:\"\"\"|\Z)"
    r"|'(?:\\.|[^'\\\n])*'?|\"(?:\\.|[^\"\\\n])*\"?))"
    r"|(?P<name>[^\W\d]\w*)"
    r"|(?P<m>(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?[jJ]?)"
    r"|(?P<o>[-+*/%=<>!&|^~@]+)"
)
_KINDS = {
    **{w: "nb" for w in dir(builtins) if not w.startswith("_")},
    **{w: "k" for w in keyword.kwlist},
    "True": "kc",
    "False": "kc",
    "None": "kc",
    "import": "kn",
    "from": "kn",
}
_NAMED = {"def": "nf", "class": "nc"}  # what the name after these keywords is


def highlight_python(source: str) -> str:
    """`source` as escaped HTML, with spans for keywords, defined names, strings, comments, numbers."""
    out, at, named = [], 0, None
    for match in _TOKENS.finditer(source):
        kind, text = match.lastgroup, match.group()
        if kind == "name":
            kind = named if named and text not in _KINDS else _KINDS.get(text)
            named = _NAMED.get(text)
        else:
            named = None
        out.append(html.escape(source[at : match.start()], quote=False))
        escaped = html.escape(text, quote=False)
        out.append(f'<span class="{kind}">{escaped}</span>' if kind else escaped)
        at = match.end()
    out.append(html.escape(source[at:], quote=False))
    return "".join(out)


def _tests_html(tests: list[TestResult]) -> str:
    if not tests:
        return '<p class="missing">No test ran.</p>'
    items = []
    for t in tests:
        detail = "\n".join(x for x in (t.message, ("printed: " + t.output) if t.output else "") if x)
        extra = f"<pre>{_e(detail)}</pre>" if detail and t.status != Status.PASS else ""
        items.append(
            f'<li class="{_e(t.status)}"><span class="m">{STATUS_MARK.get(t.status, "?")}</span>{_e(t.name)} '
            f'<span class="tier">{_e(t.tier)} · {_points(t.score)}/{_points(t.max_score)}</span>{extra}</li>'
        )
    return f'<ul class="tests">{"".join(items)}</ul>'


def _chip(sub: SubmissionResult) -> str:
    kind = category(sub)
    if kind == "not_graded":
        return '<span class="chip not_graded">not graded</span>'
    if kind != "graded":
        return f'<span class="chip error">{_e(UNSCORED[kind])}</span>'
    ok = sub.all_passed
    return f'<span class="chip {"pass" if ok else "fail"}">{"all passed" if ok else "failed tests"}</span>'


def _troubles(sub: SubmissionResult) -> list[str]:
    """What went wrong beyond wrong answers: the submission's own error, and tests that errored or timed out."""
    found = []
    if category(sub) not in ("graded", "not_graded"):
        found.append(f"{sub.status}: {sub.message}")
    elif category(sub) == "graded":
        by_status = Counter(t.status for t in sub.tests)
        for status in (Status.TIMEOUT, Status.ERROR):
            if by_status[status]:
                first = next(t for t in sub.tests if t.status == status)
                found.append(
                    f"{_plural(by_status[status], 'test')} {'timed out' if status == Status.TIMEOUT else 'raised an error'}, first {first.name}: {first.message.splitlines()[0] if first.message else ''}"
                )
    return found


def page_names(subs: list[SubmissionResult]) -> list[str]:
    """One file name per submission for its page, unique even on a case-insensitive file system."""
    used: set[str] = set()
    return [f"{unique_name(safe_name(sub.submission), used)}.html" for sub in subs]


def _sorted(run: ClassRun) -> list[SubmissionResult]:
    return sorted(run.submissions, key=lambda s: s.submission)


def _head(title: str, csp: str, style: str = "") -> list[str]:
    return [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title>",
        f"<style>{CSS}{style}</style>",
        "</head><body>",
    ]


ISOLATION_TEXT = {
    "bubblewrap": "Isolation: bubblewrap. Every submission ran in a cell of its own: its own namespaces, tmpfs, uid, "
    "cgroup and seccomp filter, none of it left for the next.",
    "separate-uid": "Isolation: separate-uid (root without a usable bubblewrap). Submissions ran as a uid of their "
    "own, chrooted into a copy of the standard library, under a seccomp filter: no view of the kit, the class or "
    "the outputs.",
    "none": "NOT ISOLATED: this run used --no-sandbox. Submissions ran as the instructor's user and could "
    "read the hidden tests, the reference, other submissions and any of that user's files.",
}


def _isolation_banner(run: ClassRun) -> str:
    """The isolation mode of the run: quiet for bubblewrap, a loud alert for anything less.

    The run's own note (what each submission got on that machine) comes first where it has one.
    """
    mode = run.isolation
    note = run.isolation_note or ""
    if mode == "bubblewrap":
        return f'<div class="banner ok" id="isolation" data-isolation="bubblewrap">{_e(note or ISOLATION_TEXT[mode])}</div>'
    text = (
        note
        or ISOLATION_TEXT.get(mode)
        or (
            f"Isolation: {mode}, not bubblewrap. Submissions did not run in the bubblewrap sandbox."
            if mode
            else "Isolation: not recorded. These results do not say whether submissions ran in a sandbox."
        )
    )
    return f'<div class="banner loud" id="isolation" data-isolation="{_e(mode)}" role="alert">{_e(text)}</div>'


def _unwritten_banner(run: ClassRun) -> str:
    """The outputs this run could not write, with each one's error."""
    unwritten = run.unwritten or []
    if not unwritten:
        return ""
    items = "".join(f"<li>{_e(u.output)}: {_e(u.error)}</li>" for u in unwritten)
    return (
        f'<div class="banner note" id="unwritten" role="alert">Not written: {_plural(len(unwritten), "output")} '
        f"of this run failed; every other file was written.<ul>{items}</ul></div>"
    )


def _score_cell(sub: SubmissionResult) -> str:
    kind = category(sub)
    if kind != "graded":
        return f'<div role="cell" class="score s-none">–<br><small>{_e(UNSCORED[kind])}</small></div>'
    share = fraction(sub)
    was = f" (tests: {_points(sub.score)})" if sub.adjusted_score is not None else ""
    return (
        f'<div role="cell" class="score {_band(share)}">{_points(sub.final_score)}/{_points(sub.max_score)}'
        f"<br><small>{share:.0%}{was}</small></div>"
    )


def render(run: ClassRun, title: str) -> str:
    """report.html: the class at a glance, and one sortable row per student linking to their page; `title`: the exercise's."""
    subs = _sorted(run)
    names = page_names(subs)
    counts = tally(subs)
    scored = [fraction(s) for s in subs if category(s) == "graded"]
    troubled = [(i, s, _troubles(s)) for i, s in enumerate(subs)]
    troubled = [row for row in troubled if row[2]]
    max_score = max((s.max_score for s in subs), default=0)

    out = _head(f"{title} — class report", OVERVIEW_CSP)
    out += [
        f"<header><div><h1>{_e(title)} — class report</h1>"
        f"<p>{_plural(counts.total, 'submission')}, {counts.graded} graded</p></div></header>",
        "<main>",
        _isolation_banner(run),
        _unwritten_banner(run),
        report_banner(run),
    ]
    if counts.categories["not_graded"]:
        out.append(
            f'<div class="banner note" id="interrupted">This run was interrupted: {_plural(counts.categories["not_graded"], "submission")} '
            "not graded. Run the same command again to grade them.</div>"
        )
    stats = [
        (counts.total, "submissions", "total"),
        (counts.graded, "graded", "graded"),
        (f"{mean(scored) * 100:.0f}%" if scored else "–", "mean score of the graded", "mean"),
        (f"{median(scored) * 100:.0f}%" if scored else "–", "median score of the graded", "median"),
        (counts.all_passed, "passed every test", "all-passed"),
        (counts.categories["never_loaded"], "never loaded", "never-loaded"),
    ]
    stats += [
        (counts.categories[k], UNSCORED[k], k.replace("_", "-")) for k in ("grader_error", "not_graded") if counts.categories[k]
    ]
    out.append(
        '<div class="stats">'
        + "".join(f'<div class="stat" id="stat-{key}"><b>{value}</b><span>{label}</span></div>' for value, label, key in stats)
        + "</div>"
    )

    out.append('<div class="grid2">')
    out.append(
        f'<section class="card" id="histogram"><h2>Scores</h2>{histogram_svg(counts)}'
        f'<p class="muted">Maximum {_points(max_score)} points.</p></section>'
    )
    texts: dict[str, Diagnosis] = {}
    for s in subs:
        if s.diagnosis is not None:
            texts.setdefault(s.diagnosis.key, s.diagnosis)
    out.append('<section class="card" id="diagnoses"><h2>Most common diagnoses</h2>')
    if counts.mistakes:
        rows = []
        for key, count in sorted(counts.mistakes.items(), key=lambda kv: (-kv[1], kv[0])):
            d = texts[key]
            sentence = d.message if d.mistake else GROUP_SENTENCES.get(d.kind, GROUP_SENTENCES["unknown"])
            rows.append(
                f'<tr><td class="num"><b>{count}</b></td><td><span class="mistake">{_e(key)}</span><br>{_e(sentence)}</td></tr>'
            )
        head = '<table><tr><th class="num">count</th><th>diagnosis</th></tr>'
        out.append(head + "".join(rows[:TOP_DIAGNOSES]) + "</table>")
        if rows[TOP_DIAGNOSES:]:
            out.append(
                f"<details><summary>{len(rows) - TOP_DIAGNOSES} more diagnoses</summary>{head}{''.join(rows[TOP_DIAGNOSES:])}</table></details>"
            )
        out.append('<p class="muted">Sort the class by diagnosis below to see who.</p>')
    else:
        out.append('<p class="muted">No submission got a diagnosis.</p>')
    out.append("</section></div>")

    rates = pass_rates(subs)
    out.append('<section class="card" id="pass-rates"><h2>Pass rate per test</h2>')
    if rates:
        out.append('<table><tr><th>test</th><th>tier</th><th>pass rate</th><th class="num">passed</th></tr>')
        for row in rates:
            out.append(
                f'<tr><td>{_e(row.name)}</td><td class="tier">{_e(row.tier)}</td><td>{_rate_bar(row.passed, row.total)}</td>'
                f'<td class="num">{row.passed}/{row.total}</td></tr>'
            )
        out.append("</table>")
    else:
        out.append('<p class="muted">No test ran.</p>')
    out.append("</section>")

    out.append('<section class="card" id="errors"><h2>Errors and timeouts</h2>')
    if troubled:
        listed = "".join(
            f'<tr><td><a href="{PAGES}/{_e(names[i])}">{_e(s.submission)}</a></td><td>{"<br>".join(_e(x) for x in found)}</td></tr>'
            for i, s, found in troubled
        )
        table = f"<table><tr><th>submission</th><th>what happened</th></tr>{listed}</table>"
        if len(troubled) > TROUBLES_OPEN:
            table = f"<details><summary>{_plural(len(troubled), 'submission')} errored or timed out</summary>{table}</details>"
        out.append(table)
    else:
        out.append('<p class="muted">No submission errored or timed out.</p>')
    out.append("</section>")

    out.append(_similar_html(run, dict(zip((s.submission for s in subs), names))))

    out.append(
        '<section class="card" id="submissions"><h2>Submissions</h2>'
        '<p class="muted">Sort with the column headings; each name opens that student\'s code and tests.</p>'
        '<p class="sr" id="sorted" aria-live="polite"></p>'
        '<div id="class" role="table" aria-label="Submissions"><div role="rowgroup"><div role="row">'
        '<div role="columnheader" aria-sort="ascending"><button type="button" data-key="name">Name</button></div>'
        '<div role="columnheader"><button type="button" data-key="score">Score</button></div>'
        '<div role="columnheader" class="passed num">Tests passed</div>'
        '<div role="columnheader"><button type="button" data-key="diagnosis">Diagnosis</button></div>'
        '</div></div><div role="rowgroup" class="rows">'
    )
    rows = []
    for s, page in zip(subs, names):
        name = s.submission
        key = mistake_key(s) or ""
        kind = category(s)
        score = f"{fraction(s):.4f}" if kind == "graded" else "-1"
        passed = f"{sum(t.status == Status.PASS for t in s.tests)}/{len(s.tests)}" if kind == "graded" else ""
        rows.append(
            f'<div role="row" data-name="{_e(name.casefold())}" data-score="{score}" data-diag="{_e(key)}">'
            f'<div role="cell"><a href="{PAGES}/{_e(page)}">{_e(name)}</a>{_flags(s)}</div>{_score_cell(s)}'
            f'<div role="cell" class="passed num">{passed}</div><div role="cell" class="mistake">{_e(key)}</div></div>'
        )
    out.append("".join(rows))
    out.append(f"</div></div></section></main><script>{SORT_SCRIPT}</script></body></html>")
    return "\n".join(x for x in out if x)


def _flags(sub: SubmissionResult) -> str:
    """Beside a name in the table: late, and a note on the file graded (its text on the student's page)."""
    late = ' <span class="chip not_graded">late</span>' if sub.student is not None and sub.student.late else ""
    note = f' <span class="chip not_graded" title="{_e(sub.note)}">note</span>' if sub.note else ""
    return late + note


def _identity_html(sub: SubmissionResult) -> str:
    """Who the submission is from, as the LMS download says, and any note on the file graded."""
    student = sub.student
    parts = []
    if student is not None:
        labels = (
            (student.name, "name"),
            (student.login, "login"),
            (student.lms_id, "LMS id"),
            (student.email, "email"),
            (student.submitted_at, "submitted"),
            (student.layout, "from"),
            (student.path, "path"),
        )
        parts = [f"{label} {_e(value)}" for value, label in labels if value not in (None, "")]
        if student.late:
            parts.append("<b>late</b>")
    line = f'<p class="muted">{" · ".join(parts)}</p>' if parts else ""
    if sub.note:
        line += f'<p class="diag none">Note: {_e(sub.note)}</p>'
    return line


def _similar_html(run: ClassRun, pages: dict[str, str]) -> str:
    """Pairs of submissions whose code overlaps, found by the similarity check (results.json "similar")."""
    pairs = run.similar or []
    out = ['<section class="card" id="similar"><h2>Similar code</h2>']
    note = run.similar_note
    if run.similar is None:
        out.append(f'<p class="muted">Similar code was not checked in this run. {_e(note)}</p></section>')
        return "".join(out)
    if not pairs:
        out.append(f'<p class="muted">No two submissions share enough code to flag. {_e(note)}</p></section>')
        return "".join(out)

    def link(name: str) -> str:
        page = pages.get(name)
        return f'<a href="{PAGES}/{_e(page)}">{_e(name)}</a>' if page else _e(name)

    shown = pairs[:SIMILAR_SHOWN]
    more = f" The first {len(shown)} are shown; results.json lists them all." if len(pairs) > len(shown) else ""
    out.append(
        f'<p class="muted">{_plural(len(pairs), "pair")} flagged, most overlap first: the same code, or the '
        f"same code with names, comments or layout changed (copydetect, starter code ignored).{more} "
        f"A flag is a reason to look, not a verdict. {_e(note)}</p>"
    )
    out.append('<table><tr><th>first</th><th>second</th><th class="num">overlap</th></tr>')
    for pair in shown:
        label = "identical" if pair.identical else f"{pair.overlap:.0%}"
        out.append(f'<tr><td>{link(pair.a)}</td><td>{link(pair.b)}</td><td class="num"><b>{_e(label)}</b></td></tr>')
    out.append("</table></section>")
    return "".join(out)


def student_page(sub: SubmissionResult, title: str, similar: list[SimilarPair] | None = None) -> str:
    """One student's page: their score, diagnosis, code side by side with every test's result."""
    name = sub.submission
    out = _head(f"{name} — {title}", CSP, _CODE_STYLE)
    message = f'<p class="muted">{_e(sub.message)}</p>' if sub.message else ""
    twins = ""
    if similar:
        others = ", ".join(
            f"{_e(p.b if p.a == name else p.a)} ({'identical' if p.identical else format(p.overlap, '.0%')})"
            for p in similar[:SIMILAR_SHOWN_PER_STUDENT]
        )
        if len(similar) > SIMILAR_SHOWN_PER_STUDENT:
            others += f" and {len(similar) - SIMILAR_SHOWN_PER_STUDENT} more"
        twins = f'<p class="diag none" id="similar">Similar code: {others}</p>'
    out += [
        f'<header><div><p><a href="../report.html">← {_e(title)} — class report</a></p><h1>{_e(name)}</h1></div></header>',
        "<main>",
        f'<section class="card submission" style="margin-top:-40px"><header><b>{_points(sub.final_score)}/{_points(sub.max_score)}</b>{_chip(sub)}</header>{_identity_html(sub)}{message}'
        f"{adjustments_html(sub)}{_diagnosis_html(sub.diagnosis)}{twins}"
        f'<div class="side"><div>{_code_html(sub.source)}</div><div>{_tests_html(sub.tests)}</div></div></section>',
        "</main></body></html>",
    ]
    return "\n".join(out)


def pages(run: ClassRun, title: str) -> dict[str, str]:
    """Every student's page, by file name in the report/ folder; `title`: the exercise's."""
    subs = _sorted(run)
    similar: dict[str, list[SimilarPair]] = {}
    for pair in run.similar or []:
        similar.setdefault(pair.a, []).append(pair)
        similar.setdefault(pair.b, []).append(pair)
    return {page: student_page(s, title, similar.get(s.submission)) for s, page in zip(subs, page_names(subs))}
