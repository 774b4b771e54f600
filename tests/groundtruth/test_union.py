import pytest

from docevals_mlflow.groundtruth.consensus import tally
from docevals_mlflow.groundtruth.models import GenerationReport
from docevals_mlflow.groundtruth.union import resolve_ground_truth_union
from tests.groundtruth.generation_fakes import OMIT, generation

FIELDS = ["$.currency", "$.amount", "$.name", "$.iban", "$.date"]


@pytest.fixture
def report():
    providers = [
        generation(
            "a",
            {"$.currency": "EUR", "$.amount": 1, "$.name": "Ann", "$.iban": OMIT, "$.date": "x"},
        ),
        generation(
            "b",
            {"$.currency": "EUR", "$.amount": 2, "$.name": OMIT, "$.iban": OMIT, "$.date": "X"},
        ),
        generation(
            "c",
            {
                "$.currency": "EUR",
                "$.amount": OMIT,
                "$.name": "ann",
                "$.iban": OMIT,
                "$.date": OMIT,
            },
        ),
    ]
    result = tally(providers, FIELDS, 1.0)
    return GenerationReport(
        case_id="c1",
        expected_fields=FIELDS,
        providers=result.providers,
        consensus=result.consensus,
        disagreements=result.disagreements,
        overall_agreement=result.overall_agreement,
    )


def test_one_sided_values_are_accepted_and_conflicts_stay(report):
    union = resolve_ground_truth_union(report)
    assert union.stage == "union"
    assert union.parent_sha256 == report.digest
    assert [(row.path, row.expected_value, row.resolved_by) for row in union.consensus] == [
        ("$.currency", "EUR", "panel"),
        ("$.name", "Ann", "union"),
        ("$.date", "x", "union"),
    ]
    name = union.consensus[1]
    assert name.providers == ["a", "c"]
    assert name.agreement == pytest.approx(2 / 3)
    assert {item.path: item.reason for item in union.disagreements} == {
        "$.amount": "tie",
        "$.iban": "omitted_by_all",
    }
    assert union.requires_human_review
    assert union.providers == report.providers
    assert union.usage.requests == 0
    reference = union.provisional_reference
    assert reference.authority == "generated"
    assert reference.metadata["stage"] == "union"


def test_union_is_idempotent_on_its_own_result(report):
    once = resolve_ground_truth_union(report)
    twice = resolve_ground_truth_union(once)
    assert twice.consensus == once.consensus
    assert twice.disagreements == once.disagreements
    assert twice.parent_sha256 == once.digest


def test_ties_are_not_accepted_by_the_union():
    providers = [generation("a", {"$.x": 1}), generation("b", {"$.x": 2})]
    result = tally(providers, ["$.x"], 0.5)
    report = GenerationReport(
        case_id="c1",
        expected_fields=["$.x"],
        providers=result.providers,
        disagreements=result.disagreements,
    )
    union = resolve_ground_truth_union(report)
    assert union.consensus == []
    assert [item.reason for item in union.disagreements] == ["tie"]
