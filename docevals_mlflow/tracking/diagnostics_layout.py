"""MLflow metrics and figure tables of the diagnostics (calibration, review budgets,
counterfactual attribution, failure cascades, panel disagreement).

Metrics (undefined figures are not logged):

* ``calibration/overall/{auroc,brier,ece,accuracy,mean_confidence,fields,errors}``;
* ``stage/<stage>/{caused_by_upstream_rate,counterfactual_coverage}``.

Figure tables (see :func:`~docevals_mlflow.tracking.layout_shared.figure_table`; each
row's ``key`` is the metric prefix of its figures):

* ``tables/calibration.json``: ``calibration/<field>`` rows of
  ``{auroc,brier,ece,accuracy,fields,errors}`` (and the ``overall`` row);
* ``tables/review_budget.json`` (``review_budget/<k>pct``: ``error_capture``,
  ``reviewed``) and ``tables/review_threshold.json`` (``review_threshold/<t>pct``:
  ``confidence``, ``review_rate``, ``error_capture``), and the same two for panel
  disagreement (``disagreement_budget``, ``disagreement_threshold``);
* ``tables/cascades.json``: ``cascade/<upstream>-to-<downstream>`` rows of
  ``{co_failure_rate,baseline_failure_rate,caused_rate,co_failures,upstream_failures}``.

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
from docevals_mlflow.tracking.layout_shared import figure_table

OVERALL = "overall"
"""The calibration key segment of all fields together."""
_OVERALL_SOURCE = "(all fields)"


def _budget_tables(
    writer: BundleWriter, review: ReviewBudget, budget_prefix: str, threshold_prefix: str
) -> None:
    threshold_name = "confidence" if review.signal == "confidence" else "disagreement"
    figure_table(
        writer,
        f"tables/{budget_prefix}.json",
        [
            {
                "key": f"{budget_prefix}/{budget_key(point.budget)}",
                "budget": point.budget,
                "error_capture": point.error_capture,
                "reviewed": point.reviewed,
            }
            for point in review.budgets
        ],
    )
    figure_table(
        writer,
        f"tables/{threshold_prefix}.json",
        [
            {
                "key": f"{threshold_prefix}/{budget_key(target.target)}",
                "target": target.target,
                threshold_name: target.threshold,
                "review_rate": target.review_rate,
                "error_capture": target.error_capture,
            }
            for target in review.thresholds
        ],
    )


def calibration_metrics(
    writer: BundleWriter,
    keys: KeyMap,
    calibration: ConfidenceCalibration | Mapping[str, Any],
) -> None:
    """Calibration metrics of all fields together; per field and review budgets as
    figure tables."""
    if not isinstance(calibration, ConfidenceCalibration):
        calibration = ConfidenceCalibration.model_validate(calibration)
    # Registered first, so that a field called "overall" gets "overall_2". Per-field
    # segments come from a map of their own: they name table rows, not logged keys,
    # so metrics_index.json keeps exactly the segments of the logged keys.
    overall = keys.segment("calibration", _OVERALL_SOURCE, OVERALL)
    rows = KeyMap()
    rows.segment("calibration", _OVERALL_SOURCE, OVERALL)
    entries = [(overall, _OVERALL_SOURCE, calibration.overall)]
    entries += [
        (rows.segment("calibration", template, template_segment(template)), template, stats)
        for template, stats in calibration.fields.items()
    ]
    table = []
    for segment, source, stats in entries:
        row: dict[str, Any] = {"key": legal_key(f"calibration/{segment}"), "field": source}
        row |= {name: getattr(stats, name) for name in ("auroc", "brier", "ece", "accuracy")}
        row |= {"fields": stats.n, "errors": stats.errors}
        table.append(row)
    for name, value in table[0].items():
        if name not in ("key", "field"):
            writer.metric(f"calibration/{overall}/{name}", value)
    writer.metric(f"calibration/{overall}/mean_confidence", calibration.overall.mean_confidence)
    figure_table(writer, "tables/calibration.json", table)
    _budget_tables(writer, calibration.review, "review_budget", "review_threshold")


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
    """Per dependency edge: co-failure, baseline and caused rates and counts, as the
    figure table ``tables/cascades.json``. The edge segments name table rows, not
    logged keys: they come from a map of their own (``keys`` is left as it is)."""
    rows = []
    segments = KeyMap()
    for edge in edges or ():
        segment = segments.segment(
            "cascade",
            f"{edge.upstream} → {edge.downstream}",
            f"{clean_segment(edge.upstream)}-to-{clean_segment(edge.downstream)}",
        )
        rows.append(
            {
                "key": legal_key(f"cascade/{segment}"),
                "name": f"{edge.upstream} → {edge.downstream}",
                "upstream": edge.upstream,
                "downstream": edge.downstream,
                "co_failure_rate": edge.co_failure_rate,
                "baseline_failure_rate": edge.baseline_failure_rate,
                "caused_rate": edge.caused_rate,
                "co_failures": edge.co_failures,
                "upstream_failures": edge.upstream_failures,
            }
        )
    figure_table(writer, "tables/cascades.json", rows)


def disagreement_metrics(writer: BundleWriter, budget: DisagreementBudget | None) -> None:
    """Review budgets of panel results ranked by disagreement (figure tables)."""
    if budget is not None:
        _budget_tables(writer, budget.review, "disagreement_budget", "disagreement_threshold")
