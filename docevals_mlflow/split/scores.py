"""Small pieces shared by the split metrics: ratios that may be undefined, detection
scores (precision, recall, F1 from TP/FP/FN) and means that skip undefined values."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict


def ratio(part: float, whole: float) -> float | None:
    """``part / whole``, or ``None`` when ``whole`` is zero (undefined, never 0)."""
    return part / whole if whole else None


def mean(values: Iterable[float | None]) -> float | None:
    """The mean of the defined values, ``None`` when none is defined."""
    defined = [value for value in values if value is not None]
    return sum(defined) / len(defined) if defined else None


def detection(tp: int, fp: int, fn: int) -> dict[str, Any]:
    """``{tp, fp, fn, precision, recall, f1}`` as plain values."""
    return {
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "precision": ratio(tp, tp + fp),
        "recall": ratio(tp, tp + fn),
        "f1": ratio(2 * tp, 2 * tp + fp + fn),
    }


class ReportPart(BaseModel):
    """Base of the parts of a split report.

    Plain pydantic with ``extra="forbid"`` and no custom ``__init__``: pydantic then
    validates nested parts (one per page, often) without calling Python code, which
    keeps a 10,000-page report cheap to build. The reports users load,
    :class:`~docevals_mlflow.split.report.SplitReport` and
    :class:`~docevals_mlflow.split.report.PacketSplitReport`, are
    :class:`~docevals_mlflow.core.model.DocEvalsModel`, so a malformed report file
    still raises :class:`~docevals_mlflow.errors.InputError`.
    """

    model_config = ConfigDict(extra="forbid")


class Detection(ReportPart):
    """Counts of found (TP), spurious (FP) and missed (FN) items, and their scores.

    precision = TP/(TP+FP), recall = TP/(TP+FN), F1 = 2TP/(2TP+FP+FN); ``None``
    when the denominator is zero.
    """

    tp: int
    fp: int
    fn: int
    precision: float | None
    recall: float | None
    f1: float | None


__all__ = ["Detection", "ReportPart", "detection", "mean", "ratio"]
