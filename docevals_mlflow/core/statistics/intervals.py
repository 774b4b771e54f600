"""Percentile bootstrap: resample the independent units with replacement, recompute
the statistic per resample, and read the interval off the percentiles.

A resample is a row of weights (how often each unit was drawn), so any statistic that
is a ratio of sums over units is one matrix product per batch of resamples; no Python
loop runs per resample or per unit.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

# Bounds one batch's draw matrix (resamples x units) to ~16 MB of float64.
_BATCH_CELLS = 2_000_000


def resample_batches(resamples: int, units: int) -> Iterator[int]:
    """Batch sizes summing to ``resamples``, each small enough for one draw matrix."""
    size = max(1, min(resamples, _BATCH_CELLS // max(units, 1)))
    for start in range(0, resamples, size):
        yield min(size, resamples - start)


def bootstrap_weights(rng: np.random.Generator, draws: int, units: int) -> FloatArray:
    """How often each unit is drawn in each of ``draws`` resamples (rows sum to ``units``)."""
    index = rng.integers(0, units, size=(draws, units))
    index += np.arange(draws)[:, None] * units
    counts = np.bincount(index.ravel(), minlength=draws * units)
    return counts.reshape(draws, units).astype(np.float64)


def bootstrap_sums(
    rng: np.random.Generator, columns: FloatArray, resamples: int
) -> Iterator[FloatArray]:
    """Per batch of resamples, the column sums of ``columns`` (``units x k``) over each
    resample's draw (``batch x k``). The batches together hold ``resamples`` rows."""
    units = columns.shape[0]
    for size in resample_batches(resamples, units):
        yield bootstrap_weights(rng, size, units) @ columns


def percentile_interval(draws: FloatArray, confidence: float) -> tuple[FloatArray, FloatArray]:
    """Per column, the percentile interval of the defined (non-NaN) draws; NaN where
    no draw is defined."""
    tail = (1.0 - confidence) / 2.0 * 100.0
    low = np.full(draws.shape[1], np.nan)
    high = np.full(draws.shape[1], np.nan)
    defined = ~np.isnan(draws)
    complete = defined.all(axis=0)
    if complete.any():
        low[complete], high[complete] = np.percentile(
            draws[:, complete], [tail, 100.0 - tail], axis=0
        )
    for column in np.flatnonzero(~complete & defined.any(axis=0)):
        values = draws[defined[:, column], column]
        low[column], high[column] = np.percentile(values, [tail, 100.0 - tail])
    return low, high
