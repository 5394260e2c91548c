"""Results as results.json holds them, built by hand for the LMS tests (with lms-in's `student` field when given)."""

from __future__ import annotations

from pathlib import Path

from grader.core.results import SubmissionResult

ROSTERS = Path(__file__).parent / "lms" / "rosters"


def one_test(name: str, status: str = "pass", message: str = "", tier: str = "hidden") -> dict:
    return {
        "name": name,
        "tier": tier,
        "status": status,
        "message": message,
        "output": "",
        "score": 2.0 if status == "pass" else 0.0,
        "max_score": 2.0,
    }


def result(
    submission: str,
    score: float = 100.0,
    max_score: float = 113.0,
    status: str = "graded",
    mistake: str | None = None,
    student: dict | None = None,
    message: str = "",
) -> dict:
    tests = [
        one_test("test_rule[clipping]", "fail" if mistake else "pass", "expected 0.5, got 0.7" if mistake else ""),
        one_test("test_rule[lowercase]"),
    ]
    r = {
        "submission": submission,
        "path": submission,
        "status": status,
        "message": message,
        "score": score,
        "max_score": max_score,
        "passed": sum(t["status"] == "pass" for t in tests),
        "tests": tests,
        "diagnosis": {"mistake": mistake, "kind": "model", "message": "m", "text": f"Your scores match {mistake}."}
        if mistake
        else None,
        "source": "def meteor_score(r, c): return 0.0\n",
    }
    if student is not None:
        r["student"] = {
            "name": None,
            "lms_id": None,
            "login": None,
            "email": None,
            "late": None,
            "submitted_at": None,
            "layout": None,
            "path": None,
            **student,
        }
    return r


def typed(data: dict) -> SubmissionResult:
    """A result as results.json holds it (perhaps only the fields a test needs) read into the model."""
    return SubmissionResult.from_json({"submission": "submission.py", **data})


def submission(*args, **kwargs) -> SubmissionResult:
    """`result(...)` read into the model."""
    return SubmissionResult.from_json(result(*args, **kwargs))
