from __future__ import annotations

import pytest

from docevals_mlflow import (
    ConfigurationError,
    DocumentSchema,
    EvaluationCase,
    FieldMetric,
    PipelineCase,
    PipelineEvaluator,
    artifact_from_value,
)

SCHEMA = DocumentSchema.model_validate(
    {
        "schema_id": "invoices",
        "classes": [
            {
                "name": "Invoice",
                "fields": {
                    "number": {"method": "EXACT"},
                    "total": {"method": "NUMERIC_EXACT", "threshold": 0.01},
                    "lines": {
                        "items": {
                            "fields": {
                                "sku": {"method": "EXACT"},
                                "amount": {"method": "NUMERIC_EXACT"},
                            }
                        }
                    },
                },
            }
        ],
    }
)
TRUTH = {
    "number": "INV-1",
    "total": "1,250.00",
    "lines": [{"sku": "A", "amount": 1000}, {"sku": "B", "amount": 250}],
}


def case(prediction, *, authority="ground_truth", **metadata):
    return EvaluationCase(
        case_id="inv-1",
        stage_id="extract",
        prediction=prediction,
        references=[artifact_from_value(TRUTH, authority=authority, artifact_id="truth")],
        metadata=metadata,
    )


def test_matching_prediction_passes_with_reordered_lines():
    prediction = {
        "number": "INV-1",
        "total": 1250,
        "lines": [{"sku": "B", "amount": "250.00"}, {"sku": "A", "amount": "$1,000"}],
    }
    result = FieldMetric(SCHEMA).evaluate(case(prediction))
    assert result.verdict == "pass"
    assert result.counts["tp"] == 6
    assert result.counts["items_matched"] == 2
    assert result.scores["f1"] == 1.0
    assert result.basis == "ground_truth"


def test_wrong_and_missing_fields_fail_with_rows():
    prediction = {"number": "INV-2", "lines": [{"sku": "A", "amount": 1000}]}
    result = FieldMetric(SCHEMA).evaluate(case(prediction, document_class="Invoice"))
    assert result.verdict == "fail"
    assert (result.counts["fd"], result.counts["fn"]) == (1, 3)
    assert result.counts["items_missed"] == 1
    rows = {row["path"]: (row["outcome"], row["status"]) for row in result.details["fields"]}
    assert rows == {
        "$.number": ("FD", "incorrect"),
        "$.total": ("FN", "missing"),
        "$.lines[1].sku": ("FN", "missing"),
        "$.lines[1].amount": ("FN", "missing"),
    }
    assert result.details["document_class"] == "Invoice"


def test_min_scores_decide_the_verdict():
    prediction = {**TRUTH, "number": "INV-9"}
    assert FieldMetric(SCHEMA, min_scores={"f1": 0.8}).evaluate(case(prediction)).verdict == "pass"
    assert FieldMetric(SCHEMA, min_scores={"f1": 0.95}).evaluate(case(prediction)).verdict == "fail"
    assert FieldMetric(SCHEMA, min_scores={"fdr": 0.2}).evaluate(case(prediction)).verdict == "pass"
    with pytest.raises(ConfigurationError, match="unknown metrics in min_scores: f2"):
        FieldMetric(SCHEMA, min_scores={"f2": 1.0})


def test_generated_reference_is_provisional_and_evidence_is_ignored():
    result = FieldMetric(SCHEMA).evaluate(case(TRUTH, authority="generated"))
    assert result.basis.startswith("generated (provisional")
    evidence = FieldMetric(SCHEMA).evaluate(case(TRUTH, authority="evidence"))
    assert evidence.verdict == "not_applicable"


def test_confidence_from_case_metadata_reaches_rows():
    prediction = {**TRUTH, "number": "INV-9"}
    result = FieldMetric(SCHEMA).evaluate(case(prediction, confidence={"$.number": 0.42}))
    (row,) = result.details["fields"]
    assert row["confidence"] == 0.42


def test_field_metric_in_a_pipeline_with_checkpoint_config(tmp_path):
    pipeline = PipelineCase(pipeline_id="p", stages=[case({**TRUTH})])
    evaluator = PipelineEvaluator(default_metrics=[FieldMetric(SCHEMA)])
    report = evaluator.evaluate(pipeline, checkpoint_dir=tmp_path)
    assert report.stage("extract").verdict == "pass"
    again = evaluator.evaluate(pipeline, checkpoint_dir=tmp_path)
    assert again.checkpoint is not None
    assert again.checkpoint.reused == ["extract"]
