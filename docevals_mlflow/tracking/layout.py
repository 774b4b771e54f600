"""The run layout (DESIGN §4): which params, metrics, tags and artifacts a report becomes.

One module per run kind builds it: :mod:`~docevals_mlflow.tracking.fields_layout`
(field comparisons), :mod:`~docevals_mlflow.tracking.evaluation_layout` (case,
pipeline and suite evaluations, with :mod:`~docevals_mlflow.tracking.judge_layout`),
:mod:`~docevals_mlflow.tracking.split_layout`,
:mod:`~docevals_mlflow.tracking.generation_runs`,
:mod:`~docevals_mlflow.tracking.approval_runs`,
:mod:`~docevals_mlflow.tracking.comparison_runs` and
:mod:`~docevals_mlflow.tracking.calibration_runs`; what they share is in
:mod:`~docevals_mlflow.tracking.layout_shared`. The names most callers need are
importable from here. Nothing here imports mlflow;
:mod:`docevals_mlflow.tracking.runs` logs what the layouts build.
"""

from __future__ import annotations

from docevals_mlflow.tracking.evaluation_layout import (
    evaluation_summary,
    layout_evaluation,
    operations_document,
)
from docevals_mlflow.tracking.fields_layout import fields_dataset, fields_summary, layout_fields
from docevals_mlflow.tracking.layout_shared import CELL_NAMES, tag_evaluation

__all__ = [
    "CELL_NAMES",
    "evaluation_summary",
    "fields_dataset",
    "fields_summary",
    "layout_evaluation",
    "layout_fields",
    "operations_document",
    "tag_evaluation",
]
