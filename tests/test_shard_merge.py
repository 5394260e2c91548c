"""Past one machine: `grade --shard K/N` on 3 machines' worth of processes, merged, equals one run."""

from __future__ import annotations

import argparse
import json
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from grader.core.results import ClassRun
from grader.judging.merge import MergeError, merge
from grader.judging.shard import in_shard, parse_shard

CATALOGUE = Path(__file__).parent / "catalogue"
# name -> where its code comes from: right, wrong in several ways, broken, and two copies.
CLASS = {
    "ann.py": "solutions/reference.py",
    "bob.py": "tests/catalogue/wrong/no_clipping.py",
    "cy.py": "tests/catalogue/wrong/two_decimals.py",
    "dee.py": "tests/catalogue/wrong/crash_on_empty.py",
    "eve.py": None,
    "fay.py": "tests/catalogue/correct/functional.py",
    "gus.py": "tests/catalogue/wrong/no_clipping.py",
    "hal.py": "tests/catalogue/wrong/penalty_precedence.py",
    "ivy.py": "tests/catalogue/wrong/returns_string.py",
}


def _verdicts(out: Path) -> dict:
    document = json.loads((out / "results.json").read_text())
    return {
        "students": {
            r["submission"]: (
                r["status"],
                r["score"],
                r["max_score"],
                [(t["name"], t["status"], t["score"]) for t in r["tests"]],
                r["diagnosis"],
            )
            for r in document["submissions"]
        },
        "order": [r["submission"] for r in document["submissions"]],
        "similar": document["similar"],
    }


def test_three_shards_merged_equal_one_run(tmp_path, kit_root, meteor_kit):
    klass = tmp_path / "class"
    klass.mkdir()
    for name, source in CLASS.items():
        (klass / name).write_text((kit_root / source).read_text() if source else "def meteor_score(reference, candidate\n")
    assert all(any(in_shard(n, (k, 3)) for n in CLASS) for k in (1, 2, 3))  # no shard is empty
    single = subprocess.Popen(
        [str(meteor_kit), "grade", str(klass), "--out", str(tmp_path / "single"), "--jobs", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    shards = [
        subprocess.Popen(
            [str(meteor_kit), "grade", str(klass), "--out", str(tmp_path / f"part{k}"), "--jobs", "1", "--shard", f"{k}/3"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for k in (1, 2, 3)
    ]
    for run in [single, *shards]:
        _, stderr = run.communicate(timeout=900)
        assert run.returncode == 0, stderr
    parts = [json.loads((tmp_path / f"part{k}" / "results.json").read_text()) for k in (1, 2, 3)]
    assert sorted(n for p in parts for n in (r["submission"] for r in p["submissions"])) == sorted(CLASS)
    assert [p["shard"] for p in parts] == [[1, 3], [2, 3], [3, 3]]
    merged = subprocess.run(
        [str(meteor_kit), "merge", *(str(tmp_path / f"part{k}") for k in (1, 2, 3)), "--out", str(tmp_path / "merged")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert merged.returncode == 0, merged.stderr
    one, together = _verdicts(tmp_path / "single"), _verdicts(tmp_path / "merged")
    assert together == one
    assert one["students"]["bob.py"][4]["mistake"] == "no_clipping" and one["students"]["eve.py"][0] == "error"
    assert {(p["a"], p["b"]) for p in one["similar"]} >= {("bob.py", "gus.py")}  # copies on different machines
    assert (tmp_path / "merged" / "grades.csv").read_text() == (tmp_path / "single" / "grades.csv").read_text()
    assert sorted(p.name for p in (tmp_path / "merged" / "gradescope").iterdir()) == sorted(CLASS)
    assert sorted(p.name for p in (tmp_path / "merged" / "report").iterdir()) == sorted(f"{n}.html" for n in CLASS)


def test_merge_refuses_a_student_in_two_parts_and_other_exercises():
    part = ClassRun.from_json({"exercise": "meteor", "submissions": [{"submission": "a.py"}]})
    with pytest.raises(MergeError, match="a.py is in more than one part"):
        merge([part, part])
    with pytest.raises(MergeError, match="different exercises"):
        merge([part, ClassRun(exercise="other", isolation="", submissions=[])])
    mixed = merge([replace(part, isolation="bubblewrap"), ClassRun(exercise="meteor", isolation="rlimits", submissions=[])])
    assert mixed.isolation == "mixed: bubblewrap, rlimits"


def test_a_merged_run_is_the_parts_results_in_order_without_what_only_a_whole_class_has():
    def part(names: list[str], shard: tuple[int, int], **more) -> ClassRun:
        return ClassRun.from_json(
            {"exercise": "meteor", "isolation": "bubblewrap", "duration": 1.25, "shard": shard, **more}
            | {"submissions": [{"submission": n, "score": 1.0} for n in names]}
        )

    lms = {"roster": "r.csv", "kind": "canvas", "matched": 0, "missing": [], "unmatched": [], "contested": []}
    merged = merge([part(["cy.py", "ann.py"], (1, 2), similar=[], lms=lms), part(["bob.py"], (2, 2))])
    assert [r.submission for r in merged.submissions] == ["ann.py", "bob.py", "cy.py"]
    assert merged.duration == 2.5 and merged.shard is None and merged.isolation == "bubblewrap"
    # Similar code, the roster's and the adjustments are the whole class's: made again after the merge.
    assert merged.similar is None and merged.lms is None and merged.adjust is None


def test_shards_split_a_class_whole_and_without_overlap():
    names = [f"student {i}.py" for i in range(300)]
    for n in (1, 2, 5):
        owners = [[k for k in range(1, n + 1) if in_shard(name, (k, n))] for name in names]
        assert all(len(o) == 1 for o in owners)
    sizes = [sum(in_shard(name, (k, 3)) for name in names) for k in (1, 2, 3)]
    assert min(sizes) > 60  # about a third each
    assert parse_shard("2/3") == (2, 3)
    for bad in ("0/3", "4/3", "x", "1/0"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_shard(bad)
