"""The package's statistics, in one place: pure arithmetic on arrays and counts that
compare, judge calibration, diagnostics, the field report and the reports share.

* :mod:`.intervals`: percentile bootstrap over weighted resamples of the units.
* :mod:`.agreement`: Cohen's and Fleiss' kappa, Landis and Koch's words for a kappa.
* :mod:`.calibration`: AUROC, Brier score and ECE (with reliability bins) of
  extraction confidence, per field and overall.
* :mod:`.budgets`: review budgets: the share of errors caught by reviewing the k% most
  suspicious items, and the threshold that catches a target share.

No MLflow, no network, no reports beyond the models of :mod:`~docevals_mlflow.core.diagnostics`.
"""

from __future__ import annotations

from docevals_mlflow.core.statistics.agreement import cohen_kappa, fleiss_kappa, kappa_strength
from docevals_mlflow.core.statistics.budgets import (
    DEFAULT_BUDGETS,
    DEFAULT_TARGETS,
    budget_key,
    review_budget,
)
from docevals_mlflow.core.statistics.calibration import (
    DEFAULT_BINS,
    auroc,
    brier_score,
    calibration_stats,
    confidence_calibration,
    expected_calibration_error,
    fields_calibration,
    reliability_bins,
    rows_calibration,
)
from docevals_mlflow.core.statistics.intervals import (
    bootstrap_sums,
    percentile_interval,
    resample_batches,
)

__all__ = [
    "DEFAULT_BINS",
    "DEFAULT_BUDGETS",
    "DEFAULT_TARGETS",
    "auroc",
    "bootstrap_sums",
    "brier_score",
    "budget_key",
    "calibration_stats",
    "cohen_kappa",
    "confidence_calibration",
    "expected_calibration_error",
    "fields_calibration",
    "fleiss_kappa",
    "kappa_strength",
    "percentile_interval",
    "reliability_bins",
    "resample_batches",
    "review_budget",
    "rows_calibration",
]
