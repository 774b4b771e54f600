"""Cost of the diagnostics: confidence calibration, review budgets, suite diagnostics
and counterfactual reruns.

Prints figures; asserts nothing. Run: ``python benchmarks/diagnostics.py [FIELDS]``
(default 100,000 fields).
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from docevals_mlflow import (
    EvaluationCase,
    ExactStructuredMetric,
    PipelineCase,
    PipelineEvaluator,
    artifact_from_value,
    build_suite_report,
    compare_documents,
)
from docevals_mlflow.diagnostics import (
    Counterfactual,
    confidence_calibration,
    disagreement_budget,
    failure_cascades,
    review_budget,
)
from docevals_mlflow.fields.report import build_fields_report


def best_of(repeats: int, work: Callable[[], Any]) -> float:
    """The fastest of ``repeats`` runs, in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def calibration_figures(fields: int) -> None:
    rng = np.random.default_rng(0)
    confidence = rng.uniform(0, 1, fields)
    correct = rng.uniform(0, 1, fields) < confidence
    names = [f"$.field_{index % 50}" for index in range(fields)]
    overall = best_of(5, lambda: confidence_calibration(confidence, correct))
    per_field = best_of(5, lambda: confidence_calibration(confidence, correct, names))
    budget = best_of(5, lambda: review_budget(confidence, ~correct))
    print(f"calibration of {fields:,} fields (AUROC, Brier, ECE, bins, budgets, thresholds):")
    print(f"  overall only          {overall * 1000:8.1f} ms")
    print(f"  overall + 50 fields   {per_field * 1000:8.1f} ms")
    print(f"  review budget alone   {budget * 1000:8.1f} ms")


def field_report_figures(documents: int) -> None:
    """``build_fields_report`` with and without confidence (20 leaves per document)."""

    def records(with_confidence: bool) -> list[dict[str, Any]]:
        out = []
        for index in range(documents):
            expected = {f"f{k}": k for k in range(20)}
            predicted = {f"f{k}": (k + 1 if (index + k) % 7 == 0 else k) for k in range(20)}
            record: dict[str, Any] = {
                "id": str(index),
                "expected": expected,
                "predicted": predicted,
            }
            if with_confidence:
                record["confidence"] = {f"f{k}": ((index * 31 + k) % 100) / 100 for k in range(20)}
            out.append(record)
        return out

    plain = compare_documents(records(False))
    confident = compare_documents(records(True))
    without = best_of(3, lambda: build_fields_report(plain))
    with_ = best_of(3, lambda: build_fields_report(confident))
    rows = documents * 20
    print(f"field report of {documents:,} documents ({rows:,} rows):")
    print(f"  without confidence    {without * 1000:8.1f} ms")
    print(f"  with confidence       {with_ * 1000:8.1f} ms (calibration included)")


def invoice(index: int, broken: bool) -> PipelineCase:
    truth = {"items": [{"amount": 10.0}, {"amount": 5.5}]}
    extracted = {"items": [{"amount": 10.0}, {"amount": 9.5}]} if broken else truth
    total = {"total": sum(item["amount"] for item in extracted["items"])}
    return PipelineCase(
        pipeline_id=f"inv-{index}",
        stages=[
            EvaluationCase(
                case_id=f"inv-{index}",
                stage_id="extract",
                operation="extract",
                input_data="scan",
                prediction=extracted,
                references=[artifact_from_value(truth, authority="ground_truth", artifact_id="gt")],
            ),
            EvaluationCase(
                case_id=f"inv-{index}",
                stage_id="calculate",
                operation="calculate",
                input_data=extracted,
                prediction=total,
                references=[
                    artifact_from_value({"total": 15.5}, authority="ground_truth", artifact_id="t")
                ],
                depends_on=["extract"],
            ),
        ],
    )


def calculate(extraction: dict[str, Any]) -> dict[str, float]:
    return {"total": sum(item["amount"] for item in extraction["items"])}


def pipeline_figures(count: int) -> None:
    pipelines = [invoice(index, broken=index % 5 == 0) for index in range(count)]
    metrics = [ExactStructuredMetric()]
    plain = PipelineEvaluator(default_metrics=metrics)
    reruns = PipelineEvaluator(
        default_metrics=metrics, counterfactual=Counterfactual(actions={"calculate": calculate})
    )
    base = [best_of(1, lambda: plain.evaluate_batch(pipelines)) for _ in range(3)]
    rerun = [best_of(1, lambda: reruns.evaluate_batch(pipelines)) for _ in range(3)]
    reports = reruns.evaluate_batch(pipelines)
    suite = best_of(3, lambda: build_suite_report(reports))
    cascades = best_of(3, lambda: failure_cascades(reports))
    stages = [stage for report in reports for stage in report.stage_reports]
    disagreement = best_of(3, lambda: disagreement_budget(stages))
    print(f"{count:,} two-stage pipelines, every fifth with a broken extraction:")
    print(f"  evaluate_batch                 {statistics.median(base) * 1000:8.1f} ms")
    print(
        f"  with counterfactual reruns     {statistics.median(rerun) * 1000:8.1f} ms "
        f"({count // 5:,} reruns)"
    )
    print(f"  build_suite_report             {suite * 1000:8.1f} ms")
    print(f"    of which failure cascades    {cascades * 1000:8.1f} ms")
    print(f"    of which disagreement scan   {disagreement * 1000:8.1f} ms")


def main() -> None:
    fields = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    calibration_figures(fields)
    calibration_figures(fields * 10)
    field_report_figures(5_000)
    pipeline_figures(2_000)


if __name__ == "__main__":
    main()
