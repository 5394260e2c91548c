"""The last step of a grade: the final score on a gradebook's scale (docs/lms-gradebook.md).

After the verdicts, the points (grader/core/scoring.py) and the adjustments
(grader/core/adjustments.py). Only the LMS's gradebook is scaled: results.json, grades.csv and
every report keep the exercise's own points.
"""

from __future__ import annotations

from grader.core.results import SubmissionResult, SubmissionStatus

MISSING = ("zero", "blank")  # `--missing`: what a student on the roster without a submission gets


def scaled(result: SubmissionResult, maximum: float | None) -> float:
    """`result`'s final score out of `maximum` (113 of 113 in a 50-point column is 50), to 2 decimals.

    Without a maximum (a gradebook that gives none), the exercise's own points.
    """
    if maximum is None:
        return round(result.final_score, 2)
    share = result.final_score / result.max_score if result.max_score else 0.0
    return round(share * maximum, 2)


def gradebook_score(result: SubmissionResult | None, maximum: float | None, missing: str = "zero") -> float | None:
    """What a gradebook holds for one student (None: a blank cell).

    No submission: 0, or blank with `missing="blank"`. A submission the run never reached
    (`not_graded`): blank, never a 0 that would read as a grade.
    """
    if result is None:
        return 0.0 if missing == "zero" else None
    if result.status == SubmissionStatus.NOT_GRADED:
        return None
    return scaled(result, maximum)
