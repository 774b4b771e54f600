"""Reviewer agreement as metrics of a generation run or an approval run.

:func:`agreement_metrics` turns an
:class:`~docevals_mlflow.core.statistics.reviewer_agreement.AgreementReport` (and the
reviews' final values) into metrics: the headline ``Summary/{reviewed_documents,
reviewer_agreement,reviewer_kappa,reviewer_alpha,fields_adjudicated}`` (observed
agreement, Fleiss' kappa and nominal Krippendorff's alpha over every field, and the
fields an adjudicator decided), ``agreement/overall/<figure>`` (each statistic with
its bootstrap interval as ``<figure>_low`` and ``<figure>_high``, and the counts) and
``agreement/<field>/<figure>`` per field path (the values only). Undefined figures
are not logged.

:func:`log_agreement_metrics` logs them to a run, only those whose value differs from
the run's current one (logging the same reviews again adds nothing).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from docevals_mlflow.core.statistics.reviewer_agreement import AgreementReport, FieldAgreement
from docevals_mlflow.groundtruth.layer_view import ReviewLayers
from docevals_mlflow.tracking.keys import KeyMap, legal_key
from docevals_mlflow.tracking.layout_shared import HEADLINE

_STATS = ("cohen_kappa", "fleiss_kappa", "alpha_nominal", "alpha_interval")
_BATCH = 1000


def _put(metrics: dict[str, float], key: str, value: float | int | None) -> None:
    if value is not None:
        metrics[legal_key(key)] = float(value)


def _field_figures(
    metrics: dict[str, float], prefix: str, figures: FieldAgreement, *, intervals: bool
) -> None:
    _put(metrics, f"{prefix}/observed_agreement", figures.observed_agreement)
    for name in _STATS:
        stat = getattr(figures, name)
        _put(metrics, f"{prefix}/{name}", stat.value)
        if intervals:
            _put(metrics, f"{prefix}/{name}_low", stat.low)
            _put(metrics, f"{prefix}/{name}_high", stat.high)
    _put(metrics, f"{prefix}/units", figures.units)
    if intervals:
        _put(metrics, f"{prefix}/documents", figures.documents)
        _put(metrics, f"{prefix}/raters", figures.raters)


def agreement_metrics(
    report: AgreementReport, layer_sets: Sequence[ReviewLayers], *, required_reviewers: int = 1
) -> dict[str, float]:
    """The metrics of ``report`` over ``layer_sets`` (see the module docstring)."""
    metrics: dict[str, float] = {}
    overall = report.overall
    adjudicated = sum(
        final.status == "adjudicated"
        for layers in layer_sets
        for final in layers.final_values(required_reviewers).values()
    )
    reviewed = sum(1 for layers in layer_sets if layers.people())
    _put(metrics, f"{HEADLINE}/reviewed_documents", reviewed)
    _put(metrics, f"{HEADLINE}/reviewer_agreement", overall.observed_agreement)
    _put(metrics, f"{HEADLINE}/reviewer_kappa", overall.fleiss_kappa.value)
    _put(metrics, f"{HEADLINE}/reviewer_alpha", overall.alpha_nominal.value)
    _put(metrics, f"{HEADLINE}/fields_adjudicated", adjudicated)
    _field_figures(metrics, "agreement/overall", overall, intervals=True)
    keys = KeyMap()
    keys.segment("field", "overall", "overall")  # a field path never takes that name
    for figures in report.fields:
        _field_figures(metrics, f"agreement/{keys.field(figures.path)}", figures, intervals=False)
    return metrics


def review_agreement_metrics(
    layer_sets: Sequence[ReviewLayers], *, required_reviewers: int = 1
) -> dict[str, float]:
    """:func:`agreement_metrics` of the reviewers' agreement over ``layer_sets``."""
    from docevals_mlflow.groundtruth.layer_agreement import review_agreement

    report = review_agreement(list(layer_sets))
    return agreement_metrics(report, layer_sets, required_reviewers=required_reviewers)


def log_agreement_metrics(client: Any, run_id: str, metrics: dict[str, float]) -> int:
    """Log the ``metrics`` whose value differs from the run's current one; returns
    how many were logged."""
    from mlflow.entities import Metric

    current = client.get_run(run_id).data.metrics
    changed = {key: value for key, value in metrics.items() if current.get(key) != value}
    now = int(time.time() * 1000)
    entries = [Metric(key, value, now, 0) for key, value in sorted(changed.items())]
    for start in range(0, len(entries), _BATCH):
        client.log_batch(run_id, metrics=entries[start : start + _BATCH])
    return len(entries)


__all__ = ["agreement_metrics", "log_agreement_metrics", "review_agreement_metrics"]
