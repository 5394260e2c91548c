"""`meteor-kit audit`'s report, in the terminal and as one self-contained HTML page: it draws the checks, never decides one.

The page is one file, like report.html: inline styles, no script, and a Content-Security-Policy
that allows no request. Every text in it is escaped (a witness quotes answers and inputs).
"""

from __future__ import annotations

import html

from grader.core.safe_text import for_terminal

MARK = {"pass": "PASS", "fail": "FAIL", "skipped": "SKIP"}
COLOR = {"pass": "\033[1;32m", "fail": "\033[1;31m", "skipped": "\033[2m"}
SURVIVORS_SHOWN = 20  # in the terminal; the page shows them all
CSP = "default-src 'none'; style-src 'unsafe-inline'"


def render_terminal(audit: dict, color: bool = False) -> str:
    """Each check on one line, its details below it; the survivors with their diffs."""
    lines = [f"Audit of {audit['title']} ({audit['folder']})", ""]
    for check in audit["checks"]:
        mark = MARK[check["status"]]
        if color:
            mark = f"{COLOR[check['status']]}{mark}\033[0m"
        took = f"  ({check['seconds']:g} s)" if check["seconds"] else ""
        lines.append(f"{mark}  {check['title']}: {check['reason']}{took}")
        lines += [f"      {line}" for line in check["details"]]
        lines += _survivors(check["survivors"])
    failed = sum(check["status"] == "fail" for check in audit["checks"])
    verdict = "the exercise passes the audit" if audit["passed"] else f"{failed} check(s) failed"
    lines += ["", f"{verdict} ({audit['seconds']:g} s)"]
    return for_terminal("\n".join(lines))


def _survivors(survivors: list[dict]) -> list[str]:
    """Those the tests miss, each with its witness and diff; the likely equivalent ones, a line each."""
    lines = []
    for survivor in (s for s in survivors if s["verdict"] != "likely equivalent"):
        lines.append(f"      - {survivor['what']}: {survivor['verdict']}: {survivor['witness']}")
        lines += [f"          {line}" for line in survivor["diff"].splitlines() if not line.startswith(("---", "+++"))]
    equivalent = [s for s in survivors if s["verdict"] == "likely equivalent"]
    if equivalent:
        shown = "; ".join(s["what"] for s in equivalent[:SURVIVORS_SHOWN])
        more = f"; and {len(equivalent) - SURVIVORS_SHOWN} more" if len(equivalent) > SURVIVORS_SHOWN else ""
        lines.append(f"      likely equivalent ({len(equivalent)}, their diffs in --html FILE): {shown}{more}")
    return lines


CSS = """
:root { color-scheme: light dark; --ink: #1a202c; --muted: #4a5568; --bg: #f7fafc; --card: #fff; --line: #e2e8f0;
  --pass: #22543d; --pass-bg: #c6f6d5; --fail: #742a2a; --fail-bg: #fed7d7; --skip: #2d3748; --skip-bg: #e2e8f0;
  --add: #e6ffed; --del: #ffeef0; }
@media (prefers-color-scheme: dark) {
  :root { --ink: #e2e8f0; --muted: #a0aec0; --bg: #1a202c; --card: #2d3748; --line: #4a5568;
    --pass: #c6f6d5; --pass-bg: #22543d; --fail: #fed7d7; --fail-bg: #742a2a; --skip: #e2e8f0; --skip-bg: #4a5568;
    --add: #1c4532; --del: #63171b; }
}
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", Arial, sans-serif;
  color: var(--ink); background: var(--bg); overflow-wrap: anywhere; }
main { max-width: 1100px; margin: 0 auto; padding: 24px 20px 60px; }
h1 { font-size: 26px; margin: 0 0 4px; } h2 { font-size: 19px; margin: 0; } h3 { font-size: 16px; margin: 14px 0 6px; }
p.where { color: var(--muted); margin: 0 0 16px; }
.verdict { border-radius: 8px; padding: 10px 16px; font-weight: 650; margin: 0 0 20px; }
section { background: var(--card); border-radius: 8px; padding: 14px 18px; margin: 0 0 16px; border: 1px solid var(--line); }
.status { display: inline-block; min-width: 4.2em; text-align: center; border-radius: 999px; padding: 1px 10px;
  font-size: 13px; font-weight: 700; margin-right: 8px; }
.pass { background: var(--pass-bg); color: var(--pass); } .fail { background: var(--fail-bg); color: var(--fail); }
.skipped { background: var(--skip-bg); color: var(--skip); }
.reason { margin: 6px 0 0; } .took { color: var(--muted); font-size: 14px; }
ul.details { margin: 8px 0 0; padding-left: 20px; } ul.details li { margin: 2px 0; }
pre { white-space: pre-wrap; font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; margin: 6px 0;
  padding: 8px 10px; border-radius: 6px; border: 1px solid var(--line); overflow-x: auto; }
pre .add { background: var(--add); display: block; } pre .del { background: var(--del); display: block; }
details { border-top: 1px solid var(--line); padding: 6px 0; }
summary { cursor: pointer; padding: 2px 0; } summary:focus-visible { outline: 3px solid #2b6cb0; outline-offset: 2px; }
.witness { margin: 4px 0; }
"""


def render_html(audit: dict) -> str:
    """The page: a verdict, then one section per check, the survivors each with its diff and witness."""
    e = html.escape
    failed = sum(check["status"] == "fail" for check in audit["checks"])
    verdict = "The exercise passes the audit." if audit["passed"] else f"{failed} check(s) failed."
    sections = "\n".join(_section(check) for check in audit["checks"])
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<title>Audit of {e(audit["title"])}</title>
<style>{CSS}</style>
</head>
<body>
<main>
<h1>Audit of {e(audit["title"])}</h1>
<p class="where">{e(audit["folder"])} · {audit["seconds"]:g} s</p>
<p class="verdict {"pass" if audit["passed"] else "fail"}" role="status">{e(verdict)}</p>
{sections}
</main>
</body>
</html>
"""


def _section(check: dict) -> str:
    e = html.escape
    took = f' <span class="took">{check["seconds"]:g} s</span>' if check["seconds"] else ""
    details = "".join(f"<li>{e(line)}</li>" for line in check["details"])
    survivors = "".join(_survivor(s) for s in check["survivors"])
    heading = f"Survivors ({len(check['survivors'])})"
    return (
        f'<section aria-labelledby="{e(check["id"])}">'
        f'<h2 id="{e(check["id"])}"><span class="status {e(check["status"])}">{MARK[check["status"]]}</span>{e(check["title"])}</h2>'
        f'<p class="reason">{e(check["reason"])}{took}</p>'
        + (f'<ul class="details">{details}</ul>' if details else "")
        + (f"<h3>{heading}</h3>{survivors}" if survivors else "")
        + "</section>"
    )


def _survivor(survivor: dict) -> str:
    e = html.escape
    lines = []
    for line in survivor["diff"].splitlines():
        kind = (
            "add"
            if line.startswith("+") and not line.startswith("+++")
            else "del"
            if line.startswith("-") and not line.startswith("---")
            else ""
        )
        lines.append(f'<span class="{kind}">{e(line)}</span>' if kind else e(line))
    return (
        f"<details><summary>{e(survivor['what'])}: <strong>{e(survivor['verdict'])}</strong></summary>"
        f'<p class="witness">{e(survivor["witness"])}</p><pre>{chr(10).join(lines)}</pre></details>'
    )
