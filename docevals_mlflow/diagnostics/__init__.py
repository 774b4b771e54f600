"""Diagnostics beyond verdicts: why a pipeline failed and what to review first.

* :mod:`.counterfactual`: oracle-swap reruns that refine ``upstream_or_combined``
  failures into ``caused_by_upstream`` or ``independent_failure``
  (:class:`Counterfactual`, passed to :class:`~docevals_mlflow.PipelineEvaluator`).
* :mod:`.oracle`: the corrected input of such a rerun, from ground-truth versions of
  the upstream outputs.
* :mod:`.cascades`: failure co-occurrence and causation per dependency edge across a
  batch, and a Sankey figure of failure propagation.
* :mod:`.disagreement`: review budgets ranked by judge-panel disagreement.

With them, from :mod:`docevals_mlflow.core.statistics` (the field report and judge
calibration compute them too, below this package): AUROC, Brier score and ECE (with
reliability bins) of extraction confidence, per field and overall, and review budgets
(the share of errors caught by reviewing the k% most suspicious items, and the
threshold that catches a target share).

Pure computation on reports: no MLflow, no network. The report models are in
:mod:`docevals_mlflow.core.diagnostics`.
"""

from __future__ import annotations

from docevals_mlflow.core.statistics import (
    DEFAULT_BINS,
    DEFAULT_BUDGETS,
    DEFAULT_TARGETS,
    auroc,
    brier_score,
    budget_key,
    calibration_stats,
    confidence_calibration,
    expected_calibration_error,
    fields_calibration,
    reliability_bins,
    review_budget,
    rows_calibration,
)
from docevals_mlflow.diagnostics.cascades import (
    cascade_sankey,
    counterfactual_summary,
    failure_cascades,
)
from docevals_mlflow.diagnostics.counterfactual import (
    Action,
    Counterfactual,
    InputBuilder,
    RecordedRerun,
)
from docevals_mlflow.diagnostics.disagreement import disagreement_budget
from docevals_mlflow.diagnostics.oracle import RerunUnavailable, default_rerun_input, oracle_output
from docevals_mlflow.judges.calibration.disagreement import panel_disagreement

__all__ = [
    "DEFAULT_BINS",
    "DEFAULT_BUDGETS",
    "DEFAULT_TARGETS",
    "Action",
    "Counterfactual",
    "InputBuilder",
    "RecordedRerun",
    "RerunUnavailable",
    "auroc",
    "brier_score",
    "budget_key",
    "calibration_stats",
    "cascade_sankey",
    "confidence_calibration",
    "counterfactual_summary",
    "default_rerun_input",
    "disagreement_budget",
    "expected_calibration_error",
    "failure_cascades",
    "fields_calibration",
    "oracle_output",
    "panel_disagreement",
    "reliability_bins",
    "review_budget",
    "rows_calibration",
]
