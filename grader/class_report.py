"""The instructor's class report: one self-contained HTML file rendered from results.json.

It never decides a verdict: it only draws what the batch grader recorded. Everything is
inline (styles, the SVG chart, highlighted code), and a Content-Security-Policy forbids any
request and any script, so the file works offline and student code in it cannot run.
"""

from __future__ import annotations

import builtins
import html
import keyword
import re
from collections import Counter, defaultdict
from statistics import mean, median
from typing import Any

from pygments.formatters import HtmlFormatter

from grader import diagnosis_core, exercise

BINS = 10
STATUS_MARK = {"pass": "✓", "fail": "✗", "error": "!", "timeout": "⏱", "not_run": "–"}
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
_FORMATTER = HtmlFormatter(cssclass="code", linenos="table", style="friendly")

CSS = """
:root { --ink: #1f2933; --muted: #616e7c; --line: #e4e7eb; --bg: #f5f7fa; --card: #fff;
  --pass: #2f855a; --fail: #c53030; --warn: #b7791f; --accent: #2b6cb0; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", "Liberation Sans", Arial, sans-serif; color: var(--ink); background: var(--bg); }
body > header { background: #1a365d; color: #fff; padding: 28px 0 56px; }
body > header > div { max-width: 1180px; margin: 0 auto; padding: 0 32px; }
header h1 { margin: 0 0 4px; font-size: 26px; font-weight: 650; }
header p { margin: 0; color: #bee3f8; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 32px 60px; }
.stats { display: flex; gap: 14px; flex-wrap: wrap; margin: -58px 0 24px; }
.stat { background: var(--card); border-radius: 10px; padding: 12px 18px; min-width: 150px; box-shadow: 0 1px 3px rgba(0,0,0,.12); }
.stat b { display: block; font-size: 24px; }
.stat span { color: var(--muted); font-size: 13px; }
section.card { background: var(--card); border-radius: 10px; padding: 18px 24px 20px; margin: 0 0 22px; box-shadow: 0 1px 3px rgba(0,0,0,.08); }
h2 { font-size: 19px; margin: 0 0 12px; }
h3 { font-size: 17px; margin: 0; }
table { border-collapse: collapse; width: 100%; font: inherit; }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: 12px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.grid2 { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 22px; align-items: start; }
.bar { background: #edf2f7; border-radius: 4px; height: 12px; width: 160px; overflow: hidden; display: inline-block; vertical-align: middle; }
.bar i { display: block; height: 100%; background: var(--pass); }
.bar i.low { background: var(--fail); } .bar i.mid { background: var(--warn); }
.tier { font-size: 12px; color: var(--muted); }
.chip { display: inline-block; border-radius: 999px; padding: 1px 9px; font-size: 12px; font-weight: 600; }
.chip.pass { background: #c6f6d5; color: #22543d; } .chip.fail { background: #fed7d7; color: #742a2a; }
.chip.error, .chip.timeout { background: #feebc8; color: #7b341e; }
.diag { border-left: 4px solid var(--accent); background: #ebf8ff; padding: 8px 12px; border-radius: 0 6px 6px 0; margin: 10px 0; }
.diag.none { border-color: var(--muted); background: #f7fafc; }
.mistake { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 13px; color: var(--accent); }
nav.toc { columns: 3; column-gap: 24px; }
nav.toc a { display: flex; justify-content: space-between; gap: 8px; text-decoration: none; color: var(--ink); padding: 2px 4px; border-radius: 4px; }
nav.toc a:hover { background: #edf2f7; }
.submission { scroll-margin-top: 12px; }
.submission header { all: unset; display: flex; align-items: baseline; gap: 12px; margin-bottom: 6px; }
.submission .side { display: grid; grid-template-columns: minmax(0, 1.15fr) minmax(0, 1fr); gap: 18px; align-items: start; }
.code { font-size: 12.5px; overflow: auto; max-height: 560px; border: 1px solid var(--line); border-radius: 6px; }
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
svg text { font-family: system-ui, sans-serif; }
"""


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _points(value: float) -> str:
    return f"{value:g}"


def _fraction(sub: dict) -> float:
    top = sub.get("max_score") or 0
    return (sub.get("score") or 0) / top if top else 0.0


def _anchor(index: int) -> str:
    return f"sub-{index + 1}"


def histogram_svg(fractions: list[float], width: int = 560, height: int = 250) -> str:
    """Scores as a bar chart: ten bins of 10 percentage points, the last one including 100%."""
    counts = [0] * BINS
    for f in fractions:
        counts[min(int(f * BINS), BINS - 1)] += 1
    left, bottom, top, right = 44, 40, 18, 12
    plot_w, plot_h = width - left - right, height - top - bottom
    peak = max(counts + [1])
    step = max(1, -(-peak // 5))  # about five grid lines
    ceiling = step * -(-peak // step)
    slot = plot_w / BINS
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="100%" style="max-width:{width}px;display:block" '
        f'role="img" aria-label="Histogram of scores" class="histogram">'
    ]
    for value in range(0, ceiling + 1, step):
        y = top + plot_h - plot_h * value / ceiling
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e2e8f0"/>')
        parts.append(f'<text x="{left - 8}" y="{y + 4:.1f}" font-size="11" fill="#718096" text-anchor="end">{value}</text>')
    for i, count in enumerate(counts):
        x = left + i * slot + 4
        h = plot_h * count / ceiling
        y = top + plot_h - h
        shade = "#2f855a" if i >= 8 else "#3182ce" if i >= 5 else "#dd6b20"
        label = f"{i * 10}–{100 if i == BINS - 1 else i * 10 + 9}%"
        parts.append(
            f'<rect class="bin" data-count="{count}" x="{x:.1f}" y="{y:.1f}" width="{slot - 8:.1f}" height="{h:.1f}" '
            f'rx="3" fill="{shade}"><title>{label}: {count} submission{"s" if count != 1 else ""}</title></rect>'
        )
        if count:
            parts.append(f'<text x="{x + (slot - 8) / 2:.1f}" y="{y - 5:.1f}" font-size="12" font-weight="600" text-anchor="middle" fill="#2d3748">{count}</text>')
        parts.append(f'<text x="{x + (slot - 8) / 2:.1f}" y="{top + plot_h + 16:.1f}" font-size="11" text-anchor="middle" fill="#4a5568">{label}</text>')
    parts.append(f'<line x1="{left}" x2="{width - right}" y1="{top + plot_h}" y2="{top + plot_h}" stroke="#718096"/>')
    parts.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 4}" font-size="12" text-anchor="middle" fill="#4a5568">score (% of the maximum)</text>')
    parts.append(f'<text x="12" y="{top + plot_h / 2:.1f}" font-size="12" text-anchor="middle" fill="#4a5568" transform="rotate(-90 12 {top + plot_h / 2:.1f})">submissions</text>')
    parts.append("</svg>")
    return "".join(parts)


def pass_rates(submissions: list[dict]) -> list[dict]:
    """Per test, in the order tests first appear: how many of the submissions that ran it passed."""
    rows: dict[tuple[str, str], dict] = {}
    for sub in submissions:
        for test in sub.get("tests", []):
            row = rows.setdefault((test.get("tier", ""), test["name"]), {"tier": test.get("tier", ""), "name": test["name"], "passed": 0, "total": 0})
            row["total"] += 1
            row["passed"] += test.get("status") == "pass"
    return list(rows.values())


def _rate_bar(passed: int, total: int) -> str:
    share = passed / total if total else 0
    kind = "low" if share < 0.5 else "mid" if share < 0.8 else ""
    return f'<span class="bar" title="{share:.0%}"><i class="{kind}" style="width:{share * 100:.1f}%"></i></span>'


def _diagnosis_html(diagnosis: dict | None) -> str:
    if not diagnosis:
        return ""
    kind = "" if diagnosis.get("mistake") else " none"
    name = f'<span class="mistake">{_e(diagnosis["mistake"])}</span> ' if diagnosis.get("mistake") else ""
    text = diagnosis.get("text") or diagnosis_core.full_text({"example": None, **diagnosis})
    return f'<div class="diag{kind}">{name}{_e(text)}</div>'


def _code_html(source: str | None) -> str:
    if source is None:
        return '<p class="missing">The code of this submission was not recorded in results.json.</p>'
    lines = source.count("\n") + (not source.endswith("\n"))
    numbers = "\n".join(f'<span class="normal">{n}</span>' for n in range(1, lines + 1))
    return (f'<div class="code"><table class="codetable"><tr><td class="linenos"><div class="linenodiv"><pre>{numbers}'
            f'</pre></div></td><td class="code"><div><pre>{highlight_python(source)}</pre></div></td></tr></table></div>')


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
_KINDS = {**{w: "nb" for w in dir(builtins) if not w.startswith("_")}, **{w: "k" for w in keyword.kwlist},
          "True": "kc", "False": "kc", "None": "kc", "import": "kn", "from": "kn"}
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


def _tests_html(tests: list[dict]) -> str:
    if not tests:
        return '<p class="missing">No test ran.</p>'
    items = []
    for t in tests:
        status = t.get("status", "not_run")
        detail = "\n".join(x for x in (t.get("message", ""), ("printed: " + t["output"]) if t.get("output") else "") if x)
        extra = f"<pre>{_e(detail)}</pre>" if detail and status != "pass" else ""
        items.append(
            f'<li class="{_e(status)}"><span class="m">{STATUS_MARK.get(status, "?")}</span>{_e(t["name"])} '
            f'<span class="tier">{_e(t.get("tier", ""))} · {_points(t.get("score", 0))}/{_points(t.get("max_score", 0))}</span>{extra}</li>'
        )
    return f'<ul class="tests">{"".join(items)}</ul>'


def _chip(sub: dict) -> str:
    status = sub.get("status", "graded")
    if status != "graded":
        return f'<span class="chip {_e(status) if status in ("error", "timeout") else "error"}">{_e(status)}</span>'
    tests = sub.get("tests", [])
    ok = tests and all(t.get("status") == "pass" for t in tests)
    return f'<span class="chip {"pass" if ok else "fail"}">{"all passed" if ok else "failed tests"}</span>'


def _troubles(sub: dict) -> list[str]:
    """What went wrong beyond wrong answers: the submission's own error, and tests that errored or timed out."""
    found = []
    if sub.get("status", "graded") != "graded":
        found.append(f"{sub.get('status')}: {sub.get('message', '')}")
    by_status = Counter(t.get("status") for t in sub.get("tests", []))
    for status in ("timeout", "error"):
        if by_status[status]:
            first = next(t for t in sub["tests"] if t.get("status") == status)
            found.append(f"{by_status[status]} test{'s' if by_status[status] != 1 else ''} {'timed out' if status == 'timeout' else 'raised an error'}, first {first['name']}: {first.get('message', '').splitlines()[0] if first.get('message') else ''}")
    return found


ISOLATION_TEXT = {
    "bubblewrap": "Isolation: bubblewrap. Every submission ran in its own jail.",
    "separate-uid": "Isolation: separate-uid (root without a usable bubblewrap). Submissions ran as an "
    "unprivileged uid, chrooted into a copy of the standard library: no view of the kit, the class or the "
    "outputs. They could still use the network.",
    "none": "NOT ISOLATED: this run used --no-sandbox. Submissions ran as the instructor's user and could "
    "read the hidden tests, the reference, other submissions and any of that user's files.",
}


def _isolation_html(results: dict) -> str:
    mode = str(results.get("isolation", ""))
    if not mode:
        return ""
    text = ISOLATION_TEXT.get(mode, f"Isolation: {mode}")
    kind = "" if mode == "bubblewrap" else " none"
    return f'<p class="diag{kind}" id="isolation" data-isolation="{_e(mode)}">{_e(text)}</p>'


def render(results: dict) -> str:
    """The whole report.html from a results.json dict."""
    subs = sorted(results.get("submissions", []), key=lambda s: str(s.get("submission", "")))
    title = results.get("title") or exercise.load().title
    fractions = [_fraction(s) for s in subs]
    all_pass = sum(1 for s in subs if s.get("status", "graded") == "graded" and s.get("tests") and all(t.get("status") == "pass" for t in s["tests"]))
    troubled = [(i, s, _troubles(s)) for i, s in enumerate(subs)]
    troubled = [row for row in troubled if row[2]]
    max_score = max((s.get("max_score") or 0 for s in subs), default=0)

    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)} — class report</title>",
        f"<style>{CSS}{_FORMATTER.get_style_defs('.code')}</style>",
        "</head><body>",
        f"<header><div><h1>{_e(title)} — class report</h1><p>{len(subs)} submission{'s' if len(subs) != 1 else ''} graded</p></div></header>",
        "<main>",
        _isolation_html(results),
        '<div class="stats">',
        f'<div class="stat"><b>{len(subs)}</b><span>submissions</span></div>',
        f'<div class="stat"><b>{mean(fractions) * 100:.0f}%</b><span>mean score</span></div>' if subs else "",
        f'<div class="stat"><b>{median(fractions) * 100:.0f}%</b><span>median score</span></div>' if subs else "",
        f'<div class="stat"><b>{all_pass}</b><span>passed every test</span></div>',
        f'<div class="stat"><b>{len(troubled)}</b><span>errored or timed out</span></div>',
        "</div>",
    ]

    rates = pass_rates(subs)
    out.append('<div class="grid2">')
    out.append(f'<section class="card" id="histogram"><h2>Scores</h2>{histogram_svg(fractions)}'
               f'<p class="muted">Maximum {_points(max_score)} points.</p></section>')

    groups: dict[str, list[int]] = defaultdict(list)
    texts: dict[str, dict] = {}
    for i, s in enumerate(subs):
        d = s.get("diagnosis")
        if d:
            key = d.get("mistake") or ("(no answer)" if d.get("kind") == "no_answer" else "(no known mistake)")
            groups[key].append(i)
            texts.setdefault(key, d)
    out.append('<section class="card" id="diagnoses"><h2>Most common diagnoses</h2>')
    if groups:
        out.append('<table><tr><th class="num">count</th><th>diagnosis</th></tr>')
        for key, members in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            d = texts[key]
            sentence = d.get("message", "") if d.get("mistake") else (
                "Every call raised an error or ran out of time." if d.get("kind") == "no_answer"
                else "No model of a known mistake matches these submissions.")
            links = ", ".join(f'<a href="#{_anchor(i)}">{_e(subs[i].get("submission", ""))}</a>' for i in members)
            out.append(f'<tr><td class="num"><b>{len(members)}</b></td><td><span class="mistake">{_e(key)}</span><br>{_e(sentence)}<br><span class="muted">{links}</span></td></tr>')
        out.append("</table>")
    else:
        out.append('<p class="muted">No submission got a diagnosis.</p>')
    out.append("</section></div>")

    out.append('<section class="card" id="pass-rates"><h2>Pass rate per test</h2>')
    if rates:
        out.append('<table><tr><th>test</th><th>tier</th><th>pass rate</th><th class="num">passed</th></tr>')
        for row in rates:
            out.append(f'<tr><td>{_e(row["name"])}</td><td class="tier">{_e(row["tier"])}</td><td>{_rate_bar(row["passed"], row["total"])}</td>'
                       f'<td class="num">{row["passed"]}/{row["total"]}</td></tr>')
        out.append("</table>")
    else:
        out.append('<p class="muted">No test ran.</p>')
    out.append("</section>")

    out.append('<section class="card" id="errors"><h2>Errors and timeouts</h2>')
    if troubled:
        out.append("<table><tr><th>submission</th><th>what happened</th></tr>")
        for i, s, found in troubled:
            out.append(f'<tr><td><a href="#{_anchor(i)}">{_e(s.get("submission", ""))}</a></td><td>{"<br>".join(_e(x) for x in found)}</td></tr>')
        out.append("</table>")
    else:
        out.append('<p class="muted">No submission errored or timed out.</p>')
    out.append("</section>")

    out.append('<section class="card" id="submissions"><h2>Submissions</h2><nav class="toc">')
    for i, s in enumerate(subs):
        out.append(f'<a href="#{_anchor(i)}"><span>{_e(s.get("submission", ""))}</span><span class="muted">{_points(s.get("score", 0))}/{_points(s.get("max_score", 0))}</span></a>')
    out.append("</nav></section>")

    for i, s in enumerate(subs):
        message = f'<p class="muted">{_e(s["message"])}</p>' if s.get("message") else ""
        out.append(
            f'<section class="card submission" id="{_anchor(i)}"><header><h3>{_e(s.get("submission", ""))}</h3>'
            f'<b>{_points(s.get("score", 0))}/{_points(s.get("max_score", 0))}</b>{_chip(s)}'
            f'<a href="#submissions" class="muted">back to the list</a></header>{message}'
            f'{_diagnosis_html(s.get("diagnosis"))}'
            f'<div class="side"><div>{_code_html(s.get("source"))}</div><div>{_tests_html(s.get("tests", []))}</div></div></section>'
        )
    out.append("</main></body></html>")
    return "\n".join(x for x in out if x)
