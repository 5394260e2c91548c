"""Similar code flagged: planted copies found, independent solutions left alone, in results.json and report.html."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grader.core import exercise
from grader.core.results import ClassRun
from grader.judging.similarity import THRESHOLD, similar_pairs
from grader.reports import class_report

CATALOGUE = Path(__file__).parent / "catalogue"
KIT = Path(__file__).resolve().parent.parent
EXERCISE = exercise.load(KIT)
STARTER = EXERCISE.starter


def _renamed(source: str) -> str:
    """Every local name renamed, as a student hiding a copy would."""
    tree = ast.parse(source)
    params = {a.arg for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) for a in n.args.args}
    stored = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)} - params
    mapping = {name: f"my_var_{i}" for i, name in enumerate(sorted(stored))}
    return re.sub(r"\b[A-Za-z_]\w*\b", lambda m: mapping.get(m.group(), m.group()), source)


def _reformatted(source: str) -> str:
    """Comments dropped, layout and quotes normalised, new comments and blank lines added."""
    lines = ast.unparse(ast.parse(source)).splitlines()
    return "\n".join(line + ("\n    # my own work" if i % 4 == 0 else "") for i, line in enumerate(lines)) + "\n"


def _result(name: str, source: str | None, status: str = "graded") -> dict:
    return {"submission": name, "status": status, "source": source}


def independent() -> dict[str, str]:
    """Solutions written separately: the catalogue's correct ones and the reference."""
    files = sorted((CATALOGUE / "correct").glob("*.py")) + [KIT / "solutions" / "reference.py"]
    return {f"{p.stem}.py": p.read_text() for p in files}


def test_planted_copies_are_flagged_and_independent_solutions_are_not():
    sources = independent()
    originals = sorted(sources)
    planted = {
        "exact.py": (originals[0], sources[originals[0]]),
        "renamed.py": (originals[1], _renamed(sources[originals[1]])),
        "reformatted.py": (originals[2], _reformatted(sources[originals[2]])),
        "both.py": (originals[3], _reformatted(_renamed(sources[originals[3]]))),
    }
    results = [_result(n, s) for n, s in sources.items()] + [_result(n, s) for n, (_, s) in planted.items()]
    pairs = similar_pairs(results, STARTER)
    found = {(p["a"], p["b"]): p for p in pairs}
    for copy, (original, _) in planted.items():
        pair = found[tuple(sorted((copy, original)))]
        assert pair["overlap"] >= THRESHOLD
        assert pair["identical"] == (copy == "exact.py")
    assert not [p for p in pairs if p["a"] in sources and p["b"] in sources]  # no false pair
    assert [p["overlap"] for p in pairs] == sorted((p["overlap"] for p in pairs), reverse=True)


def test_the_overlap_is_copydetect_s_own_to_the_last_bit():
    """`Positions.share` is `compare_files`'s share without the copied slices: the same float, for every pair."""
    import io

    import numpy as np
    from copydetect import CodeFingerprint, compare_files

    from grader.judging.similarity import WINDOW, K, Positions

    starter = CodeFingerprint("s.py", K, WINDOW, language="python", fp=io.StringIO((KIT / "problem" / "starter.py").read_text()))
    boilerplate = np.array(sorted(starter.hashes), dtype=np.int64)
    sources = independent()
    sources.update({f"wrong_{p.name}": p.read_text() for p in sorted((CATALOGUE / "wrong").glob("*.py"))})
    first = sorted(sources)[0]
    sources.update({"renamed.py": _renamed(sources[first]), "both.py": _reformatted(_renamed(sources[first]))})
    sources["half.py"] = sources[first][: len(sources[first]) // 2]
    prints = [
        CodeFingerprint(n, K, WINDOW, boilerplate=boilerplate, language="python", fp=io.StringIO(s)) for n, s in sources.items()
    ]
    where = [Positions(f) for f in prints]
    shares = set()
    for i, a in enumerate(prints):
        for j, b in enumerate(prints[i + 1 :], i + 1):
            _, (share_a, share_b), _ = compare_files(a, b)
            assert (float(where[i].share(where[j])), float(where[j].share(where[i]))) == (float(share_a), float(share_b))
            shares |= {round(float(share_a), 2), round(float(share_b), 2)}
    assert len(prints) > 40 and 0.0 in shares and 1.0 in shares and len(shares) > 20  # no overlap, full, and between


class _Held:
    """A fingerprint's hashes only, as `candidates` reads them."""

    def __init__(self, hashes: set[int]) -> None:
        import numpy as np

        self.hashes = hashes
        self.sorted_hashes = np.array(sorted(hashes), dtype=np.int64)


def _sharing_enough(prints: list) -> list[tuple[int, int]]:
    """The candidates' definition, one pair at a time."""
    from grader.judging.similarity import CANDIDATE

    return [
        (i, j)
        for i in range(len(prints))
        for j in range(i + 1, len(prints))
        if len(prints[i].hashes & prints[j].hashes) >= CANDIDATE * min(len(prints[i].hashes), len(prints[j].hashes))
    ]


@pytest.mark.parametrize("counted_at_once, pairs_at_once", [(4096, 1 << 22), (4096, 7), (1, 1 << 22)])
def test_candidates_are_exactly_the_pairs_sharing_enough_hashes(monkeypatch, counted_at_once, pairs_at_once):
    """Counted at once (in steps of any size) or pair by pair, the same pairs as the definition."""
    import random

    from grader.judging import similarity

    monkeypatch.setattr(similarity, "COUNTED_AT_ONCE", counted_at_once)
    monkeypatch.setattr(similarity, "PAIRS_AT_ONCE", pairs_at_once)
    draw = random.Random(7)
    common = set(range(-(2**62), -(2**62) + 40))  # held by nearly everyone, as a shared idiom's k-grams are
    prints = []
    for i in range(90):
        family = range(1000 * (i % 6), 1000 * (i % 6) + 60)  # six styles, each file a variant of one
        own = {draw.randrange(2**63) for _ in range(draw.randrange(1, 30))}
        prints.append(_Held(set(draw.sample(family, draw.randrange(5, 60))) | own | set(draw.sample(sorted(common), 30))))
    prints.append(_Held({2**63 - 1}))  # a lone hash at the top of the range
    expected = _sharing_enough(prints)
    assert similarity.candidates(prints) == expected
    assert 50 < len(expected) < len(prints) * (len(prints) - 1) // 2  # some pairs, not all
    assert similarity.candidates(prints[:1]) == [] and similarity.candidates([]) == []


def test_files_that_differ_only_in_comments_and_layout_are_fingerprinted_once(monkeypatch):
    import copydetect

    made = []
    real = copydetect.CodeFingerprint

    def counted(*args, **kwargs):
        made.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(copydetect, "CodeFingerprint", counted)
    original = (CATALOGUE / "correct" / sorted(p.name for p in (CATALOGUE / "correct").glob("*.py"))[0]).read_text()
    results = [_result(f"student_{i}.py", f"# student {i}: my own work\n{original}\n\n# the end {i}\n") for i in range(5)]
    results.append(_result("renamed.py", _renamed(original)))  # other names: a fingerprint of its own
    pairs = similar_pairs(results, STARTER)
    assert len(made) == 3  # the starter's, the five copies' one, the renamed one's
    # Every pair is still there: the copies identical to each other, each like the renamed one.
    assert len(pairs) == 15 and sum(p["identical"] for p in pairs) == 10
    assert all(p["overlap"] >= THRESHOLD for p in pairs)


def test_the_starter_and_missing_code_are_never_flagged():
    starter = (KIT / "problem" / "starter.py").read_text()
    reference = (KIT / "solutions" / "reference.py").read_text()
    results = [
        _result("a.py", starter),
        _result("b.py", starter + "\n# nothing yet\n"),
        _result("c.py", None),
        _result("d.py", None),
        _result("e.py", reference),
        _result("f.py", reference, status="not_graded"),
    ]
    assert similar_pairs(results, STARTER) == []


def test_hostile_code_is_tokenized_without_harm():
    weird = "def meteor_score(r, c):\n    return '\ud800\x1b[2J' + '''unclosed\n" + "x" * 100_000
    results = [_result("a.py", weird), _result("b.py", weird), _result("c.py", "\x00\x01 not python at all (((")]
    pairs = similar_pairs(results, STARTER)
    assert pairs == [{"a": "a.py", "b": "b.py", "overlap": 1.0, "identical": True}]


def test_the_report_shows_the_pairs_and_each_student_page_names_the_other():
    document = {
        "submissions": [
            {"submission": n, "status": "graded", "score": 1, "max_score": 2, "tests": [], "source": "x = 1\n"}
            for n in ("ann.py", "bob.py", "cy.py")
        ],
        "similar": [
            {"a": "ann.py", "b": "bob.py", "overlap": 1.0, "identical": True},
            {"a": "bob.py", "b": "cy.py", "overlap": 0.82, "identical": False},
        ],
    }
    page = class_report.render(ClassRun.from_json(document), "METEOR score")
    section = page.split('id="similar"')[1].split("</section>")[0]
    assert "2 pairs flagged" in section
    assert re.search(
        r'href="report/ann.py.html">ann.py</a></td><td><a href="report/bob.py.html">bob.py</a></td><td class="num"><b>identical</b>',
        section,
    )
    assert "<b>82%</b>" in section
    pages = class_report.pages(ClassRun.from_json(document), "METEOR score")
    assert "Similar code: ann.py (identical), cy.py (82%)" in pages["bob.py.html"]
    assert "was not checked" in class_report.render(ClassRun.from_json({**document, "similar": None}), "METEOR score")


def test_grade_flags_two_students_with_the_same_file(tmp_path, kit_root, meteor_kit):
    klass = tmp_path / "class"
    klass.mkdir()
    reference = (kit_root / "solutions" / "reference.py").read_text()
    (klass / "ann.py").write_text(reference)
    (klass / "bob.py").write_text("# bob's own work\n" + _renamed(reference))
    (klass / "cy.py").write_text((CATALOGUE / "correct" / "class_based.py").read_text())
    run = subprocess.run(
        [str(meteor_kit), "grade", str(klass), "--out", str(tmp_path / "out"), "--jobs", "2"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    document = json.loads((tmp_path / "out" / "results.json").read_text())
    assert document["similar"] == [{"a": "ann.py", "b": "bob.py", "overlap": 1.0, "identical": False}]
    report = (tmp_path / "out" / "report.html").read_text()
    assert "1 pair flagged" in report
    assert "similar code: 1 pair(s) flagged, first ann.py and bob.py" in run.stdout


def test_the_check_begun_during_grading_gives_the_pairs_the_check_after_it_gives():
    from grader.core.results import SubmissionResult
    from grader.judging.similarity import InBackground, class_pairs

    def _similar(results: list[dict], ex, early) -> tuple[list[dict], str]:  # the pipeline's step, as dicts
        pairs, note = class_pairs([SubmissionResult.from_json(r) for r in results], ex, print, early=early)
        return [p.as_json() for p in pairs or []], note

    files = independent()
    first = sorted(files)[0]
    files["copy.py"] = _renamed(files[first])
    files["ann.py"] = _reformatted(files[first])
    results = [_result(name, source) for name, source in files.items()]
    after = similar_pairs(results, STARTER)
    assert {tuple(sorted((first, "copy.py"))), tuple(sorted((first, "ann.py")))} <= {(p["a"], p["b"]) for p in after}

    early = InBackground([{"submission": r["submission"], "source": r["source"]} for r in results], STARTER)
    assert _similar(results, EXERCISE, early) == (after, "")

    # A student changed a file between the early read and the grading: the code graded is checked.
    stale = InBackground(
        [{"submission": r["submission"], "source": "x = 1\n" if r["submission"] == "copy.py" else r["source"]} for r in results],
        STARTER,
    )
    assert _similar(results, EXERCISE, stale) == (after, "")

    # Files left not graded by a Ctrl+C are left out, as the check after the grading leaves them out.
    cut = [_result(r["submission"], r["source"], "not_graded" if r["submission"] == "copy.py" else "graded") for r in results]
    early = InBackground([{"submission": r["submission"], "source": r["source"]} for r in results], STARTER)
    assert _similar(cut, EXERCISE, early) == (similar_pairs(cut, STARTER), "") and similar_pairs(cut, STARTER) != after


def test_the_check_begun_during_grading_takes_only_idle_cpu():
    import os
    import time

    from grader.judging.similarity import InBackground

    sources = list(independent().values()) * 40  # long enough to be caught running
    early = InBackground([{"submission": f"{i}.py", "source": s + f"\n# {i}\n"} for i, s in enumerate(sources)], STARTER)
    try:
        deadline = time.monotonic() + 5
        policy = None
        while policy is None and time.monotonic() < deadline:
            try:
                policy = os.sched_getscheduler(early._process.pid)
            except OSError:
                break
            if policy == os.SCHED_OTHER:
                policy = None  # not set yet: the process is starting
        assert policy == os.SCHED_IDLE
    finally:
        early.stop()


def test_copydetect_is_imported_without_matplotlib_and_matplotlib_stays_importable():
    # A process of its own: what this one imported already would hide both halves.
    script = textwrap.dedent(
        """
        import io, sys
        from grader.judging.similarity import fingerprint_class
        CodeFingerprint = fingerprint_class()
        code = "def f(words):\\n    return sorted(set(w.lower() for w in words))\\n" * 3
        hashes = CodeFingerprint("a.py", 25, 1, language="python", fp=io.StringIO(code)).hashes
        print(len(hashes) > 0, "matplotlib" in sys.modules, "matplotlib.pyplot" in sys.modules)
        import matplotlib
        print(hasattr(matplotlib, "__version__"), fingerprint_class() is CodeFingerprint)
        """
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=KIT, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["True", "False", "False", "True", "True"]


def _kit_python_files() -> list[Path]:
    folders = ("grader", "tests", "solutions", "hidden_tests", "problem", "bench")
    return sorted(p for folder in folders for p in (KIT / folder).rglob("*.py") if p.is_file())


def test_the_filtered_text_is_copydetect_s_own_for_every_python_file_of_the_kit():
    """lexing.filtered makes the text copydetect's filter_code makes (so the same fingerprints, the same pairs):
    on the kit's code, its catalogue of solutions and mistakes, its hostile corpus and its exercises."""
    from copydetect.utils import filter_code

    from grader.judging import lexing

    files = _kit_python_files()
    assert len(files) > 300
    for path in files:
        source = path.read_text(encoding="utf-8", errors="replace")
        assert lexing.filtered(source) == filter_code(source, path.name, "python")[0], path


# Pieces that move pygments' Python lexer between its states: strings of every prefix and quote,
# f-string expressions, imports, definitions, soft keywords, names it knows (builtins, magic
# names, exceptions), characters that match others only without case ('ſ', the Kelvin sign).
PIECES = (
    "def ", "class ", "import ", "from ", " as ", ", ", "lazy ", "match ", "case ", "_", " ", "\t", "\n", "\r\n",
    "\\", "\\\n", "#", "#!", "@", "x", "y1", "é", "ſ", "\u212a", "print", "self", "cls", "__init__", "__name__",
    "ValueError", "None", "True", "not", "in", "is", "async for", "yield from", "lambda", "await",
    '"', "'", '"""', "'''", 'f"', "f'", 'rb"', "Rb'", 'rf"', "FR'", 'u"', 'b"""', "t'",
    "{", "}", "{{", "}}", "(", ")", "[", "]", ":", "=", "!r", "!=", "==", ".", "%", "%s", "%(a)d", "{0}",
    "1", "0x1F", "1e5", "1.5j", "0o7", "0b1", "1_000",
)  # fmt: skip


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), max_size=60).map("".join))
def test_the_filtered_text_is_copydetect_s_own_for_any_text(text):
    from copydetect.utils import filter_code

    from grader.judging import lexing

    assert lexing.filtered(text) == filter_code(text, "x.py", "python")[0]


def test_a_rule_keeps_its_own_flags_inside_a_joined_pattern():
    from grader.judging.lexing import _branch

    every = _branch(re.compile("a b # a comment", re.IGNORECASE | re.MULTILINE | re.DOTALL | re.VERBOSE))
    none = _branch(re.compile("a b"))
    assert every is not None and none is not None
    joined = re.compile(f"(?P<r0>{every})|(?P<r1>{none})")
    assert joined.match("AB").lastgroup == "r0"  # caseless and verbose, as the rule alone
    assert joined.match("a b").lastgroup == "r1"  # the second rule: neither
    assert _branch(re.compile(r"(a)\1")) is None  # a backreference cannot be joined


def test_a_file_of_thousands_of_distinct_characters_leaves_each_state_s_table_bounded():
    """One joined pattern per state and first character would be compiled thousands of times for such a file."""
    from copydetect.utils import filter_code

    from grader.judging import lexing

    names = [chr(0x4E00 + i) for i in range(5000)]
    text = f"x = '{''.join(names)}'\n" + " + ".join(names) + "\n"
    assert lexing.filtered(text) == filter_code(text, "x.py", "python")[0]
    tables = lexing._LEXER[0].joined.values()
    assert max(len(table) for table in tables) <= min(lexing.TABLE + 1, len(names) // 10)
