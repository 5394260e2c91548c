"""How strong an exercise's tests are: the reference's mutants, graded as a class, and the ones that keep every point.

Each survivor (a mutant with full marks) is run, sandboxed, on the exercise's own inputs
(grader/authoring/inputs.py), beside the reference run the same way: where some input gets
another answer, that input is the witness and the tests miss the mutant; where none does, the
mutant is likely equivalent (it may differ only where nothing the exercise draws reaches).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from grader.authoring.inputs import Input, calls
from grader.authoring.mutants import Mutant
from grader.core import diagnosis as diagnosis_core
from grader.core import exercise
from grader.core.submission import LoadError
from grader.judging import diagnose
from grader.judging.discovery import file_spec, read_source
from grader.judging.grade import Settings, grade_all
from grader.reports.progress import Progress
from grader.sandbox.host import SandboxedSubmission, decode

# The diagnosis kinds that name something: a mistake, two, the rules broken, one answer to every input, no answer.
NAMING = ("model", "models", "rules", "constant", "no_answer")
COMPARE_BUDGET = 120.0  # seconds a survivor (or the reference) may use answering every input


@dataclass
class Survivor:
    mutant: Mutant
    witness: str  # the smallest input where it answers otherwise, with both answers; "" when none does
    compared: int  # inputs both answered

    @property
    def equivalent(self) -> bool:
        return not self.witness


def grade_files(
    ex: exercise.Exercise, paths: dict[str, Path], timeout: float, budget: float, jobs: int, stream: TextIO
) -> dict[str, dict]:
    """Each file (name -> path) graded as `meteor-kit grade` grades a submission, sandboxed, `jobs` at a time; results by name."""
    specs = [dataclasses.replace(file_spec(str(path)), name=name) for name, path in paths.items()]
    progress = Progress(len(specs), stream)
    try:
        results = grade_all(specs, Settings(ex, timeout, budget), jobs, progress)
    finally:
        progress.finish()
    return {result["submission"]: result for result in results}


def full_marks(result: dict) -> bool:
    return result["status"] == "graded" and result["max_score"] > 0 and result["score"] >= result["max_score"]


def failing(result: dict) -> bool:
    return result["status"] == "graded" and not full_marks(result)


def judge(ex: exercise.Exercise, reference: Path, survivors: list[tuple[Mutant, Path]], inputs: list[Input]) -> list[Survivor]:
    """Each survivor, with the smallest input on which it and the reference answer otherwise (none: likely equivalent)."""
    if not survivors:
        return []
    want = list(_answers(ex, reference, inputs))
    judged = []
    for mutant, path in survivors:
        compared, witness = 0, ""
        got = _answers(ex, path, inputs[: len(want)])
        try:
            for one, (theirs, mine) in zip(inputs, zip(want, got)):
                if not diagnosis_core.agree(theirs, mine):
                    witness = _witness(ex, one, theirs, mine)
                    break
                compared += 1
        finally:
            got.close()
        judged.append(Survivor(mutant, witness, compared))
    return judged


def _answers(ex: exercise.Exercise, path: Path, inputs: list[Input]) -> Generator[Any, None, None]:
    """The file's answers to `inputs`, sandboxed, as the diagnosis compares them; they stop where its budget does."""
    normalize = diagnose.value_normalize(ex)
    try:
        box = SandboxedSubmission.of(ex, path, read_source(path), COMPARE_BUDGET)
    except LoadError:
        return
    todo, done = calls(inputs), 0
    try:
        while done < len(todo) and not box.spent():
            answers = box.evaluate(todo[done:])
            try:
                for answer in answers:
                    if answer.kind == "not_run":
                        return
                    done += 1
                    yield normalize(decode(answer.value)) if answer.ok else {"error": answer.kind}
                    if not answer.ok:
                        break  # the rest of the batch was not asked: the next call goes to a fresh child
            finally:
                answers.close()  # type: ignore[attr-defined]  # a generator: the batch's rest is not asked
    finally:
        box.close()


def _witness(ex: exercise.Exercise, one: Input, theirs: Any, mine: Any) -> str:
    call = diagnosis_core.call_text({"args": list(one.args), "kwargs": one.kwargs}, ex.function)
    return (
        f"{_cut(call)}: the reference gives {_cut(diagnosis_core.shown(theirs))}, "
        f"the mutant {_cut(diagnosis_core.shown(mine))} (from {one.origin})"
    )


def _cut(text: str, most: int = 300) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"


def diagnosed(results: list[dict]) -> tuple[int, int, dict[str, int]]:
    """Of the failing results: how many, how many a diagnosis names something for, and how many of each kind."""
    kinds: dict[str, int] = {}
    for result in results:
        if failing(result):
            kind = (result.get("diagnosis") or {}).get("kind", "none")
            kinds[kind] = kinds.get(kind, 0) + 1
    named = sum(count for kind, count in kinds.items() if kind in NAMING)
    return sum(kinds.values()), named, dict(sorted(kinds.items(), key=lambda kv: -kv[1]))
