"""Run-to-run comparison: what changed, what moved, and whether it is real.

Pure: it works on :class:`RunSnapshot` objects (loaded from MLflow by
:mod:`docevals_mlflow.tracking.snapshots`) and imports neither mlflow nor httpx.
"""

from __future__ import annotations

from docevals_mlflow.compare.changes import Changes, changes_between
from docevals_mlflow.compare.comparison import DEFAULT_RESAMPLES, compare_runs
from docevals_mlflow.compare.results import Comparison, PairComparison, Settings
from docevals_mlflow.compare.snapshot import (
    CaseTable,
    DocumentTable,
    FieldTable,
    RunSnapshot,
    VoteTable,
)

__all__ = [
    "DEFAULT_RESAMPLES",
    "CaseTable",
    "Changes",
    "Comparison",
    "DocumentTable",
    "FieldTable",
    "PairComparison",
    "RunSnapshot",
    "Settings",
    "VoteTable",
    "changes_between",
    "compare_runs",
]
