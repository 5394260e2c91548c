"""The Markdown feedback, rendered as GitHub-flavoured Markdown: no link, emphasis or HTML of a student's survives."""

from __future__ import annotations

import dataclasses
import re

from hypothesis import example, given, settings
from hypothesis import strategies as st
from lms_results import one_test, result
from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml

from grader.core import exercise
from grader.core.results import SubmissionResult
from grader.core.safe_text import for_terminal
from grader.reports import feedback
from grader.reports.roster import Student

# CommonMark with GFM's tables, strikethrough and bare-URL links, and raw HTML let through.
GFM = MarkdownIt("gfm-like")
TITLED = dataclasses.replace(exercise.load(exercise.KIT_ROOT), title="METEOR score")
HOSTILE = [
    "https://evil.example/steal?x=1",
    "www.evil.example",
    "evil.example",
    "mail me: eve@evil.example",
    "**bold** __bold__ *em* _em_ ~~strike~~ ~one~",
    "<img src=x onerror=alert(1)> <b>raw</b> <script>alert(2)</script>",
    "![img](https://evil.example/i.png) [link](https://evil.example) <https://evil.example>",
    "[ref]\n\n[ref]: https://evil.example",
    "| a | b |\n| --- | --- |\n| 1 | 2 |",
    "# heading\n> quote\n1. list\n- item\n---\n    code",
    "&amp; &#x3C;b&#x3E; &lt;i&gt; $x^2$ `code` ``` fence",
    "[^1] - [ ] task \\*escaped\\* trailing\\",
]
TAGS = re.compile(r"</?([a-z0-9]+)")


def rendered_text(markdown: str) -> str:
    """What GFM makes of one line of Markdown: its paragraph's HTML."""
    return GFM.render(markdown)


@example("https://evil.example **b** _e_ ~~s~~ <img src=x> | a | b |")
@example("1. x")
@example("evil.example")
@given(st.text())
def test_any_text_renders_as_exactly_that_text(text):
    shown = for_terminal(text, one_line=True).strip()  # a paragraph loses the spaces at its ends
    if not shown:
        return
    assert rendered_text(feedback.md_text(text)) == f"<p>{escapeHtml(shown)}</p>\n"


@example("```\n- [x](https://evil.example)\n```")
@given(st.text())
def test_any_message_renders_as_exactly_its_text_in_a_code_block(text):
    markdown = "\n".join(["- **test_x**", *feedback.md_block(text)])
    html = GFM.render(markdown)
    body = "".join(line + "\n" for line in for_terminal(text).splitlines())
    assert (
        html
        == f'<ul>\n<li><strong>test_x</strong><pre><code class="language-text">{escapeHtml(body)}</code></pre>\n</li>\n</ul>\n'
    )


def feedback_of(text: str) -> str:
    """The Markdown feedback of a submission whose name, student, messages and diagnosis all say `text`."""
    r = result(text, 80, mistake="x", message=text)
    r["status"] = "error"  # its message is shown
    r["tests"] = [one_test("test_example[a]", "fail", text, tier="examples"), one_test("test_rule[b]", "fail", text)]
    r["diagnosis"]["text"] = text
    r["adjustments"] = [{"by": "student", "change": -1.0, "reason": text}]
    r["adjusted_score"] = 79.0
    md, _ = feedback.render(SubmissionResult.from_json(r), Student(0, "7", text), TITLED)
    graded = {**r, "status": "graded"}
    md_graded, _ = feedback.render(SubmissionResult.from_json(graded), Student(0, "7", text), TITLED)
    return md + md_graded


def twin(text: str) -> str:
    """`text` with every character that shows as itself and is not a space made an `x`: the same lines, no markup."""
    return "".join(c if c.isspace() or for_terminal(c) != c else "x" for c in text)


@settings(max_examples=50)
@given(st.sampled_from(HOSTILE) | st.text())
def test_hostile_text_adds_no_element_to_the_feedback(text):
    assert TAGS.findall(GFM.render(feedback_of(text))) == TAGS.findall(GFM.render(feedback_of(twin(text))))


def test_the_kits_own_formatting_still_renders_around_hostile_text():
    for text in HOSTILE:
        html = GFM.render(feedback_of(text))
        for tag in ("<a", "<img", "<em>", "<s>", "<del>", "<table", "<script", "<b>", "<blockquote", "<ol", "<hr"):
            assert tag not in html, (text, tag)
        assert html.count("<strong>") == 1 + 1 + 2  # "Score:" in each, and the name of each test not passed
        assert "<h1>METEOR score: feedback for " in html and "<strong>Score: 79 / 113 (70%)</strong>" in html
        assert "<h2>Tests not passed: 2 of 2</h2>" in html and "<h2>Diagnosis</h2>" in html
        assert '<pre><code class="language-text">' in html
        assert escapeHtml(for_terminal(text, one_line=True).strip()) in html  # the text itself, as text
