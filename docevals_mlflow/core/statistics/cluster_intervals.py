"""Document-clustered bootstrap intervals for ratios of sums of per-document counts.

The leaves of one document are not independent (one bad scan spoils many fields), so
the unit resampled is the **document**: a resample draws as many documents as there
are, with replacement, and recomputes the micro figure (precision, recall, F1,
accuracy: each a ratio of sums of TP/FA/FD/FN/TN over the documents drawn). From 10
documents these get a studentized interval (bootstrap-t, each resample's delta-method
standard error); with fewer, and for :func:`ratio_interval`, the expanded percentile
interval (docs/statistics.md says why, and why not BCa).

Fast: a figure of one field depends on the documents only through the field's
per-document count rows, which take few distinct values, so one exact resample costs
one multinomial draw over the distinct rows; when rows are mostly distinct the
documents are drawn one by one and the sums are a matrix product (:mod:`.intervals`).
From 10,000 documents, sums that are nearly normal (skewness at most 0.02) are drawn
from the normal with the bootstrap's exact mean and covariance instead. Each group
(field, class, overall) is resampled on its own: its interval is right, but draws of
two groups are not from the same resamples.

Deterministic: the same counts, seed and number of resamples give the same interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from docevals_mlflow.core.statistics.intervals import (
    bootstrap_weights,
    percentile_interval,
    resample_batches,
)

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

DEFAULT_RESAMPLES = 2000
DEFAULT_CONFIDENCE = 0.95
DEFAULT_SEED = 0
CELL_METRICS = ("precision", "recall", "f1", "accuracy")
"""The figures given an interval: each a ratio of sums of the cells."""

# Distinct rows this many times fewer than documents: a multinomial draw over the
# distinct rows is cheaper than drawing each document.
_GROUPING_GAIN = 8
# From this many documents, resampled sums whose skewness is at most _NORMAL_SKEW are
# drawn from the normal with the bootstrap's own mean and covariance (see
# _moment_matched_sums); below it every draw is an exact document resample.
_NORMAL_DOCUMENTS = 10_000
_NORMAL_SKEW = 0.02
# From this many documents up to _NORMAL_DOCUMENTS, cell figures get the studentized
# (bootstrap-t) interval; fewer documents than this give too few distinct resamples
# for a studentized quantile, and they keep the expanded percentile interval.
_STUDENTIZED_DOCUMENTS = 10
# Each figure as numerator / denominator, both linear in [tp, fa, fd, fn, tn].
_RATIOS = {
    "precision": ((1, 0, 0, 0, 0), (1, 1, 1, 0, 0)),
    "recall": ((1, 0, 0, 0, 0), (1, 0, 0, 1, 0)),
    "f1": ((2, 0, 0, 0, 0), (2, 1, 1, 1, 0)),
    "accuracy": ((1, 0, 0, 0, 1), (1, 1, 1, 1, 1)),
}
_PAIRS = [(i, j) for i in range(5) for j in range(i, 5)]


@dataclass(frozen=True, slots=True)
class ClusterInterval:
    """A figure's interval from resampling documents, or why there is none."""

    low: float | None
    high: float | None
    documents: int
    """Documents resampled (those with at least one observation of the figure)."""
    observations: int
    """Leaf comparisons behind the figure."""
    confidence: float
    resamples: int
    seed: int
    reason: str | None = None
    """Why ``low`` and ``high`` are ``None`` (an undefined figure, too few documents)."""

    def as_dict(self) -> dict[str, Any]:
        """The report's ``ci`` entry: ``{low, high, documents, observations,
        confidence, resamples, seed}`` plus ``reason`` when there is no interval."""
        entry: dict[str, Any] = {
            "low": self.low,
            "high": self.high,
            "documents": self.documents,
            "observations": self.observations,
            "confidence": self.confidence,
            "resamples": self.resamples,
            "seed": self.seed,
        }
        if self.reason is not None:
            entry["reason"] = self.reason
        return entry


def _distinct_rows(rows: IntArray, key_columns: int | None = None) -> tuple[IntArray, IntArray]:
    """The distinct rows of ``rows`` and how often each occurs; only the first
    ``key_columns`` columns tell rows apart (the others must be functions of them)."""
    if rows.shape[0] == 0:
        return rows, np.zeros(0, dtype=np.int64)
    keyed = rows[:, :key_columns]
    lowest = keyed.min(axis=0)
    spans = keyed.max(axis=0) - lowest + 1
    if float(np.prod(spans.astype(np.float64))) < 2.0**62:
        # One integer key per row: a 1-D unique is far faster than unique(axis=0).
        key = np.zeros(rows.shape[0], dtype=np.int64)
        for column, span in enumerate(spans.tolist()):
            if span > 1:  # a constant column adds nothing to the key
                key *= span
                key += keyed[:, column] - lowest[column]
        size = int(np.prod(spans))
        if size <= 4 * rows.shape[0]:
            # Few possible keys: counting them is linear, sorting them is not. Keys come
            # out in the order np.unique gives, so the draws do not depend on the path.
            tally = np.bincount(key, minlength=size)
            present = np.flatnonzero(tally)
            any_row = np.zeros(size, dtype=np.int64)
            any_row[key] = np.arange(rows.shape[0])  # rows of one key are alike
            return rows[any_row[present]], tally[present].astype(np.int64)
        _, first, counts = np.unique(key, return_index=True, return_counts=True)
        return rows[first], counts.astype(np.int64)
    _, first, counts = np.unique(keyed, axis=0, return_index=True, return_counts=True)
    return rows[first], counts.astype(np.int64)


def resampled_sums(
    rows: npt.ArrayLike,
    resamples: int,
    rng: np.random.Generator,
    *,
    documents: int | None = None,
    key_columns: int | None = None,
) -> FloatArray:
    """Column sums of ``rows`` (one row of counts per document) over ``resamples``
    document bootstrap resamples (``resamples x columns``).

    ``documents`` (at least ``len(rows)``) counts documents whose rows are all zero and
    left out of ``rows``: they are drawn too, and add nothing. ``key_columns``: only
    the first columns tell rows apart (the rest are derived from them).
    """
    values = np.asarray(rows, dtype=np.int64)
    present = values.shape[0]
    total = present if documents is None else documents
    if total < present:
        raise ValueError(f"documents ({total}) is fewer than the rows given ({present})")
    if total == 0:
        return np.zeros((resamples, values.shape[1]))
    distinct, counts = _distinct_rows(values, key_columns)
    if total > present:
        distinct = np.vstack([distinct, np.zeros((1, values.shape[1]), dtype=np.int64)])
        counts = np.append(counts, total - present)
    if total >= _NORMAL_DOCUMENTS:
        normal = _moment_matched_sums(distinct, counts, resamples, rng)
        if normal is not None:
            return normal
    if distinct.shape[0] * _GROUPING_GAIN <= total:
        drawn = rng.multinomial(total, counts / total, size=resamples)
        return drawn.astype(np.float64) @ distinct.astype(np.float64)
    padded = np.vstack([values, np.zeros((total - present, values.shape[1]), dtype=np.int64)])
    columns = padded.astype(np.float64)
    batches = resample_batches(resamples, total)
    return np.vstack([bootstrap_weights(rng, size, total) @ columns for size in batches])


def _moment_matched_sums(
    distinct: IntArray, counts: IntArray, resamples: int, rng: np.random.Generator
) -> FloatArray | None:
    """Resampled column sums drawn from the normal with the document bootstrap's exact
    mean (the totals) and covariance (``total`` times the rows' covariance), or
    ``None`` when a column's sum is too skewed for the normal.

    The bootstrap sum of ``n`` documents is a sum of ``n`` independent draws, so it is
    normal to within its skewness ``g / sqrt(n)`` (``g`` the rows' skewness). Exact
    draws cost one random number per document and resample (seconds at 100,000
    documents); these cost one per column. A rare column (a field seldom present) keeps
    the exact draws: its skewness stays large.
    """
    total = int(counts.sum())
    share = counts / total
    mean = share @ distinct
    centred = distinct - mean
    covariance = (centred * share[:, None]).T @ centred
    spread = np.sqrt(np.diag(covariance))
    varying = spread > 0
    skew = share @ centred[:, varying] ** 3 / spread[varying] ** 3
    if np.any(np.abs(skew) / math.sqrt(total) > _NORMAL_SKEW):
        return None
    # A symmetric square root by eigendecomposition: constant columns (FA, TN of most
    # fields) make the covariance singular, which a Cholesky factor refuses.
    variances, axes = np.linalg.eigh((covariance + covariance.T) / 2.0)
    root = axes * np.sqrt(np.clip(variances, 0.0, None))
    noise = rng.standard_normal((resamples, distinct.shape[1])) @ root.T
    sums: FloatArray = np.clip(total * mean + math.sqrt(total) * noise, 0.0, None)
    return sums


def _with_products(values: IntArray) -> IntArray:
    """The cells and their 15 pairwise products per document: resampled sums of the
    products give each resample's delta-method variance of any ratio of the cells."""
    products = [values[:, i] * values[:, j] for i, j in _PAIRS]
    return np.hstack([values, np.stack(products, axis=1)])


def _delta_se(sums: FloatArray, name: str, documents: int) -> tuple[FloatArray, FloatArray]:
    """Per row of ``sums`` (cells, then products as :func:`_with_products`), the
    figure ``name`` and its delta-method standard error (documents as clusters)."""
    top, bottom = (np.asarray(vector, dtype=np.float64) for vector in _RATIOS[name])
    second = np.zeros((sums.shape[0], 5, 5))
    for column, (i, j) in enumerate(_PAIRS, start=5):
        second[:, i, j] = second[:, j, i] = sums[:, column]
    numerator, denominator = sums[:, :5] @ top, sums[:, :5] @ bottom
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = numerator / denominator
        # sum over documents of (a_i - R b_i)^2, from the resampled second moments.
        squares = (
            np.einsum("i,rij,j->r", top, second, top)
            - 2 * ratio * np.einsum("i,rij,j->r", top, second, bottom)
            + ratio**2 * np.einsum("i,rij,j->r", bottom, second, bottom)
        )
        error = np.sqrt(np.clip(squares, 0.0, None) * documents / (documents - 1)) / denominator
    return ratio, error


def _studentized_interval(
    sums: FloatArray, totals: FloatArray, name: str, documents: int, confidence: float
) -> tuple[float, float]:
    """The bootstrap-t interval of ``name``: the figure minus the resampled quantiles
    of ``(R* - R) / se*`` times its standard error, clipped to [0, 1]."""
    estimate, error = (float(part[0]) for part in _delta_se(totals[None, :], name, documents))
    if not error > 0:  # every document has the same figure: so has every resample
        return estimate, estimate
    ratio, spread = _delta_se(sums, name, documents)
    with np.errstate(divide="ignore", invalid="ignore"):
        pivots = (ratio - estimate) / spread
    pivots = pivots[~np.isnan(pivots)]  # no figure, or a resample of identical figures
    tail = (1.0 - confidence) / 2.0
    upper, lower = np.quantile(pivots, [1.0 - tail, tail], method="inverted_cdf")
    return max(0.0, estimate - upper * error), min(1.0, estimate - lower * error)


def expanded_confidence(confidence: float, documents: int) -> float:
    """The percentile level that widens a percentile interval for few documents
    (Hesterberg's expanded percentile interval): the normal quantile is replaced by
    ``sqrt(n / (n - 1))`` times Student's t with ``n - 1`` degrees of freedom, which
    undoes the bootstrap's narrowness bias for small ``n``."""
    if documents < 2:
        return confidence
    z = _normal_quantile(0.5 + confidence / 2.0)
    freedom = documents - 1
    # Cornish-Fisher expansion of Student's t quantile (ample for a widening factor).
    t = (
        z
        + (z**3 + z) / (4 * freedom)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * freedom**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * freedom**3)
    )
    return math.erf(t * (documents / freedom) ** 0.5 / math.sqrt(2.0))


def _normal_quantile(probability: float) -> float:
    """The standard normal quantile, by bisection on ``math.erf`` (a scalar, once per
    figure; the stdlib's ``statistics`` module is shadowed in some script folders)."""
    low, high = -40.0, 40.0
    for _ in range(200):
        middle = (low + high) / 2.0
        if 0.5 * (1.0 + math.erf(middle / math.sqrt(2.0))) < probability:
            low = middle
        else:
            high = middle
    return (low + high) / 2.0


def cell_metric_values(sums: FloatArray) -> dict[str, FloatArray]:
    """Precision, recall, F1 and accuracy from sums of ``[tp, fa, fd, fn, tn]`` (the
    last axis); NaN where a denominator is zero (as :func:`metrics_from_cells` gives None)."""
    tp, fa, fd, fn, tn = (sums[..., index] for index in range(5))
    fp = fa + fd
    with np.errstate(divide="ignore", invalid="ignore"):
        values = {
            "precision": tp / (tp + fp),
            "recall": tp / (tp + fn),
            "f1": 2 * tp / (2 * tp + fp + fn),
            "accuracy": (tp + tn) / (tp + fp + fn + tn),
        }
    return {name: np.where(np.isfinite(value), value, np.nan) for name, value in values.items()}


_UNDEFINED = {
    "precision": "precision undefined: nothing predicted (no TP, FA or FD)",
    "recall": "recall undefined: nothing expected (no TP or FN)",
    "f1": "F1 undefined: no TP, FA, FD or FN",
    "accuracy": "accuracy undefined: no observations",
}


@dataclass(frozen=True, slots=True)
class IntervalSettings:
    """How intervals are computed: resamples, confidence and seed."""

    resamples: int = DEFAULT_RESAMPLES
    confidence: float = DEFAULT_CONFIDENCE
    seed: int = DEFAULT_SEED

    def __post_init__(self) -> None:
        if self.resamples < 1:
            raise ValueError(f"resamples must be at least 1, got {self.resamples}")
        if not 0.0 < self.confidence < 1.0:
            raise ValueError(f"confidence must be between 0 and 1, got {self.confidence}")


def cell_intervals(
    rows: npt.ArrayLike,
    *,
    metrics: Sequence[str] = CELL_METRICS,
    settings: IntervalSettings | None = None,
    stream: int = 0,
) -> dict[str, ClusterInterval]:
    """Intervals of the micro figures of one group (a field, a class, all fields) from
    its per-document cells ``rows`` (``documents x 5``: TP, FA, FD, FN, TN).

    Rows without any cell (documents the group does not observe) are left out: the
    documents resampled are those behind the figure. ``stream`` picks an independent
    random stream of the seed, so each group's interval does not depend on the others'.
    """
    settings = settings or IntervalSettings()
    values = np.asarray(rows, dtype=np.int64).reshape(-1, 5)
    observed = values.any(axis=1)
    if not observed.all():
        values = values[observed]
    totals = values.sum(axis=0)
    count, observations = int(values.shape[0]), int(totals.sum())
    point = cell_metric_values(totals.astype(np.float64))

    def none(reason: str) -> ClusterInterval:
        return ClusterInterval(
            None, None, count, observations, settings.confidence, settings.resamples,
            settings.seed, reason,
        )  # fmt: skip

    if count < 2:
        return {name: none(f"fewer than 2 documents ({count})") for name in metrics}
    rng = np.random.default_rng([settings.seed, stream])
    studentized = _STUDENTIZED_DOCUMENTS <= count < _NORMAL_DOCUMENTS
    rows = _with_products(values) if studentized else values
    sums = resampled_sums(rows, settings.resamples, rng, key_columns=5)
    draws = cell_metric_values(sums[:, :5])
    level = expanded_confidence(settings.confidence, count)
    results = {}
    for name in metrics:
        estimate = float(point[name])
        if np.isnan(estimate):
            results[name] = none(_UNDEFINED[name])
            continue
        if studentized:
            low, high = _studentized_interval(
                sums, rows.sum(axis=0).astype(np.float64), name, count, settings.confidence
            )
        else:
            low, high = (float(end[0]) for end in percentile_interval(draws[name][:, None], level))
        # A reported interval always holds its reported figure (a skewed bootstrap
        # distribution can put both percentiles on one side of it).
        results[name] = ClusterInterval(
            min(low, estimate), max(high, estimate), count, observations,
            settings.confidence, settings.resamples, settings.seed,
        )  # fmt: skip
    return results


def ratio_interval(
    numerators: npt.ArrayLike,
    denominators: npt.ArrayLike,
    *,
    settings: IntervalSettings | None = None,
    stream: int = 0,
) -> ClusterInterval:
    """The interval of ``sum(numerators) / sum(denominators)`` (one value per
    document) from resampling documents: a pass rate, an accuracy over items."""
    settings = settings or IntervalSettings()
    top = np.asarray(numerators, dtype=np.int64)
    bottom = np.asarray(denominators, dtype=np.int64)
    if top.shape != bottom.shape or top.ndim != 1:
        raise ValueError("numerators and denominators must be 1-D and of one length")
    count, observations = int(top.shape[0]), int(bottom.sum())
    base = (settings.confidence, settings.resamples, settings.seed)
    if count < 2:
        return ClusterInterval(
            None, None, count, observations, *base, f"fewer than 2 documents ({count})"
        )
    if observations == 0:
        return ClusterInterval(None, None, count, 0, *base, "undefined: zero denominator")
    estimate = float(top.sum()) / observations
    rng = np.random.default_rng([settings.seed, stream])
    sums = resampled_sums(np.stack([top, bottom], axis=1), settings.resamples, rng)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(sums[:, 1] > 0, sums[:, 0] / sums[:, 1], np.nan)
    level = expanded_confidence(settings.confidence, count)
    low, high = percentile_interval(ratios[:, None], level)
    return ClusterInterval(
        min(float(low[0]), estimate), max(float(high[0]), estimate), count, observations, *base
    )


def grouped_cell_intervals(
    groups: npt.ArrayLike,
    cells: npt.ArrayLike,
    count: int,
    *,
    settings: IntervalSettings | None = None,
    stream: int = 0,
) -> list[dict[str, ClusterInterval]]:
    """:func:`cell_intervals` of each of ``count`` groups, from one row per document and
    group: ``groups[i]`` is row ``i``'s group, ``cells[i]`` its ``[tp, fa, fd, fn, tn]``
    (a document appears at most once per group). Group ``g`` uses random stream
    ``stream + g``."""
    keys = np.asarray(groups, dtype=np.int64)
    values = np.asarray(cells, dtype=np.int64).reshape(-1, 5)
    order = np.argsort(keys, kind="stable")
    bounds = np.searchsorted(keys[order], np.arange(count + 1))
    return [
        cell_intervals(
            values[order[bounds[g] : bounds[g + 1]]], settings=settings, stream=stream + g
        )
        for g in range(count)
    ]
