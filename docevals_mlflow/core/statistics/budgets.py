"""Review budgets: send the most suspicious items to a human, count what that catches.

Items are ranked by a signal (least confident first, or most disputed first). For a
budget of k% the first ``ceil(k% · items)`` items are reviewed; items tied with the
last one reviewed are taken in random order, so a tie group straddling the cut-off
contributes its share of errors pro rata (the expected value, deterministic). For a
target share of errors, the threshold is the least strict signal value that catches
at least that share when every item at or beyond it is reviewed (whole tie groups).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from docevals_mlflow.core.diagnostics import BudgetPoint, ReviewBudget, ThresholdPoint
from docevals_mlflow.errors import ConfigurationError, InputError

DEFAULT_BUDGETS = (0.05, 0.10, 0.20)
"""Review budgets reported (and logged in the ``review_budget/<k>pct`` rows of a figure table)."""
DEFAULT_TARGETS = (0.80, 0.90, 0.95)
"""Shares of errors a review threshold is searched for."""
CURVE_STEPS = 100
"""The budget curve has a point per percent."""

Signal = Literal["confidence", "disagreement"]
FloatArray = npt.NDArray[np.float64]


def _checked_shares(values: Sequence[float], what: str) -> list[float]:
    out = []
    for value in values:
        number = float(value)
        if not (math.isfinite(number) and 0.0 < number <= 1.0):
            raise ConfigurationError(f"{what} {value!r} is outside (0, 1]", expected="e.g. 0.1")
        out.append(number)
    return out


def as_arrays(scores: Any, errors: Any) -> tuple[FloatArray, npt.NDArray[np.bool_]]:
    """Scores as finite floats and error flags as booleans, of equal length."""
    score_array = np.asarray(scores, dtype=np.float64).reshape(-1)
    error_array = np.asarray(errors, dtype=bool).reshape(-1)
    if score_array.shape != error_array.shape:
        raise InputError(
            f"{score_array.size} scores but {error_array.size} correctness flags",
            expected="one flag per score",
        )
    if not np.all(np.isfinite(score_array)):
        raise InputError("scores must be finite numbers", expected="no NaN or infinity")
    return score_array, error_array


class _Ranking:
    """Tie groups in review order with cumulative item and error counts."""

    def __init__(self, scores: FloatArray, errors: npt.NDArray[np.bool_], signal: Signal) -> None:
        # Review order: ascending confidence, or descending disagreement.
        keys = scores if signal == "confidence" else -scores
        unique, inverse = np.unique(keys, return_inverse=True)
        self.values = unique if signal == "confidence" else -unique
        self.sizes = np.bincount(inverse, minlength=unique.size).astype(np.float64)
        self.group_errors = np.bincount(
            inverse, weights=errors.astype(np.float64), minlength=unique.size
        )
        self.items_before = np.concatenate(([0.0], np.cumsum(self.sizes)))
        self.errors_before = np.concatenate(([0.0], np.cumsum(self.group_errors)))
        self.total_items = int(scores.size)
        self.total_errors = int(errors.sum())

    def caught(self, reviewed: npt.NDArray[np.int64]) -> FloatArray:
        """Expected errors among the first ``reviewed`` items (vectorised)."""
        if not self.total_items:
            return np.zeros(reviewed.shape)
        # The group holding the last reviewed item: the first whose end reaches it.
        group = np.searchsorted(self.items_before[1:], reviewed, side="left")
        group = np.minimum(group, self.sizes.size - 1)
        partial = reviewed - self.items_before[group]
        caught = self.errors_before[group] + partial * self.group_errors[group] / self.sizes[group]
        return np.where(reviewed > 0, caught, 0.0)

    def cutoff(self, reviewed: int) -> float | None:
        if reviewed <= 0 or not self.total_items:
            return None
        group = int(np.searchsorted(self.items_before[1:], reviewed, side="left"))
        return float(self.values[min(group, self.values.size - 1)])


def review_budget(
    scores: Any,
    errors: Any,
    *,
    signal: Signal = "confidence",
    budgets: Sequence[float] = DEFAULT_BUDGETS,
    targets: Sequence[float] = DEFAULT_TARGETS,
) -> ReviewBudget:
    """Error capture of review budgets, and thresholds reaching target captures.

    ``scores`` holds one signal value per item and ``errors`` whether the item is
    wrong. With ``signal="confidence"`` the least confident items are reviewed first
    (threshold: review ``confidence <= t``); with ``"disagreement"`` the most disputed
    (threshold: review ``disagreement >= t``).

    Raises:
        InputError: the arrays differ in length or a score is not finite.
        ConfigurationError: a budget or target is outside (0, 1].
    """
    score_array, error_array = as_arrays(scores, errors)
    budget_shares = _checked_shares(budgets, "review budget")
    target_shares = _checked_shares(targets, "target error capture")
    ranking = _Ranking(score_array, error_array, signal)
    items, total = ranking.total_items, ranking.total_errors

    def reviewed_for(share: float) -> int:
        # A tiny tolerance keeps 0.1 * 30 = 3.0000000000000004 from becoming 4.
        return min(items, math.ceil(share * items - 1e-9))

    counts = np.array([reviewed_for(share) for share in budget_shares], dtype=np.int64)
    caught = ranking.caught(counts)
    points = [
        BudgetPoint(
            budget=share,
            reviewed=int(count),
            errors_caught=float(found),
            error_capture=float(found) / total if total else None,
            cutoff=ranking.cutoff(int(count)),
        )
        for share, count, found in zip(budget_shares, counts, caught, strict=True)
    ]
    curve: list[float] = []
    if total:
        steps = np.array(
            [reviewed_for(step / CURVE_STEPS) if step else 0 for step in range(CURVE_STEPS + 1)],
            dtype=np.int64,
        )
        curve = [round(float(value), 6) for value in ranking.caught(steps) / total]
    return ReviewBudget(
        signal=signal,
        items=items,
        errors=total,
        budgets=points,
        thresholds=[_threshold(ranking, target) for target in target_shares],
        curve=curve,
    )


def _threshold(ranking: _Ranking, target: float) -> ThresholdPoint:
    total = ranking.total_errors
    if not total:
        return ThresholdPoint(
            target=target, threshold=None, reviewed=0, review_rate=None, error_capture=None
        )
    needed = max(1, math.ceil(target * total - 1e-9))
    group = int(np.searchsorted(ranking.errors_before[1:], needed, side="left"))
    reviewed = int(ranking.items_before[group + 1])
    return ThresholdPoint(
        target=target,
        threshold=float(ranking.values[group]),
        reviewed=reviewed,
        review_rate=reviewed / ranking.total_items,
        error_capture=float(ranking.errors_before[group + 1]) / total,
    )


def budget_key(share: float) -> str:
    """``0.1`` → ``10pct``, ``0.025`` → ``2.5pct`` (metric key segments)."""
    percent = round(share * 100, 6)
    return f"{percent:g}pct"
