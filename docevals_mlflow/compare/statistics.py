"""Paired statistics for two runs over the same documents or cases.

* Intervals: paired percentile bootstrap. Documents (the independent units; fields
  inside one document are not independent) are resampled with replacement, the
  same draw for both runs, and the metric difference is recomputed from the summed
  confusion cells of each draw, so micro metrics stay ratios of sums exactly as the
  reports define them.
* Tests: paired approximate randomisation (a sign-flip permutation test). Under the
  null hypothesis the two runs' results on a document are exchangeable, so each
  draw swaps them on a random half of the documents. Unlike a bootstrap p-value,
  it stays calibrated when only a handful of documents differ (four documents fixed
  and none broken give p ≈ 0.125, as the exact sign test does, not ≈ 0.04).
* Case verdicts: the exact McNemar test on pass/fail flips.
* Multiplicity: Holm's step-down adjustment within a family of tests.

Everything is vectorised: a batch of draws is one integer matrix (draws x documents)
and one matrix product with the per-document cells (the bootstrap of
:mod:`docevals_mlflow.core.statistics`); no Python loop runs per draw or per
document. Undefined metrics (a zero denominator) are NaN and are left out of
intervals and tests rather than counted as 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from docevals_mlflow.core.statistics import bootstrap_sums, percentile_interval, resample_batches
from docevals_mlflow.errors import ConfigurationError

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

CELL_METRICS = ("precision", "recall", "f1", "accuracy", "far", "fdr")
"""Metrics computed from summed confusion cells (micro averages)."""
FIELD_METRICS = (*CELL_METRICS, "macro_f1")
"""Every metric a field comparison can be compared on."""
LOWER_IS_BETTER = frozenset({"far", "fdr"})

# Relative slack when comparing a permuted difference with the observed one, so that
# the identity permutation (and its mirror) always count despite rounding.
_TIES = 1e-12


def _divide(numerator: FloatArray, denominator: FloatArray) -> FloatArray:
    out = np.full(np.broadcast(numerator, denominator).shape, np.nan)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def metric_from_cells(sums: npt.ArrayLike, metric: str) -> FloatArray:
    """A micro metric from cells summed over documents; the last axis is
    ``tp, fa, fd, fn, tn``. NaN where the metric is undefined (zero denominator).
    """
    cells = np.asarray(sums, dtype=np.float64)
    tp, fa, fd, fn, tn = (cells[..., index] for index in range(5))
    fp = fa + fd
    if metric == "precision":
        return _divide(tp, tp + fp)
    if metric == "recall":
        return _divide(tp, tp + fn)
    if metric == "f1":
        return _divide(2 * tp, 2 * tp + fp + fn)
    if metric == "accuracy":
        return _divide(tp + tn, tp + fp + fn + tn)
    if metric == "far":
        return _divide(fa, fa + tn)
    if metric == "fdr":
        return _divide(fd, fd + tp)
    raise ConfigurationError(f"unknown cell metric {metric!r}", expected=", ".join(CELL_METRICS))


def check_metric(metric: str) -> str:
    """``metric`` if a field comparison can be compared on it."""
    if metric not in FIELD_METRICS:
        raise ConfigurationError(
            f"unknown metric {metric!r} for field comparisons", expected=", ".join(FIELD_METRICS)
        )
    return metric


def _columns(cells: IntArray, metric: str) -> FloatArray:
    """Per-document columns whose weighted sums determine the metric.

    Micro metrics: the cells (``k`` units x 5). ``macro_f1``: per-document F1 (0 where
    undefined) and a 0/1 column saying whether it is defined, so that a weighted mean
    over documents with a defined F1 is a ratio of two weighted sums.
    """
    documents, units = cells.shape[0], cells.shape[1]
    if metric != "macro_f1":
        return cells.reshape(documents, units * 5).astype(np.float64)
    f1 = metric_from_cells(cells, "f1")
    defined = ~np.isnan(f1)
    return np.concatenate([np.where(defined, f1, 0.0), defined.astype(np.float64)], axis=1)


def _finish(sums: FloatArray, metric: str, units: int) -> FloatArray:
    """The metric per unit from weighted column sums (``draws x columns``)."""
    if metric != "macro_f1":
        return metric_from_cells(sums.reshape(sums.shape[0], units, 5), metric)
    return _divide(sums[:, :units], sums[:, units:])


@dataclass(frozen=True)
class PairedResult:
    """Per unit (overall, a field, a class): both runs' values, the difference, its
    bootstrap interval and the randomisation test's two-sided p-value.

    Every attribute is an array with one entry per unit; NaN marks what is undefined.
    ``documents`` counts the matched documents; ``resamples`` the draws per test.
    """

    baseline: FloatArray
    candidate: FloatArray
    delta: FloatArray
    ci_low: FloatArray
    ci_high: FloatArray
    p_value: FloatArray
    documents: int
    resamples: int


def _paired_cells(
    baseline: npt.ArrayLike,
    candidate: npt.ArrayLike,
    metric: str,
    resamples: int,
    confidence: float,
) -> tuple[IntArray, IntArray]:
    """Both runs' cells as ``(documents, units, 5)`` arrays, once the settings are checked."""
    check_metric(metric)
    if not 0.0 < confidence < 1.0:
        raise ConfigurationError(f"confidence {confidence} is outside (0, 1)")
    if resamples < 1:
        raise ConfigurationError(f"resamples must be at least 1, got {resamples}")
    first = np.asarray(baseline, dtype=np.int64)
    second = np.asarray(candidate, dtype=np.int64)
    if first.ndim == 2:
        first, second = first[:, None, :], second[:, None, :]
    if first.shape != second.shape or first.ndim != 3 or first.shape[2] != 5:
        raise ConfigurationError(
            f"cell arrays of shapes {first.shape} and {second.shape} do not pair",
            expected="two (documents, units, 5) arrays of the same shape",
        )
    return first, second


def _randomisation_p(
    rng: np.random.Generator,
    difference: FloatArray,
    totals: tuple[FloatArray, FloatArray],
    delta: FloatArray,
    metric: str,
    resamples: int,
) -> FloatArray:
    """Two-sided p-values of ``resamples`` sign flips (NaN where ``delta`` is)."""
    total_a, total_b = totals
    documents, units = difference.shape[0], delta.shape[0]
    extreme = np.zeros(units)
    counted = np.zeros(units)
    threshold = np.abs(delta) * (1.0 - _TIES) - _TIES
    for size in resample_batches(resamples, documents):
        swaps = rng.integers(0, 2, size=(size, documents)).astype(np.float64) @ difference
        permuted = _finish(total_b - swaps, metric, units) - _finish(total_a + swaps, metric, units)
        defined = ~np.isnan(permuted)
        extreme += (defined & (np.abs(permuted) >= threshold)).sum(axis=0)
        counted += defined.sum(axis=0)
    p_value = _divide(extreme + 1.0, counted + 1.0)
    p_value[np.isnan(delta)] = np.nan
    return p_value


def paired_comparison(
    baseline: npt.ArrayLike,
    candidate: npt.ArrayLike,
    *,
    metric: str = "f1",
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> PairedResult:
    """Compare two runs' per-document cells on ``metric``, unit by unit.

    ``baseline`` and ``candidate`` hold the confusion cells of the same documents in
    the same order, shaped ``(documents, units, 5)`` (or ``(documents, 5)`` for one
    unit). A unit is whatever the cells were summed over: the whole document, one
    field, one class (cells of documents outside the class are zero).

    The interval is a paired percentile bootstrap of ``candidate - baseline``; the
    p-value comes from ``resamples`` random sign flips (swapping the two runs on a
    random subset of documents), counted as ``(1 + extreme) / (1 + resamples)`` so it
    is never 0.
    """
    first, second = _paired_cells(baseline, candidate, metric, resamples, confidence)
    documents, units = first.shape[0], first.shape[1]
    columns_a, columns_b = _columns(first, metric), _columns(second, metric)
    total_a, total_b = columns_a.sum(axis=0), columns_b.sum(axis=0)
    value_a = _finish(total_a[None, :], metric, units)[0]
    value_b = _finish(total_b[None, :], metric, units)[0]
    delta = value_b - value_a
    if documents == 0:
        empty = np.full(units, np.nan)
        return PairedResult(value_a, value_b, delta, empty, empty, empty.copy(), 0, resamples)

    rng = np.random.default_rng(seed)
    both = np.concatenate([columns_a, columns_b], axis=1)
    width = columns_a.shape[1]
    boot = np.concatenate(
        [
            _finish(sums[:, width:], metric, units) - _finish(sums[:, :width], metric, units)
            for sums in bootstrap_sums(rng, both, resamples)
        ]
    )
    ci_low, ci_high = percentile_interval(boot, confidence)

    p_value = _randomisation_p(
        rng, columns_b - columns_a, (total_a, total_b), delta, metric, resamples
    )
    return PairedResult(
        baseline=value_a,
        candidate=value_b,
        delta=delta,
        ci_low=ci_low,
        ci_high=ci_high,
        p_value=np.minimum(p_value, 1.0),
        documents=documents,
        resamples=resamples,
    )


def metric_interval(
    cells: npt.ArrayLike,
    *,
    metric: str = "f1",
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """One run's metric per unit with its percentile bootstrap interval.

    ``cells`` is ``(documents, units, 5)`` (or ``(documents, 5)``); returns
    ``(value, low, high)``, one entry per unit.
    """
    check_metric(metric)
    array = np.asarray(cells, dtype=np.int64)
    if array.ndim == 2:
        array = array[:, None, :]
    documents, units = array.shape[0], array.shape[1]
    columns = _columns(array, metric)
    value = _finish(columns.sum(axis=0)[None, :], metric, units)[0]
    if documents == 0:
        return value, np.full(units, np.nan), np.full(units, np.nan)
    rng = np.random.default_rng(seed)
    draws = np.concatenate(
        [_finish(sums, metric, units) for sums in bootstrap_sums(rng, columns, resamples)]
    )
    low, high = percentile_interval(draws, confidence)
    return value, low, high


def paired_proportions(
    baseline: npt.ArrayLike,
    candidate: npt.ArrayLike,
    *,
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float, float, float, float]:
    """Pass rates of two runs on the same cases (0/1 per case), their difference and
    its paired bootstrap interval: ``(baseline, candidate, delta, low, high)``.
    """
    first = np.asarray(baseline, dtype=np.float64)
    second = np.asarray(candidate, dtype=np.float64)
    cases = len(first)
    if cases == 0:
        return (np.nan,) * 5
    rate_a, rate_b = float(first.mean()), float(second.mean())
    rng = np.random.default_rng(seed)
    difference = second - first
    draws = np.concatenate(list(bootstrap_sums(rng, difference, resamples))) / cases
    low, high = percentile_interval(draws[:, None], confidence)
    return rate_a, rate_b, rate_b - rate_a, float(low[0]), float(high[0])


def proportion_interval(
    values: npt.ArrayLike,
    *,
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float, float]:
    """A rate (mean of 0/1 values) and its percentile bootstrap interval."""
    array = np.asarray(values, dtype=np.float64)
    if array.size == 0:
        return (np.nan, np.nan, np.nan)
    rng = np.random.default_rng(seed)
    draws = np.concatenate(list(bootstrap_sums(rng, array, resamples))) / array.size
    low, high = percentile_interval(draws[:, None], confidence)
    return float(array.mean()), float(low[0]), float(high[0])


def mcnemar_exact(broken: int, fixed: int) -> float:
    """Two-sided exact McNemar p-value for ``broken`` (pass → fail) and ``fixed``
    (fail → pass) flips: a binomial test of ``broken`` out of the discordant pairs
    at 1/2. With no discordant pair there is no evidence either way: 1.0.
    """
    if broken < 0 or fixed < 0:
        raise ConfigurationError(f"flip counts must not be negative ({broken}, {fixed})")
    discordant = broken + fixed
    if discordant == 0:
        return 1.0
    from scipy.stats import binomtest

    return float(min(1.0, binomtest(broken, discordant, 0.5).pvalue))


def holm(p_values: npt.ArrayLike) -> FloatArray:
    """Holm's step-down adjusted p-values (NaN entries are not tests and stay NaN).

    Controls the family-wise error rate: rejecting every adjusted p-value below
    alpha rejects a true null hypothesis with probability at most alpha.
    """
    values = np.asarray(p_values, dtype=np.float64)
    adjusted = np.full(values.shape, np.nan)
    tested = np.flatnonzero(~np.isnan(values))
    if tested.size == 0:
        return adjusted
    order = tested[np.argsort(values[tested], kind="stable")]
    factors = tested.size - np.arange(tested.size)
    stepped = np.maximum.accumulate(values[order] * factors)
    adjusted[order] = np.minimum(stepped, 1.0)
    return adjusted


Direction = Literal["improvement", "regression", "none"]


def direction(delta: float, significant: bool, *, lower_is_better: bool = False) -> Direction:
    """``improvement``/``regression`` for a significant change, else ``none``."""
    if not significant or not np.isfinite(delta) or delta == 0:
        return "none"
    better = delta < 0 if lower_is_better else delta > 0
    return "improvement" if better else "regression"
