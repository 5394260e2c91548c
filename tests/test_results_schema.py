"""The result model (grader/core/results.py): results.json read and written through it, and its doc made from it."""

from __future__ import annotations

import dataclasses
import json

import pytest
from test_golden_outputs import GOLDEN, SCENARIOS, _stable

from grader.core.results import (
    SCHEMA_VERSION,
    ClassRun,
    Diagnosis,
    Status,
    SubmissionResult,
    SubmissionStatus,
    TestResult,
)
from grader.reports import schema_doc
from grader.reports.files import results_json

# results.json's fields at schema version 1: other tools read them, so none may go (fields are only added).
FIELDS_V1 = {
    "ClassRun": {
        "schema_version", "exercise", "isolation", "isolation_note", "settings", "paths", "duration", "interrupted",
        "shard", "similar", "similar_note", "lms", "adjust", "unwritten", "submissions",
    },
    "SubmissionResult": {
        "submission", "path", "student", "note", "status", "message", "tests", "duration", "score", "max_score",
        "passed", "from_memo", "diagnosis", "source", "key", "reused", "lms_student", "adjustments", "adjusted_score",
    },
    "TestResult": {"name", "tier", "status", "message", "output", "score", "max_score"},
    "Diagnosis": {"mistake", "kind", "message", "example", "section", "rule", "explains_all", "rules", "text"},
    "Student": {"name", "lms_id", "login", "email", "late", "submitted_at", "layout", "path"},
}  # fmt: skip


def test_the_doc_holds_the_models_fields_as_the_code_says_them():
    """docs/results-schema.md's tables are the model's: run `python -m grader.reports.schema_doc` after changing it."""
    text = schema_doc.DOC.read_text(encoding="utf-8")
    assert schema_doc.updated(text) == text
    for cls in schema_doc.MODELS:
        for field in dataclasses.fields(cls):
            assert f"| `{field.name}` |" in text, (cls.__name__, field.name)


def test_a_field_without_its_line_cannot_be_documented():
    @dataclasses.dataclass
    class Undocumented:
        said: int
        """a field with its line"""
        unsaid: str

    with pytest.raises(schema_doc.DocError, match="no line under unsaid"):
        schema_doc.table(Undocumented)


def test_the_doc_says_each_type_as_a_reader_of_json_reads_it():
    assert schema_doc.type_text("list[TestResult] | None") == "list of [TestResult](#testresult), or null"
    assert schema_doc.type_text("tuple[int, int] | None") == "[integer, integer], or null"
    assert schema_doc.type_text("dict[str, str]") == "object of strings"


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_golden_results_json_reads_into_the_model_and_back_unchanged(scenario):
    document = json.loads((GOLDEN / scenario / "expected" / "results.json").read_text(encoding="utf-8"))
    run = ClassRun.from_json(document)
    assert run.schema_version == SCHEMA_VERSION and run.submissions
    assert _stable(run.as_json()) == {**document, "schema_version": SCHEMA_VERSION}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_results_json_from_lines_made_ahead_is_the_same_file(scenario):
    run = ClassRun.from_json(json.loads((GOLDEN / scenario / "expected" / "results.json").read_text(encoding="utf-8")))
    rows = [json.dumps(r.as_json()) for r in run.submissions]  # as write_outputs makes them while the pages are written
    assert results_json(run, rows) == results_json(run)


def test_no_field_of_a_published_version_is_ever_removed():
    models = {cls.__name__: {f.name for f in dataclasses.fields(cls)} for cls in schema_doc.MODELS}
    for name, fields in FIELDS_V1.items():
        assert fields <= models[name], (name, fields - models[name])


def test_statuses_are_enums_written_lower_case_and_read_back():
    test = TestResult("test_x", "hidden", "fail", "m", "", 0.0, 2.0)
    assert test.status is Status.FAIL and test.status == "fail"
    assert json.dumps(test.as_json()) == (
        '{"name": "test_x", "tier": "hidden", "status": "fail", "message": "m", "output": "", "score": 0.0, "max_score": 2.0}'
    )
    result = SubmissionResult.from_json({"submission": "a.py", "status": "not_graded", "tests": [test.as_json()]})
    assert result.status is SubmissionStatus.NOT_GRADED and result.tests == [test]
    with pytest.raises(ValueError):
        TestResult("test_x", "hidden", "passed", "", "", 0.0, 2.0)


def test_a_result_reads_back_field_for_field_and_keeps_its_json_order():
    line = json.loads((GOLDEN / SCENARIOS[0] / "expected" / "results.json").read_text(encoding="utf-8"))["submissions"][0]
    result = SubmissionResult.from_json(line)
    assert SubmissionResult.from_json(result.as_json()) == result
    assert list(result.as_json())[:4] == ["submission", "path", "student", "note"]
    assert "lms_student" not in result.as_json()  # the fields of an option not given stay out of the file


def test_text_that_cannot_be_written_is_made_valid_when_read():
    result = SubmissionResult.from_json({"submission": "caf\udce9.py", "message": "x \ud800"})
    assert result.submission == "caf\ufffd.py" and result.message == "x \ufffd"


def test_a_diagnosis_groups_under_its_mistake_else_its_first_rule_else_its_kind():
    def key(**fields) -> str:
        return Diagnosis.from_json({"kind": "model", "message": "m", **fields}).key

    assert key(mistake="no_clipping") == "no_clipping"
    assert key(mistake=None, kind="rules", rules=["round", "case"]) == "(rule: round)"
    assert key(mistake=None, kind="constant") == "(one answer)" and key(mistake=None, kind="no_answer") == "(no answer)"
    assert key(mistake=None, kind="unknown") == "(no known mistake)"
