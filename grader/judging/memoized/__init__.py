"""The memoized way of running a submission's tests: the memo's walk, real runs, checks and full runs (docs/memo.md).

It gives the verdicts `Plain` gives (grader/judging/runs.py), faster. Only the worker pool
(grader/judging/grade.py) imports it; without this package the kit grades every class `Plain`.
"""

from grader.judging.memoized.grading import Memoized

__all__ = ["Memoized"]
