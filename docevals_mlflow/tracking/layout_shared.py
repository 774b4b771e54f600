"""What every run layout shares: the confusion-cell metrics and the evaluation tags.

Does not import mlflow; :mod:`docevals_mlflow.tracking.runs` logs what the layouts build.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from docevals_mlflow.fields.counts import METRIC_NAMES
from docevals_mlflow.tracking.bundle import BundleWriter
from docevals_mlflow.tracking.keys import legal_key

CELL_NAMES = ("tp", "fa", "fd", "fn", "tn")


def cell_metrics(
    writer: BundleWriter, prefix: str, counts: Mapping[str, int], metrics: Mapping[str, Any]
) -> None:
    """``<prefix>/<metric>`` for each headline metric and ``<prefix>/<cell>`` for each
    confusion cell (``None`` where absent, so every run has the same keys)."""
    for name in METRIC_NAMES:
        writer.metric(legal_key(f"{prefix}/{name}"), metrics.get(name))
    for name in CELL_NAMES:
        writer.metric(legal_key(f"{prefix}/{name}"), counts.get(name))


def tag_evaluation(
    writer: BundleWriter, report_kind: str, *, verdict: str | None, note: str
) -> None:
    """The tags every evaluation run carries: kind, report kind, verdict (when there is
    one) and the Markdown run description."""
    writer.tag("docevals.kind", "evaluation")
    writer.tag("docevals.report_kind", report_kind)
    if verdict is not None:
        writer.tag("docevals.verdict", verdict)
    writer.tag("mlflow.note.content", note)
