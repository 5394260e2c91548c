"""Student text made safe wherever it is written: valid UTF-8, inert on a terminal, never a spreadsheet formula."""

from __future__ import annotations

import csv
import json
import re

from hypothesis import given
from hypothesis import strategies as st

from grader.core import exercise
from grader.core.results import ClassRun, SubmissionResult
from grader.core.runner import Report, TestResult
from grader.core.safe_text import clean, for_csv, for_terminal, valid
from grader.reports.files import grades_csv, write_outputs
from grader.reports.progress import summary
from grader.reports.terminal import render_report

HOSTILE = [
    "\x1b[2J",  # clear the screen
    "\x1b]0;pwned\x07",  # OSC: retitle the window, ended by BEL
    "\x9b2J",  # CSI as a single C1 byte
    "line\rover",  # carriage return: overwrite what was printed
    "bell\x07",
    "\u202eevil",  # right-to-left override
    "lone \ud800 and \udcff",  # lone surrogates (a non-UTF-8 file name decodes to these)
]
# What a terminal obeys: C0 but newline and tab, DEL, C1, bidi overrides; and surrogates, which do not encode.
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def test_control_characters_are_written_out_not_obeyed():
    assert for_terminal("a\x1b[2Jb") == "a\\e[2Jb"
    assert for_terminal("\x1b]0;pwned\x07") == "\\e]0;pwned\\x07"
    assert for_terminal("x\ry") == "x\\ry"
    assert for_terminal("\x9b2J") == "\\x9b2J"
    assert for_terminal("\u202eabc") == "\\u202eabc"
    assert for_terminal("two\nlines\tkept") == "two\nlines\tkept"
    assert for_terminal("two\nlines", one_line=True) == "two\\nlines"
    assert for_terminal("\ud800") == "\ufffd"


@given(st.text())
def test_terminal_text_holds_nothing_a_terminal_obeys(text):
    shown = for_terminal(text, one_line=True)
    assert not UNSAFE.search(shown) and "\n" not in shown
    shown.encode("utf-8")


@given(st.text())
def test_a_csv_cell_never_starts_a_formula_and_always_encodes(text):
    cell = for_csv(text)
    assert not cell.startswith(("=", "+", "-", "@", "\t", "\r", "\n"))
    assert not UNSAFE.search(cell)
    cell.encode("utf-8")


def test_formula_cells_get_a_quote():
    assert [for_csv(t) for t in ('=HYPERLINK("http://x")', "+1", "-1", "@SUM(A1)", "\tx", "alice")] == [
        '\'=HYPERLINK("http://x")',
        "'+1",
        "'-1",
        "'@SUM(A1)",
        "\\tx",
        "alice",
    ]


JSON = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=False) | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(JSON)
def test_clean_output_always_encodes_and_changes_only_surrogates(value):
    cleaned = clean(value)
    text = json.dumps(cleaned, ensure_ascii=False)
    text.encode("utf-8")  # strict
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return
    assert cleaned is value  # nothing to replace: the very same object comes back


def test_clean_replaces_surrogates_in_keys_and_values_and_keeps_the_rest():
    document = {"a\ud800": ["x\udcff", {"k": "ok", "n": 1.5, "none": None}], "b": ("\ud83d",)}
    assert clean(document) == {"a\ufffd": ["x\ufffd", {"k": "ok", "n": 1.5, "none": None}], "b": ["\ufffd"]}
    same = {"a": ["é", 1]}
    assert clean(same) is same  # nothing to change: not even copied
    assert valid("\U0001f600") == "\U0001f600"  # a real pair, written as one character, is untouched


def result(name: str, text: str) -> dict:
    test = {
        "name": f"test_x[{text}]",
        "tier": "examples",
        "status": "fail",
        "message": f"returned {text}",
        "output": text,
        "score": 0.0,
        "max_score": 1.0,
    }
    return {
        "submission": name,
        "path": f"{name}/meteor.py",
        "status": "error",
        "message": f"could not load: {text}",
        "tests": [test],
        "score": 0.0,
        "max_score": 1.0,
        "passed": 0,
        "from_memo": 0,
        "duration": 0.1,
        "diagnosis": {"mistake": text, "text": text},
        "source": f"x = '{text}'\n",
    }


def test_one_hostile_string_never_stops_the_outputs_from_being_written(tmp_path):
    results = [result(f"s{i}{text}", text) for i, text in enumerate(HOSTILE)]
    results.append(result("<script>alert(1)</script>", "<img src=x onerror=alert(2)>"))
    results.append(result('=HYPERLINK("http://evil")', "fine"))
    document = {"exercise": "meteor", "isolation": "bubblewrap", "duration": 1.0, "submissions": results}
    write_outputs(tmp_path, ClassRun.from_json(document), exercise.load(exercise.KIT_ROOT))
    files = [
        tmp_path / "results.json",
        tmp_path / "grades.csv",
        tmp_path / "report.html",
        *sorted((tmp_path / "gradescope").glob("*/results.json")),
    ]
    assert len(files) == 3 + len(results)
    for path in files:
        path.read_bytes().decode("utf-8")  # strict: valid UTF-8 everywhere
    written = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))["submissions"]
    assert [r["submission"] for r in written][-3] == "s6lone \ufffd and \ufffd"
    assert written[0]["tests"][0]["output"] == "\x1b[2J"  # JSON keeps the text (escaped), only surrogates go
    with open(tmp_path / "grades.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows[-1]["submission"] == '\'=HYPERLINK("http://evil")'
    assert all(not UNSAFE.search(cell) for row in rows for cell in row.values())
    report = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "=HYPERLINK(&quot;http://evil&quot;)" in report and '=HYPERLINK("http://evil")' not in report
    # The report's own sorting script is the only script: the student's markup stays text.
    assert "&lt;script&gt;alert(1)" in report and "<script>alert" not in report and report.count("<script") == 1
    assert "<img" not in report


def typed_all(results: list[dict]) -> list[SubmissionResult]:
    return [SubmissionResult.from_json(r) for r in results]


def test_grades_csv_neutralises_the_names_it_is_given():
    text = grades_csv(typed_all([result("@cmd|' /C calc'!A0", "x"), result("-2+3", "x")]))
    assert [row[0] for row in csv.reader(text.splitlines())][1:] == ["'@cmd|' /C calc'!A0", "'-2+3"]


def test_the_summary_and_the_report_show_control_characters_written_out(tmp_path):
    results = [result(f"s{text}", text) for text in HOSTILE]
    for r in results:
        r["status"] = "error"
    shown = summary(ClassRun.from_json({"duration": 1.0, "submissions": results}), tmp_path)
    assert not UNSAFE.search(shown)
    assert "s\\e[2J" in shown and "\\e]0;pwned\\x07" in shown
    test = TestResult("test_x", "examples", "fail", "got \x1b[2J\ud800", "printed \x1b]0;t\x07\r", 0.0, 1.0)
    rendered = render_report(Report("name\x1b[31m", "graded", "\x9b2J", [test]), color=False)
    assert not UNSAFE.search(rendered)
    assert "name\\e[31m" in rendered and "got \\e[2J\ufffd" in rendered and "printed \\e]0;t\\x07\\r" in rendered
    colored = render_report(Report("n", "graded", "", [test]), color=True)
    assert "\x1b[31m" in colored and "\x1b[2J" not in colored  # our own colours only
