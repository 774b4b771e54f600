import json

import pytest

from docevals_mlflow import artifact_from_value
from docevals_mlflow.errors import InputError
from docevals_mlflow.groundtruth.adjudicator import GroundTruthAdjudicator
from docevals_mlflow.groundtruth.panel import GroundTruthPanel
from tests.groundtruth.generation_fakes import OMIT, RecordingReader, reader

FIELDS = ["$.currency", "$.amount", "$.account_name", "$.iban"]
SOURCES = [
    artifact_from_value(
        "Statement for Ann Smith. Balance 120.00 EUR.", authority="evidence", artifact_id="page"
    )
]


@pytest.fixture
def first_reading():
    panel = GroundTruthPanel(
        {
            "a": reader(
                {"$.currency": "EUR", "$.amount": "QQ-120", "$.account_name": "Ann Smith"},
                model="m1",
            ),
            "b": reader(
                {"$.currency": "EUR", "$.amount": "QQ-210", "$.account_name": OMIT}, model="m2"
            ),
        },
        "Read the statement.",
        FIELDS,
    )
    return panel.generate("statement-001", SOURCES)


def test_the_first_reading_has_disputes(first_reading):
    reasons = {item.path: item.reason for item in first_reading.disagreements}
    assert reasons == {
        "$.amount": "tie",
        "$.account_name": "omitted_by_some",
        "$.iban": "omitted_by_all",
    }


def test_only_disputed_paths_are_re_read_blind(first_reading):
    second_a = RecordingReader({"$.amount": 120, "$.account_name": "Ann Smith"}, model="m1")
    second_b = RecordingReader({"$.amount": "120.00", "$.account_name": "Ann SMITH"}, model="m2")
    adjudicator = GroundTruthAdjudicator({"a": second_a, "b": second_b})
    result = adjudicator.adjudicate(first_reading, SOURCES)
    (request,) = second_a.requests
    assert request.task["expected_fields"] == ["$.amount", "$.account_name", "$.iban"]
    assert request.task["purpose"] == "ground_truth_adjudication"
    sent = json.dumps({"instructions": request.instructions, "task": request.task})
    assert "QQ-" not in sent  # first-reading candidates are never shown
    assert "Read the statement." in request.instructions

    assert result.stage == "adjudication"
    assert result.parent_sha256 == first_reading.digest
    assert [(row.path, row.resolved_by) for row in result.consensus] == [
        ("$.currency", "panel"),
        ("$.amount", "adjudication"),
        ("$.account_name", "adjudication"),
    ]
    assert result.consensus[1].expected_value == 120  # label "a" first
    (iban,) = result.disagreements
    assert iban.path == "$.iban"
    assert iban.reason == "adjudication_unresolved"
    assert iban.agreement == 0.0
    assert result.requires_human_review
    assert [p.provider for p in result.providers] == ["a", "b"]
    assert result.usage.requests == 0  # RecordingReader reports no usage
    assert result.overall_agreement == pytest.approx(3 / 4)


def test_unresolved_fields_list_every_value_either_reading_saw(first_reading):
    adjudicator = GroundTruthAdjudicator(
        {
            "a": reader({"$.amount": "QQ-120", "$.account_name": "Ann"}, model="m1"),
            "b": reader({"$.amount": "qq-999", "$.account_name": "Ann"}, model="m2"),
        }
    )
    result = adjudicator.adjudicate(first_reading, SOURCES)
    amount = next(item for item in result.disagreements if item.path == "$.amount")
    assert amount.reason == "adjudication_unresolved"
    assert {c.value: c.votes for c in amount.candidates} == {
        "QQ-120": 1.0,
        "qq-999": 1.0,
        "QQ-210": 0.0,  # first reading only: listed, no vote now
    }
    assert [c.providers for c in amount.candidates if c.value == "QQ-120"] == [["a"]]
    names = next(row for row in result.consensus if row.path == "$.account_name")
    assert names.expected_value == "Ann"


def test_a_majority_threshold_can_settle_more(first_reading):
    adjudicator = GroundTruthAdjudicator(
        {
            "a": reader({"$.amount": 120}, model="m1"),
            "b": reader({"$.amount": 120}, model="m2"),
            "c": reader({"$.amount": 121}, model="m3"),
        },
        minimum_agreement=0.6,
    )
    result = adjudicator.adjudicate(first_reading, SOURCES)
    amount = next(row for row in result.consensus if row.path == "$.amount")
    assert amount.agreement == pytest.approx(2 / 3)
    assert result.minimum_agreement == 0.6


def test_nothing_disputed_means_nothing_asked():
    first = reader({"$.total": 1}, model="m1")
    second = reader({"$.total": 1}, model="m2")
    generation = GroundTruthPanel({"a": first, "b": second}, "", ["$.total"]).generate(
        "c1", SOURCES
    )
    again_a, again_b = reader({}, model="m1"), reader({}, model="m2")
    result = GroundTruthAdjudicator({"a": again_a, "b": again_b}).adjudicate(generation, SOURCES)
    assert again_a.calls == again_b.calls == 0
    assert result.stage == "adjudication"
    assert result.parent_sha256 == generation.digest
    assert result.consensus == generation.consensus
    assert not result.requires_human_review


def test_the_sources_must_be_the_ones_read(first_reading):
    adjudicator = GroundTruthAdjudicator({"a": reader({}, model="m1"), "b": reader({}, model="m2")})
    edited = [
        artifact_from_value("Balance 999.00 EUR.", authority="evidence", artifact_id="page"),
    ]
    with pytest.raises(InputError, match="changed: page"):
        adjudicator.adjudicate(first_reading, edited)
    other = [artifact_from_value("x", authority="evidence", artifact_id="other")]
    with pytest.raises(InputError, match="missing: page; not read before: other"):
        adjudicator.adjudicate(first_reading, other)
