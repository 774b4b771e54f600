"""MLflow metrics of the diagnostics (calibration, review budgets, counterfactual
attribution, failure cascades, panel disagreement).

Keys (undefined figures are not logged):

* ``calibration/overall/{auroc,brier,ece,accuracy,mean_confidence,fields,errors}``
  and ``calibration/<field>/{auroc,brier,ece,accuracy,fields,errors}``;
* ``review_budget/<k>pct/{error_capture,reviewed}`` and
  ``review_threshold/<t>pct/{confidence,review_rate,error_capture}``;
* ``stage/<stage>/{caused_by_upstream_rate,counterfactual_coverage}``;
* ``cascade/<upstream>-to-<downstream>/{co_failure_rate,baseline_failure_rate,
  caused_rate,co_failures,upstream_failures}``;
* ``disagreement_budget/<k>pct/{error_capture,reviewed}`` and
  ``disagreement_threshold/<t>pct/{disagreement,review_rate,error_capture}``.

Does not import mlflow.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from docevals_mlflow.core.diagnostics import (
    CascadeEdge,
    ConfidenceCalibration,
    CounterfactualSummary,
    DisagreementBudget,
    ReviewBudget,
)
from docevals_mlflow.core.statistics import budget_key
from docevals_mlflow.tracking.bundle import BundleWriter
from docevals_mlflow.tracking.keys import KeyMap, clean_segment, legal_key, template_segment

OVERALL = "overall"
"""The calibration key segment of all fields together."""
_OVERALL_SOURCE = "(all fields)"


def _budget_metrics(
    writer: BundleWriter, review: ReviewBudget, budget_prefix: str, threshold_prefix: str
) -> None:
    threshold_name = "confidence" if review.signal == "confidence" else "disagreement"
    for point in review.budgets:
        key = f"{budget_prefix}/{budget_key(point.budget)}"
        writer.metric(f"{key}/error_capture", point.error_capture)
        writer.metric(f"{key}/reviewed", point.reviewed)
    for target in review.thresholds:
        key = f"{threshold_prefix}/{budget_key(target.target)}"
        writer.metric(f"{key}/{threshold_name}", target.threshold)
        writer.metric(f"{key}/review_rate", target.review_rate)
        writer.metric(f"{key}/error_capture", target.error_capture)


def calibration_metrics(
    writer: BundleWriter,
    keys: KeyMap,
    calibration: ConfidenceCalibration | Mapping[str, Any],
) -> None:
    """Calibration and review-budget metrics of a field comparison."""
    if not isinstance(calibration, ConfidenceCalibration):
        calibration = ConfidenceCalibration.model_validate(calibration)
    # Registered first, so that a field called "overall" gets "overall_2".
    overall = keys.segment("calibration", _OVERALL_SOURCE, OVERALL)
    entries = [(overall, calibration.overall)]
    entries += [
        (keys.segment("calibration", template, template_segment(template)), stats)
        for template, stats in calibration.fields.items()
    ]
    for segment, stats in entries:
        prefix = legal_key(f"calibration/{segment}")
        for name in ("auroc", "brier", "ece", "accuracy"):
            writer.metric(f"{prefix}/{name}", getattr(stats, name))
        writer.metric(f"{prefix}/fields", stats.n)
        writer.metric(f"{prefix}/errors", stats.errors)
    writer.metric(f"calibration/{overall}/mean_confidence", calibration.overall.mean_confidence)
    _budget_metrics(writer, calibration.review, "review_budget", "review_threshold")


def counterfactual_metrics(
    writer: BundleWriter, stage_segment: str, summary: CounterfactualSummary | None
) -> None:
    """``stage/<stage>/caused_by_upstream_rate`` and ``counterfactual_coverage``."""
    if summary is None:
        return
    prefix = legal_key(f"stage/{stage_segment}")
    writer.metric(f"{prefix}/caused_by_upstream_rate", summary.caused_by_upstream_rate)
    writer.metric(f"{prefix}/counterfactual_coverage", summary.coverage)


def cascade_metrics(writer: BundleWriter, keys: KeyMap, edges: list[CascadeEdge] | None) -> None:
    """Per dependency edge: co-failure, baseline and caused rates and counts."""
    for edge in edges or ():
        segment = keys.segment(
            "cascade",
            f"{edge.upstream} → {edge.downstream}",
            f"{clean_segment(edge.upstream)}-to-{clean_segment(edge.downstream)}",
        )
        prefix = legal_key(f"cascade/{segment}")
        writer.metric(f"{prefix}/co_failure_rate", edge.co_failure_rate)
        writer.metric(f"{prefix}/baseline_failure_rate", edge.baseline_failure_rate)
        writer.metric(f"{prefix}/caused_rate", edge.caused_rate)
        writer.metric(f"{prefix}/co_failures", edge.co_failures)
        writer.metric(f"{prefix}/upstream_failures", edge.upstream_failures)


def disagreement_metrics(writer: BundleWriter, budget: DisagreementBudget | None) -> None:
    """Review budgets of panel results ranked by disagreement."""
    if budget is not None:
        _budget_metrics(writer, budget.review, "disagreement_budget", "disagreement_threshold")
