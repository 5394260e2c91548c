"""A results.json for a large made-up class: real test names, catalogue code, every kind of result.

Used by the class report's tests and by bench/bench_report.py. No real student's data: names
are generated, code comes from tests/catalogue/.
"""

from __future__ import annotations

import random
from pathlib import Path

from grader.core import exercise
from grader.judging.partial_run import catalogue

CATALOGUE = Path(__file__).parent / "catalogue"
FIRST = [
    "Ada",
    "Bo",
    "Cy",
    "Dana",
    "Émile",
    "Farah",
    "Gus",
    "Hana",
    "Ivo",
    "Jun",
    "Kofi",
    "Lea",
    "Mateo",
    "Nia",
    "Oskar",
    "Priya",
]
LAST = ["Okafor", "Nguyen", "García-Márquez", "Schmidt", "Kowalczyk", "Haddad", "Tanaka", "O'Brien", "Van der Berg", "Lindqvist"]


def big_class(count: int, seed: int = 0) -> dict:
    rng = random.Random(seed)
    template = catalogue(exercise.load(exercise.KIT_ROOT)).template
    wrong = sorted((CATALOGUE / "wrong").glob("*.py"))
    right = sorted((CATALOGUE / "correct").glob("*.py"))
    subs = []
    for i in range(count):
        name = f"{rng.choice(FIRST)} {rng.choice(LAST)} {i:04d}.py"
        roll = rng.random()
        if roll < 0.04:  # never loaded
            message = "could not load the submission: syntax error on line 3: invalid syntax"
            tests = [{**t, "status": "error", "message": message} for t in template]
            subs.append(
                {
                    "submission": name,
                    "status": "error",
                    "message": message,
                    "tests": tests,
                    "score": 0.0,
                    "max_score": sum(t["max_score"] for t in tests),
                    "passed": 0,
                    "diagnosis": None,
                    "source": "def meteor_score(reference, candidate\n    return 0\n",
                }
            )
            continue
        if roll < 0.06:  # the run was interrupted before it
            message = "not graded: the run was interrupted before this submission was graded"
            tests = [{**t, "status": "not_run", "message": message} for t in template]
            subs.append(
                {
                    "submission": name,
                    "status": "not_graded",
                    "message": message,
                    "tests": tests,
                    "score": 0.0,
                    "max_score": sum(t["max_score"] for t in tests),
                    "passed": 0,
                    "diagnosis": None,
                    "source": None,
                }
            )
            continue
        source = rng.choice(right if roll < 0.3 else wrong)
        failing = 0.0 if roll < 0.3 else rng.random()
        tests = []
        for t in template:
            status = "pass" if rng.random() >= failing else rng.choice(["fail", "fail", "fail", "error", "timeout"])
            message = "" if status == "pass" else "expected 0.455, got 0.769 (rule 2, Matching)"
            tests.append({**t, "status": status, "message": message, "score": t["max_score"] if status == "pass" else 0.0})
        diagnosis = (
            None
            if roll < 0.3
            else {
                "mistake": source.stem if rng.random() < 0.8 else None,
                "kind": "unknown",
                "message": f"Your scores match what happens with the mistake {source.stem}.",
                "example": "meteor_score('sun moon', 'sun sun moon') returned 1.402, but the rules give 0.476",
                "section": "rule 2, Matching",
                "rule": "each reference word can be matched only once",
                "explains_all": True,
            }
        )
        subs.append(
            {
                "submission": name,
                "status": "graded",
                "message": "",
                "tests": tests,
                "score": sum(t["score"] for t in tests),
                "max_score": sum(t["max_score"] for t in tests),
                "passed": sum(t["status"] == "pass" for t in tests),
                "diagnosis": diagnosis,
                "source": f"# {name}\n" + source.read_text(),
            }
        )
    return {"exercise": "meteor", "isolation": "bubblewrap", "interrupted": False, "submissions": subs}
