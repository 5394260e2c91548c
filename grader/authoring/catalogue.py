"""An author's catalogue of example submissions: what each file says it is, and what a `grade` run of them gave.

A file says what it is in a line of its own (`MISTAKE = "no_lowercase"`, or as a comment,
`# MISTAKE: no_lowercase`): `MISTAKE` a one-mistake solution (a model's id, or a name of its
own with `RULE`, the [scoring.rules] rule it breaks), `CHEAT` a cheat; a file with neither is a
correct solution.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MARK = re.compile(r"^\s*#?\s*(MISTAKE|RULE|CHEAT)\s*[:=]\s*[\"']?([A-Za-z0-9_.+-]+)", re.MULTILINE)
MOST_FOR_A_CHEAT = 0.05


@dataclass(frozen=True)
class Entry:
    name: str  # its path in the catalogue
    path: Path
    mistake: str = ""
    rule: str = ""
    cheat: str = ""

    @property
    def kind(self) -> str:
        return "one mistake" if self.mistake else "cheat" if self.cheat else "correct"


@dataclass
class Figures:
    """A `grade` run of the catalogue, in figures."""

    problems: list[str]
    counts: dict[str, int]  # files of each kind
    bins: list[tuple[str, int]]  # (share of the points, how many files), every kind
    one_mistake_median: float | None
    scores: dict[str, float] = field(default_factory=dict)  # name -> share of the points


def read(folder: Path) -> list[Entry]:
    """Every .py file under `folder`, with its marks, by its path there."""
    entries = []
    for path in sorted(folder.rglob("*.py")):
        if "__pycache__" in path.parts or not path.is_file():
            continue
        marks = {key: value for key, value in MARK.findall(path.read_text(encoding="utf-8", errors="replace"))}
        name = path.relative_to(folder).as_posix()
        entries.append(Entry(name, path, marks.get("MISTAKE", ""), marks.get("RULE", ""), marks.get("CHEAT", "")))
    return entries


def share(result: dict) -> float:
    return result["score"] / result["max_score"] if result.get("max_score") else 0.0


def figures(entries: list[Entry], results: dict[str, dict]) -> Figures:
    """The score distribution, the one-mistake median, and each file that is not what it says it is."""
    problems, scores = [], {}
    for entry in entries:
        result = results[entry.name]
        scores[entry.name] = got = share(result)
        if result["status"] != "graded" and entry.kind == "correct":
            problems.append(f"{entry.name} (correct) was not graded: {result.get('message', '')[:200]}")
        elif entry.kind == "correct" and got < 1:
            problems.append(f"{entry.name} (correct) gets {got:.1%}, not every point")
        elif entry.kind == "one mistake" and got >= 1:
            problems.append(f"{entry.name} (MISTAKE {entry.mistake}) gets every point: the tests miss its mistake")
        elif entry.kind == "cheat" and got > MOST_FOR_A_CHEAT:
            problems.append(f"{entry.name} (CHEAT {entry.cheat}) earns {got:.1%} (at most {MOST_FOR_A_CHEAT:.0%})")
    counts: dict[str, int] = {}
    for entry in entries:
        counts[entry.kind] = counts.get(entry.kind, 0) + 1
    mistakes = [scores[e.name] for e in entries if e.kind == "one mistake"]
    return Figures(problems, counts, bins(list(scores.values())), statistics.median(mistakes) if mistakes else None, scores)


def bins(shares: list[float]) -> list[tuple[str, int]]:
    """Files by their share of the points: 0 %, then steps of 10 % (the upper end in), then 100 %."""
    labels = ["0 %", *(f"{max(1, 10 * i)}-{10 * (i + 1)} %" for i in range(10)), "100 %"]
    counts = [0] * len(labels)
    for value in shares:
        counts[0 if value <= 0 else 11 if value >= 1 else min(10, int(value * 10 - 1e-9) + 1)] += 1
    return list(zip(labels, counts))


def named(entry: Entry, diagnosis: dict | None, trusted: Any) -> str:
    """How the diagnosis names the file's MISTAKE: "model", "rule", "rule, not first", or "" (it does not).

    As bench/bench_diagnosis.py counts it.

    By a model: the MISTAKE's own, a form of it (a model's `mistake`), or the one its scores equal
    (`SAME_SCORES_AS`). Else by a rule: where no model fits, the diagnosis names the rules whose tests
    fail; the file's RULE (or the rule its MISTAKE's model `breaks`) must be among them.
    """
    models = {m.id: m for m in trusted.MODELS}
    same = getattr(trusted, "SAME_SCORES_AS", {})  # mistakes that give exactly a model's scores
    found = diagnosis or {}
    said = found.get("mistake") or ""
    model = models.get(said)
    if found.get("kind") == "model" and model is not None:
        if entry.mistake in (model.id, getattr(model, "mistake", model.id)) or same.get(entry.mistake) == model.id:
            return "model"
    rule, rules = entry.rule or _breaks(entry.mistake, models, same), found.get("rules") or []
    if found.get("kind") == "rules" and rule and rule in rules:
        return "rule" if rules[0] == rule else "rule, not first"
    return ""


def _breaks(mistake: str, models: dict[str, Any], same: dict[str, str]) -> str:
    """The [scoring.rules] rule the model of `mistake` breaks ("" for none)."""
    model = models.get(same.get(mistake, mistake)) or next(
        (m for m in models.values() if getattr(m, "mistake", "") == mistake), None
    )
    return getattr(model, "breaks", "") or ""


def unnamed_reason(entry: Entry, diagnosis: dict | None, trusted: Any) -> str:
    """Why a MISTAKE file is not named, in one line."""
    found = diagnosis or {}
    said = found.get("mistake") or found.get("rules") or found.get("kind") or "nothing"
    models = {m.id: m for m in trusted.MODELS}
    if not entry.rule and not _breaks(entry.mistake, models, getattr(trusted, "SAME_SCORES_AS", {})):
        if entry.mistake not in models:
            return f"{entry.name}: MISTAKE {entry.mistake} is no model's id, and the file gives no RULE"
    return f"{entry.name}: MISTAKE {entry.mistake}{f' (RULE {entry.rule})' if entry.rule else ''}, but the diagnosis says {said}"
