"""Extraction → calculation pipelines with deliberately broken stages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from docevals_mlflow import (
    EvaluationCase,
    ExactStructuredMetric,
    PipelineCase,
    PipelineEvaluator,
    artifact_from_value,
)
from docevals_mlflow.diagnostics import Counterfactual

TRUE_ITEMS = {"items": [{"amount": 10.0}, {"amount": 5.5}]}
WRONG_ITEMS = {"items": [{"amount": 10.0}, {"amount": 9.5}]}
TRUE_TOTAL = {"total": 15.5}


def calculate(extraction: dict[str, Any]) -> dict[str, float]:
    """A correct calculator."""
    return {"total": sum(item["amount"] for item in extraction["items"])}


def broken_calculate(extraction: dict[str, Any]) -> dict[str, float]:
    """A calculator that is off by one."""
    return {"total": calculate(extraction)["total"] + 1}


def invoice(
    pipeline_id: str,
    calculator: Callable[[Any], Any],
    *,
    extracted: dict[str, Any] = WRONG_ITEMS,
    extraction_truth: Any = TRUE_ITEMS,
) -> PipelineCase:
    """``extract`` (its recorded output ``extracted``) feeding ``calculate`` (the
    calculator's recorded output on it), each with ground truth."""
    truth = (
        [artifact_from_value(extraction_truth, authority="ground_truth", artifact_id="gt-items")]
        if extraction_truth is not None
        else [artifact_from_value("the scanned invoice", authority="evidence", artifact_id="scan")]
    )
    return PipelineCase(
        pipeline_id=pipeline_id,
        stages=[
            EvaluationCase(
                case_id=pipeline_id,
                stage_id="extract",
                operation="extract",
                input_data="invoice.pdf",
                prediction=extracted,
                references=truth,
            ),
            EvaluationCase(
                case_id=pipeline_id,
                stage_id="calculate",
                operation="calculate",
                input_data=extracted,
                prediction=calculator(extracted),
                references=[
                    artifact_from_value(TRUE_TOTAL, authority="ground_truth", artifact_id="gt")
                ],
                depends_on=["extract"],
            ),
        ],
    )


def evaluator(counterfactual: Counterfactual | None = None) -> PipelineEvaluator:
    """Exact comparison everywhere, with the given counterfactual reruns."""
    return PipelineEvaluator(
        default_metrics=[ExactStructuredMetric()], counterfactual=counterfactual
    )
