"""Diagnostics as MLflow metrics, and the comparison seeing them."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from docevals_mlflow import (
    build_suite_report,
    compare_documents,
    compare_runs,
    load_run_snapshot,
    log_evaluation_report,
    log_field_comparison,
)
from docevals_mlflow.diagnostics import Counterfactual, RecordedRerun
from tests.diagnostics.pipelines import TRUE_ITEMS, broken_calculate, calculate, evaluator, invoice


def documents(wrong_confidence: float) -> list[dict[str, object]]:
    """Ten invoices; a wrong total in the last two, with the given confidence."""
    records = []
    for index in range(10):
        wrong = index >= 8
        records.append(
            {
                "id": f"doc-{index}",
                "expected": {"total": 10, "vendor": "ACME"},
                "predicted": {"total": 11 if wrong else 10, "vendor": "ACME"},
                "confidence": {
                    "$.total": wrong_confidence if wrong else 0.9,
                    "$.vendor": 0.95,
                },
            }
        )
    return records


def test_calibration_metrics_are_logged_and_compared(mlflow_store):
    first = log_field_comparison(compare_documents(documents(0.2)), run_name="honest")
    second = log_field_comparison(compare_documents(documents(0.99)), run_name="overconfident")
    metrics = MlflowClient(mlflow_store).get_run(first.run_id).data.metrics
    assert metrics["calibration/overall/auroc"] == 1.0
    assert metrics["calibration/overall/fields"] == 20
    assert metrics["calibration/overall/errors"] == 2
    # Per field and per review budget: figure tables, read back as keys for comparisons.
    assert not any(key.startswith(("calibration/total", "review_")) for key in metrics)
    figures = load_run_snapshot(first.run_id).metrics
    assert figures["calibration/total/auroc"] == 1.0
    assert "calibration/vendor/auroc" not in figures  # no wrong vendor: undefined
    assert figures["calibration/vendor/brier"] == pytest.approx(0.05**2)
    # Two wrong of 20 fields: the 10% least confident are exactly those two.
    assert figures["review_budget/10pct/error_capture"] == 1.0
    assert figures["review_budget/5pct/error_capture"] == 0.5
    assert figures["review_threshold/90pct/confidence"] == 0.2
    assert figures["review_threshold/90pct/review_rate"] == 0.1

    comparison = compare_runs(
        load_run_snapshot(first.run_id), load_run_snapshot(second.run_id), resamples=100
    )
    moved = comparison.pairs[0].metrics.set_index("key")
    assert moved.loc["calibration/overall/auroc", "delta"] == -1.0
    assert moved.loc["review_budget/10pct/error_capture", "candidate"] == 0.0
    assert moved.loc["calibration/total/auroc", "subject"] == "$.total"


def test_counterfactual_and_cascade_metrics(mlflow_store):
    recorded = RecordedRerun(pipeline_id="b", stage_id="calculate", prediction={"total": 16.5})
    reports = evaluator(
        Counterfactual(actions={"calculate": calculate}, reruns=[recorded])
    ).evaluate_batch(
        [
            invoice("a", calculate),
            invoice("b", broken_calculate),
            invoice("c", calculate, extracted=TRUE_ITEMS),
        ]
    )
    suite = build_suite_report(reports, suite_id="invoices")
    stages = [stage for report in reports for stage in report.stage_reports]
    logged = log_evaluation_report(suite, stage_reports=stages)
    client = MlflowClient(mlflow_store)
    metrics = client.get_run(logged.run_id).data.metrics
    assert metrics["stage/calculate/caused_by_upstream_rate"] == 0.5
    assert metrics["stage/calculate/counterfactual_coverage"] == 1.0
    assert metrics["stage/calculate/failure/caused_by_upstream"] == 1 / 3
    assert metrics["stage/calculate/failure/independent_failure"] == 1 / 3
    assert "stage/extract/failure/caused_by_upstream" not in metrics
    assert "stage/extract/caused_by_upstream_rate" not in metrics
    # Cascades are a figure table, read back as keys.
    assert not any(key.startswith("cascade/") for key in metrics)
    figures = load_run_snapshot(logged.run_id).metrics
    assert figures["cascade/extract-to-calculate/co_failure_rate"] == 1.0
    assert figures["cascade/extract-to-calculate/caused_rate"] == 0.5
    assert figures["cascade/extract-to-calculate/co_failures"] == 2

    path = client.download_artifacts(logged.run_id, "results/cases.parquet")
    with open(path, "rb") as handle:
        cases = pd.read_parquet(io.BytesIO(handle.read()))
    calculate_rows = cases[cases["stage_id"] == "calculate"].set_index("case_id")
    assert calculate_rows.loc["a", "counterfactual.outcome"] == "caused_by_upstream"
    assert calculate_rows.loc["b", "failure_context"] == "independent_failure"

    snapshot = load_run_snapshot(logged.run_id)
    assert snapshot.cases is not None
    assert "caused_by_upstream" in snapshot.cases.failure_context
    assert snapshot.source_of("cascade", "extract-to-calculate") == "extract → calculate"
