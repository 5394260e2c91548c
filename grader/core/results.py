"""The result of grading, typed: a test's verdict, a submission's result, a class's run, as results.json holds them.

The page builds the same `TestResult`s (it runs grader/core unchanged); `grade`, `merge` and the
Gradescope autograder build a `ClassRun` (grader/judging/pipeline.py), and every renderer reads
these attributes, never a dictionary. `as_json` writes the fields in results.json's order and
`from_json` reads them back; fields are only ever added (`SCHEMA_VERSION` counts the changes a
reader must know about). docs/results-schema.md's field tables are made from this module: the
string under each field is its line there (grader/reports/schema_doc.py; tests/test_results_schema.py
checks they agree).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar

from grader.core.diagnosis import full_text
from grader.core.safe_text import clean

SCHEMA_VERSION = 1


class Status(StrEnum):
    """A test's verdict. A `StrEnum`: it is its lower-case value, in JSON and in comparisons."""

    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"
    TIMEOUT = "timeout"
    NOT_RUN = "not_run"


class SubmissionStatus(StrEnum):
    """Whether a submission was graded: `error` when it could not be (it did not load), `not_graded` when the run stopped first."""

    GRADED = "graded"
    ERROR = "error"
    NOT_GRADED = "not_graded"


@dataclass
class TestResult:
    """One test's verdict and the points the grading policy paid for it."""

    name: str
    """the test's name, with its parameter (`test_rule[uppercase_reference]`)"""
    tier: str
    """its tier, as exercise.toml names it"""
    status: Status
    """`pass`, `fail`, `error`, `timeout` or `not_run`"""
    message: str
    """why it did not pass ("" when it did)"""
    output: str
    """what the submission printed during that test, its head, at most 500 characters, with how much was cut"""
    score: float
    """the points it earned (docs/scoring.md)"""
    max_score: float
    """the points it can earn"""

    # pytest collects classes named Test*; this one is data.
    __test__ = False

    def __post_init__(self) -> None:
        if type(self.status) is not Status:
            self.status = Status(self.status)

    def as_json(self) -> dict[str, Any]:
        return dict(vars(self))

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TestResult:
        return cls(
            str(data["name"]),
            str(data.get("tier", "")),
            Status(data.get("status", "not_run")),
            str(data.get("message", "")),
            str(data.get("output", "")),
            float(data.get("score", 0.0)),
            float(data.get("max_score", 0.0)),
        )


@dataclass(frozen=True)
class Diagnosis:
    """The mistake the diagnosis names for a failing submission (docs/feedback.md)."""

    mistake: str | None
    """a misconception model's id (two at once: `a+b`), or null when no model fits"""
    kind: str
    """`model`, `models` (two), `rules` (no model fits: the statement's rules whose tests fail), `unknown`, `constant` (one answer to every input) or `no_answer`"""
    message: str
    """one sentence for the student"""
    example: str | None
    """a call that shows it: a probe's or a visible test's, never a secret input"""
    section: str | None
    """where the statement says the rule it breaks"""
    rule: str | None
    """that rule, as the statement words it"""
    explains_all: bool
    """whether the mistake explains every failing answer"""
    rules: list[str] = field(default_factory=list)
    """the ids of `[scoring.rules]` it names, the likeliest first"""
    text: str = ""
    """the sentence every view shows: `message`, and the example when there is one"""

    @property
    def key(self) -> str:
        """The name a class groups it under (the class report, `--adjust`'s `[diagnosis.NAME]`).

        A model's id; where no model fits, the rule the failing tests point to first ("(rule: round)"),
        "(one answer)" for one answer to every input, "(no answer)", or "(no known mistake)".
        """
        if self.mistake:
            return self.mistake
        if self.kind == "rules" and self.rules:
            return f"(rule: {self.rules[0]})"
        return {"no_answer": "(no answer)", "constant": "(one answer)"}.get(self.kind, "(no known mistake)")

    def as_json(self) -> dict[str, Any]:
        return {**vars(self), "rules": list(self.rules)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Diagnosis:
        def text_or_none(name: str) -> str | None:
            value = data.get(name)
            return None if value is None else str(value)

        said = {"example": None, **data}
        return cls(
            text_or_none("mistake"),
            str(data.get("kind") or ""),
            str(data.get("message") or ""),
            text_or_none("example"),
            text_or_none("section"),
            text_or_none("rule"),
            bool(data.get("explains_all", False)),
            [str(rule) for rule in data.get("rules") or []],
            str(data.get("text") or full_text(said)),
        )


@dataclass(frozen=True)
class Student:
    """Who a submission is from, as far as the download says (docs/lms.md); null where the layout does not give it."""

    name: str | None = None
    """the student's full name"""
    lms_id: str | None = None
    """the LMS's own id of the student (a user id, a participant number, a student id)"""
    login: str | None = None
    """a login, as the LMS or the Git host names the student"""
    email: str | None = None
    """an e-mail address"""
    late: bool | None = None
    """whether the LMS flagged it late"""
    submitted_at: str | None = None
    """when it was submitted, as the LMS wrote it"""
    layout: str = "folder"
    """the download's layout: the name of the LMS whose adapter read it (grader/lms/), or `folder`"""
    path: str | None = None
    """its path in the download"""

    def as_json(self) -> dict[str, Any]:
        return dict(vars(self))

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Student:
        def text(name: str) -> str | None:
            value = data.get(name)
            return None if value is None else str(value)

        late = data.get("late")
        return cls(
            text("name"),
            text("lms_id"),
            text("login"),
            text("email"),
            None if late is None else bool(late),
            text("submitted_at"),
            str(data.get("layout") or "folder"),
            text("path"),
        )


@dataclass(frozen=True)
class LmsStudent:
    """A student on the roster (`--roster`)."""

    lms_id: str
    """the roster's id of the student"""
    name: str
    """the name the roster gives"""

    def as_json(self) -> dict[str, Any]:
        return {"lms_id": self.lms_id, "name": self.name}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LmsStudent:
        return cls(str(data.get("lms_id") or ""), str(data.get("name") or ""))


@dataclass(frozen=True, kw_only=True)
class Adjustment:
    """One change `--adjust` made to a score, and why (docs/lms-gradebook.md); a field that does not apply is left out."""

    by: str
    """`diagnosis` (a `[diagnosis.NAME]` entry), `student` (a `[[student]]` entry) or `limit` (the score kept within 0 and the maximum)"""
    who: str | None = None
    """a `[[student]]` entry's `who`"""
    diagnosis: str | None = None
    """a `[diagnosis.NAME]` entry's NAME"""
    score: float | None = None
    """a `[[student]]` entry's new score, when it set one"""
    change: float
    """the points added (negative: taken away)"""
    reason: str
    """the reason (or the diagnosis's comment), as the instructor wrote it"""

    def as_json(self) -> dict[str, Any]:
        # results.json's order: by, then who or diagnosis, then score, change, reason.
        data: dict[str, Any] = {"by": self.by}
        for name, value in (("who", self.who), ("diagnosis", self.diagnosis), ("score", self.score)):
            if value is not None:
                data[name] = value
        data["change"] = self.change
        data["reason"] = self.reason
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Adjustment:
        score = data.get("score")
        return cls(
            by=str(data.get("by") or ""),
            who=None if data.get("who") is None else str(data["who"]),
            diagnosis=None if data.get("diagnosis") is None else str(data["diagnosis"]),
            score=None if score is None else float(score),
            change=float(data.get("change") or 0.0),
            reason=str(data.get("reason") or ""),
        )

    def describe(self) -> str:
        """The adjustment as a line a person reads: "diagnosis no_clipping: +5: reason"."""
        points = f"{self.change:+g}" if self.change else "±0"
        if self.by == "student" and self.score is not None:
            points = f"set to {self.score:g} ({self.change:+g})"
        origin = {"diagnosis": f"diagnosis {self.diagnosis or ''}", "student": "instructor", "limit": "limit"}.get(
            self.by, self.by
        )
        return f"{origin}: {points}: {self.reason}"


@dataclass(frozen=True, kw_only=True)
class SubmissionResult:
    """One submission's result: one line of results.json's `submissions`."""

    submission: str
    """its name: its path in the folder graded (`alice.py`, `aaron/zoe`); bytes of a file name that are not UTF-8 are written `\\xff`"""
    path: str
    """the file graded, by its path in that folder (`aaron/zoe/answer.py`)"""
    student: Student | None
    """who it is, as far as the download says"""
    note: str
    """what to know about the file graded (two files define the function, a helper that cannot be imported), or "": shown in every view"""
    status: SubmissionStatus
    """`graded`; `not_graded` when the run was interrupted first (Ctrl+C); or `error` when it could not be graded at all (`message` says why, in one line: a syntax error and its line, an import error, no such function (with a close name if there is one), a wrong signature, not callable, an empty file, not UTF-8 (or not the encoding its coding line names), larger than 1 MB, a link, a FIFO or device); every test is then `error` with that message"""
    message: str
    """why it could not be graded, in one line; empty when it was"""
    tests: list[TestResult]
    """one per test, in the order the test files list them"""
    duration: float
    """seconds spent on it"""
    score: float
    """points earned, as the grading policy pays them ([docs/scoring.md](scoring.md)): the tests' own, never adjusted"""
    max_score: float
    """points possible"""
    passed: int
    """tests passed"""
    from_memo: int = 0
    """how many of its verdicts came from the memo"""
    diagnosis: Diagnosis | None = None
    """the mistake the diagnosis names for a failing submission, or null"""
    source: str | None = None
    """the code as graded (a notebook's code cells), at most 200,000 characters, or null when the file could not be read; the class report shows it next to the results"""
    key: str | None = None
    """what `grade` reuses a result by when the same command runs again: a digest of the code, the settings and the kit"""
    reused: bool = False
    """whether this run kept the result of the last run into the same folder (the code and the kit unchanged)"""
    lms_student: LmsStudent | None = None
    """only with `--roster`: the roster's row it matched"""
    adjustments: list[Adjustment] | None = None
    """only with `--adjust`, when an entry names it: each change to its score, in the order applied"""
    adjusted_score: float | None = None
    """only with `--adjust`, when an entry names it: the score after the instructor's changes (`score` stays the tests')"""

    # Left out of results.json when None (they were added by the options that make them).
    ABSENT_WHEN_NONE: ClassVar[tuple[str, ...]] = ("lms_student", "adjustments", "adjusted_score")

    @property
    def final_score(self) -> float:
        """The score every output shows and every gradebook holds: the adjusted one where there is one."""
        return self.adjusted_score if self.adjusted_score is not None else self.score

    @property
    def all_passed(self) -> bool:
        return self.status == SubmissionStatus.GRADED and bool(self.tests) and all(t.status == Status.PASS for t in self.tests)

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "submission": self.submission,
            "path": self.path,
            "student": self.student.as_json() if self.student is not None else None,
            "note": self.note,
            "status": self.status,
            "message": self.message,
            "tests": [t.as_json() for t in self.tests],
            "duration": self.duration,
            "score": self.score,
            "max_score": self.max_score,
            "passed": self.passed,
            "from_memo": self.from_memo,
            "diagnosis": self.diagnosis.as_json() if self.diagnosis is not None else None,
            "source": self.source,
            "key": self.key,
            "reused": self.reused,
        }
        if self.lms_student is not None:
            data["lms_student"] = self.lms_student.as_json()
        if self.adjustments is not None:
            data["adjustments"] = [a.as_json() for a in self.adjustments]
        if self.adjusted_score is not None:
            data["adjusted_score"] = self.adjusted_score
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SubmissionResult:
        """A result as results.json (or a worker) gives it; text that would not encode is made valid (safe_text.clean)."""
        data = clean(data)
        tests = [TestResult.from_json(t) for t in data.get("tests") or []]
        student, diagnosis, lms_student = data.get("student"), data.get("diagnosis"), data.get("lms_student")
        adjustments, adjusted = data.get("adjustments"), data.get("adjusted_score")
        source = data.get("source")
        return cls(
            submission=str(data["submission"]),
            path=str(data.get("path") or ""),
            student=Student.from_json(student) if student else None,
            note=str(data.get("note") or ""),
            status=SubmissionStatus(data.get("status", "graded")),
            message=str(data.get("message") or ""),
            tests=tests,
            duration=float(data.get("duration") or 0.0),
            score=float(data.get("score") or 0.0),
            max_score=float(data.get("max_score") or 0.0),
            passed=int(data.get("passed") or 0),
            from_memo=int(data.get("from_memo") or 0),
            diagnosis=Diagnosis.from_json(diagnosis) if diagnosis else None,
            source=None if source is None else str(source),
            key=None if data.get("key") is None else str(data["key"]),
            reused=bool(data.get("reused", False)),
            lms_student=LmsStudent.from_json(lms_student) if lms_student else None,
            adjustments=[Adjustment.from_json(a) for a in adjustments] if adjustments is not None else None,
            adjusted_score=None if adjusted is None else float(adjusted),
        )


@dataclass(frozen=True)
class RunSettings:
    """The limits a class was graded with."""

    timeout: float
    """seconds for one call into a submission"""
    budget: float
    """seconds of wall time for one submission in all"""
    jobs: int
    """submissions graded at once"""

    def as_json(self) -> dict[str, Any]:
        return {"timeout": self.timeout, "budget": self.budget, "jobs": self.jobs}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunSettings:
        return cls(float(data.get("timeout") or 0.0), float(data.get("budget") or 0.0), int(data.get("jobs") or 0))


@dataclass(frozen=True)
class SimilarPair:
    """Two submissions with identical or near-identical code (docs/similarity.md)."""

    a: str
    """one submission's name (the first in sorted order)"""
    b: str
    """the other's"""
    overlap: float
    """the share of their code that overlaps, from 0 to 1 (rounded to 3 decimals)"""
    identical: bool
    """the same code but for names, comments and layout"""

    def as_json(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "overlap": self.overlap, "identical": self.identical}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SimilarPair:
        return cls(str(data["a"]), str(data["b"]), float(data.get("overlap") or 0.0), bool(data.get("identical", False)))


@dataclass(frozen=True)
class Unmatched:
    """A submission the roster gave no student."""

    submission: str
    """its name"""
    reason: str
    """why (matches nobody, two students, a student who already has one, a tie)"""

    def as_json(self) -> dict[str, Any]:
        return {"submission": self.submission, "reason": self.reason}


@dataclass(frozen=True)
class Contested:
    """A student that several submissions claim equally: none is placed, and the gradebook's cell stays blank."""

    lms_id: str
    """the student's roster id"""
    name: str
    """their name"""
    submissions: list[str]
    """the submissions that claim them"""

    def as_json(self) -> dict[str, Any]:
        return {"lms_id": self.lms_id, "name": self.name, "submissions": list(self.submissions)}


@dataclass(frozen=True)
class LmsSummary:
    """What `--roster` matched (docs/lms-gradebook.md)."""

    roster: str
    """the roster's path"""
    kind: str
    """which LMS's export it is"""
    matched: int
    """submissions matched with a student"""
    missing: list[LmsStudent]
    """the students on the roster without a submission"""
    unmatched: list[Unmatched]
    """the submissions matching nobody, each with the reason"""
    contested: list[Contested]
    """the students several submissions claim equally"""
    warnings: list[str] = field(default_factory=list)
    """what reading the roster and writing the gradebook warned of (bytes that are not UTF-8, rows the LMS locks)"""

    def as_json(self) -> dict[str, Any]:
        return {
            "roster": self.roster,
            "kind": self.kind,
            "matched": self.matched,
            "missing": [s.as_json() for s in self.missing],
            "unmatched": [u.as_json() for u in self.unmatched],
            "contested": [c.as_json() for c in self.contested],
            "warnings": list(self.warnings),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LmsSummary:
        return cls(
            str(data.get("roster") or ""),
            str(data.get("kind") or ""),
            int(data.get("matched") or 0),
            [LmsStudent.from_json(s) for s in data.get("missing") or []],
            [Unmatched(str(u.get("submission") or ""), str(u.get("reason") or "")) for u in data.get("unmatched") or []],
            [
                Contested(str(c.get("lms_id") or ""), str(c.get("name") or ""), [str(s) for s in c.get("submissions") or []])
                for c in data.get("contested") or []
            ],
            [str(w) for w in data.get("warnings") or []],
        )


@dataclass(frozen=True)
class AdjustSummary:
    """What `--adjust` did (docs/lms-gradebook.md)."""

    file: str
    """the adjustments file"""
    adjusted: int
    """submissions whose score or comments it changed"""
    unused: list[str]
    """its entries that matched nobody, each said in a sentence"""
    clamped: list[str]
    """the results it would have put below 0 or above the maximum, kept within them"""

    def as_json(self) -> dict[str, Any]:
        return {"file": self.file, "adjusted": self.adjusted, "unused": list(self.unused), "clamped": list(self.clamped)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AdjustSummary:
        return cls(
            str(data.get("file") or ""),
            int(data.get("adjusted") or 0),
            [str(u) for u in data.get("unused") or []],
            [str(c) for c in data.get("clamped") or []],
        )


@dataclass(frozen=True)
class Unwritten:
    """An output this run could not write; every other was written."""

    output: str
    """the file or folder (`feedback/`, `grades.csv`)"""
    error: str
    """the error (`OSError: [Errno 28] No space left on device`)"""

    def as_json(self) -> dict[str, Any]:
        return {"output": self.output, "error": self.error}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Unwritten:
        return cls(str(data.get("output") or ""), str(data.get("error") or ""))


@dataclass(frozen=True, kw_only=True)
class ClassRun:
    """A class graded (or shards merged): the whole of results.json."""

    schema_version: int = SCHEMA_VERSION
    """the version of this format: it grows when a reader must learn something new, and fields are only ever added"""
    exercise: str
    """the exercise's id"""
    isolation: str
    """how submissions were isolated: `bubblewrap`, `separate-uid` or `none` (`mixed: ...` for merged shards that differ)"""
    isolation_note: str | None = None
    """what each submission got on that machine, in a sentence (null after `merge`)"""
    settings: RunSettings | None = None
    """the limits it was graded with"""
    paths: dict[str, str] | None = None
    """which way the tests and the property tests ran (`tests`: `memoized` or `plain`; `property_tests`; `hypothesis`, its version); null after `merge`"""
    duration: float = 0.0
    """seconds the run took (the parts' sum after `merge`)"""
    interrupted: bool = False
    """true when Ctrl+C stopped the run: submissions it did not reach are `not_graded`"""
    shard: tuple[int, int] | None = None
    """`[K, N]` for `grade --shard K/N`, else null"""
    similar: list[SimilarPair] | None = None
    """the pairs of submissions with identical or near-identical code, most overlap first (null if the check could not run)"""
    similar_note: str = ""
    """more about the check: why it could not run, or how many pairs there were past those listed"""
    lms: LmsSummary | None = None
    """only with `--roster`: who matched, who is missing, who matched nobody"""
    adjust: AdjustSummary | None = None
    """only with `--adjust`: the file, how many results it changed, what matched nobody"""
    unwritten: list[Unwritten] | None = None
    """only when some output could not be written: each, with its error"""
    submissions: list[SubmissionResult]
    """one per submission, in the class's order (by name); one line each in the file, so `grep alice results.json` shows a student's whole result"""

    ABSENT_WHEN_NONE: ClassVar[tuple[str, ...]] = ("lms", "adjust", "unwritten")

    def as_json(self) -> dict[str, Any]:
        """results.json's document, its fields in the file's order (the submissions last)."""
        data: dict[str, Any] = {
            "schema_version": self.schema_version,
            "exercise": self.exercise,
            "isolation": self.isolation,
            "isolation_note": self.isolation_note,
            "settings": self.settings.as_json() if self.settings is not None else None,
            "paths": dict(self.paths) if self.paths is not None else None,
            "duration": self.duration,
            "interrupted": self.interrupted,
            "shard": list(self.shard) if self.shard is not None else None,
            "similar": [p.as_json() for p in self.similar] if self.similar is not None else None,
            "similar_note": self.similar_note,
        }
        if self.lms is not None:
            data["lms"] = self.lms.as_json()
        if self.adjust is not None:
            data["adjust"] = self.adjust.as_json()
        if self.unwritten is not None:
            data["unwritten"] = [u.as_json() for u in self.unwritten]
        data["submissions"] = [r.as_json() for r in self.submissions]
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ClassRun:
        """A results.json document (any version: what it lacks takes its default)."""
        settings, shard, similar = data.get("settings"), data.get("shard"), data.get("similar")
        lms, adjust, unwritten, paths = data.get("lms"), data.get("adjust"), data.get("unwritten"), data.get("paths")
        note = data.get("isolation_note")
        return cls(
            exercise=str(data.get("exercise") or ""),
            isolation=str(data.get("isolation") or ""),
            submissions=[SubmissionResult.from_json(r) for r in data.get("submissions") or []],
            isolation_note=None if note is None else str(clean(note)),
            settings=RunSettings.from_json(settings) if settings else None,
            paths={str(k): str(v) for k, v in paths.items()} if isinstance(paths, Mapping) else None,
            duration=float(data.get("duration") or 0.0),
            interrupted=bool(data.get("interrupted", False)),
            shard=(int(shard[0]), int(shard[1])) if shard else None,
            similar=[SimilarPair.from_json(clean(p)) for p in similar] if similar is not None else None,
            similar_note=str(clean(data.get("similar_note") or "")),
            lms=LmsSummary.from_json(clean(lms)) if lms else None,
            adjust=AdjustSummary.from_json(clean(adjust)) if adjust else None,
            unwritten=[Unwritten.from_json(clean(u)) for u in unwritten] if unwritten else None,
            schema_version=int(data.get("schema_version") or SCHEMA_VERSION),
        )
