"""Intervals of rates over cases (documents): pass rates, judge agreement, Cohen's kappa.

A rate here is a share of observations (stage verdicts, labelled claims) that are
``pass`` (or agree), and the observations of one case are not independent: a
pipeline's stages fail together, a judge's claims of one document rise and fall with
it. The unit resampled is therefore the **case**:

* every case contributes one observation: the rate is a binomial proportion and gets
  the Wilson score interval (sensible at 0% and 100%, no resampling);
* otherwise (:func:`rate_interval`) the Wilson interval at the rate's effective number
  of observations (the observations divided by the design effect, from the rate's
  delta-method variance over cases) with Student's t on ``cases - 1`` degrees of
  freedom: it covers 93-97% from 20 cases where the studentized case bootstrap
  (:func:`studentized_ratio_interval`, kept for other ratios and as a reference)
  gives intervals several times wider at 20 cases near a 95% pass rate;
* Cohen's kappa (not a ratio of sums) gets the expanded percentile interval of case
  resamples (:func:`agreement_intervals`: a case is drawn with all its pairs).

docs/statistics.md ("Intervals on pass rates and judge agreement") gives the
reasons and the measured coverage. Deterministic: the same inputs, seed and resamples
give the same intervals.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from scipy.stats import norm
from scipy.stats import t as student_t

from docevals_mlflow.core.statistics.cluster_intervals import (
    ClusterInterval,
    IntervalSettings,
    expanded_confidence,
    resampled_sums,
)
from docevals_mlflow.core.statistics.intervals import percentile_interval

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
IntervalMethod = Literal["wilson", "bootstrap-t", "percentile"]

# As for field figures: fewer cases give too few distinct resamples for a studentized
# quantile; from _NORMAL_CASES the sums are drawn from the normal (cluster_intervals).
_STUDENTIZED_CASES = 10
_NORMAL_CASES = 10_000


@dataclass(frozen=True, slots=True)
class RateInterval:
    """A rate's interval from its cases, or why there is none."""

    low: float | None
    high: float | None
    cases: int
    """Cases (documents, clusters) behind the rate."""
    observations: int
    """Observations (stage verdicts, labels) behind the rate."""
    confidence: float
    method: IntervalMethod | None
    resamples: int
    """Bootstrap resamples (0 for a Wilson interval)."""
    seed: int
    reason: str | None = None
    """Why ``low`` and ``high`` are ``None``."""

    def as_dict(self) -> dict[str, Any]:
        """``{low, high, cases, observations, confidence, method, resamples, seed}``
        plus ``reason`` when there is no interval."""
        entry: dict[str, Any] = {
            "low": self.low,
            "high": self.high,
            "cases": self.cases,
            "observations": self.observations,
            "confidence": self.confidence,
            "method": self.method,
            "resamples": self.resamples,
            "seed": self.seed,
        }
        if self.reason is not None:
            entry["reason"] = self.reason
        return entry


def wilson_interval(
    successes: float, total: float, confidence: float = 0.95, *, quantile: float | None = None
) -> tuple[float, float]:
    """The Wilson score interval of ``successes`` out of ``total`` independent trials:
    ``(p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)``. ``successes`` may be
    fractional and ``total`` need not be whole (an effective number of observations);
    ``quantile`` replaces the normal quantile of ``confidence`` (Student's t)."""
    if total <= 0:
        raise ValueError(f"total must be positive, got {total}")
    if not 0 <= successes <= total:
        raise ValueError(f"successes must be between 0 and {total}, got {successes}")
    z = float(norm.ppf(0.5 + confidence / 2.0)) if quantile is None else quantile
    share = successes / total
    scale = 1.0 + z * z / total
    centre = (share + z * z / (2 * total)) / scale
    half = z * math.sqrt(share * (1 - share) / total + z * z / (4 * total * total)) / scale
    # Exact ends at 0 and n (the formula gives them up to rounding).
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == total else min(1.0, centre + half)
    return low, high


def _ratio_and_se(sums: FloatArray, cases: int) -> tuple[FloatArray, FloatArray]:
    """Per row of sums of ``[a, b, a², ab, b²]``: ``R = Σa/Σb`` and its delta-method
    standard error with the cases as clusters, ``sqrt(n/(n-1)·Σ(aᵢ - R·bᵢ)²)/Σb``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = sums[:, 0] / sums[:, 1]
        squares = sums[:, 2] - 2 * ratio * sums[:, 3] + ratio**2 * sums[:, 4]
        error = np.sqrt(np.clip(squares, 0.0, None) * cases / (cases - 1)) / sums[:, 1]
    return ratio, error


def studentized_ratio_interval(
    numerators: npt.ArrayLike,
    denominators: npt.ArrayLike,
    *,
    settings: IntervalSettings | None = None,
    stream: int = 0,
) -> ClusterInterval:
    """The interval of ``sum(numerators) / sum(denominators)`` (one value each per
    case) from resampling cases: the bootstrap-t interval from 10 to 9,999 cases, each
    resample studentized by its own delta-method standard error; the expanded
    percentile interval below 10 cases and on the normal-drawn sums from 10,000.
    Clipped to [0, 1] (a share) and always holding the figure."""
    settings = settings or IntervalSettings()
    top = np.asarray(numerators, dtype=np.int64)
    bottom = np.asarray(denominators, dtype=np.int64)
    if top.shape != bottom.shape or top.ndim != 1:
        raise ValueError("numerators and denominators must be 1-D and of one length")
    if np.any(bottom < 0) or np.any(top < 0) or np.any(top > bottom):
        raise ValueError("each numerator must be between 0 and its denominator")
    count, observations = int(top.shape[0]), int(bottom.sum())
    base = (settings.confidence, settings.resamples, settings.seed)
    if count < 2:
        return ClusterInterval(
            None, None, count, observations, *base, f"fewer than 2 cases ({count})"
        )
    if observations == 0:
        return ClusterInterval(None, None, count, 0, *base, "undefined: zero denominator")
    studentized = _STUDENTIZED_CASES <= count < _NORMAL_CASES
    columns = (
        [top, bottom, top * top, top * bottom, bottom * bottom] if studentized else [top, bottom]
    )
    rows = np.stack(columns, axis=1)
    estimate = float(top.sum()) / observations
    rng = np.random.default_rng([settings.seed, stream])
    sums = resampled_sums(rows, settings.resamples, rng, key_columns=2)
    if studentized:
        error = float(_ratio_and_se(rows.sum(axis=0)[None, :], count)[1][0])
        if not error > 0:  # every case has the same rate: so has every resample
            return ClusterInterval(estimate, estimate, count, observations, *base)
        ratio, spread = _ratio_and_se(sums, count)
        with np.errstate(divide="ignore", invalid="ignore"):
            pivots = (ratio - estimate) / spread
        pivots = pivots[~np.isnan(pivots)]
        tail = (1.0 - settings.confidence) / 2.0
        upper, lower = np.quantile(pivots, [1.0 - tail, tail], method="inverted_cdf")
        low, high = max(0.0, estimate - upper * error), min(1.0, estimate - lower * error)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            drawn = sums[:, 0] / sums[:, 1]
        drawn = drawn[np.isfinite(drawn)]
        level = expanded_confidence(settings.confidence, count)
        ends = percentile_interval(drawn[:, None], level)
        low, high = float(ends[0][0]), float(ends[1][0])
    return ClusterInterval(
        min(low, estimate), max(high, estimate), count, observations, *base
    )  # fmt: skip


def rate_interval(
    successes: npt.ArrayLike,
    observations: npt.ArrayLike,
    *,
    confidence: float = 0.95,
    seed: int = 0,
) -> RateInterval:
    """The interval of a rate from its per-case ``successes`` out of ``observations``
    (one entry per case; cases without observations are left out).

    Every case one observation: the Wilson score interval. Otherwise the Wilson
    interval at the effective number of observations ``p(1-p)/v`` (``v`` the
    delta-method variance of the rate with the cases as clusters; at most the
    observations, and the cases when every case has the same rate) with Student's t
    on ``cases - 1`` degrees of freedom for the normal quantile (Korn and Graubard's
    design-effect correction). ``seed`` is only recorded (nothing is drawn).
    """
    top = np.asarray(successes, dtype=np.int64).reshape(-1)
    bottom = np.asarray(observations, dtype=np.int64).reshape(-1)
    if top.shape != bottom.shape:
        raise ValueError("successes and observations must be of one length")
    if np.any(top < 0) or np.any(top > bottom):
        raise ValueError("each case's successes must be between 0 and its observations")
    seen = bottom > 0
    top, bottom = top[seen], bottom[seen]
    cases, total = int(top.size), int(bottom.sum())
    if cases < 2:
        return RateInterval(
            None, None, cases, total, confidence, None, 0, seed, f"fewer than 2 cases ({cases})"
        )
    share = float(top.sum()) / total
    if np.all(bottom == 1):
        low, high = wilson_interval(int(top.sum()), cases, confidence)
    else:
        spread = float(((top - share * bottom) ** 2).sum()) * cases / (cases - 1) / total**2
        effective = min(float(total), share * (1 - share) / spread) if spread > 0 else cases
        quantile = float(student_t.ppf(0.5 + confidence / 2.0, cases - 1))
        low, high = wilson_interval(share * effective, effective, confidence, quantile=quantile)
    return RateInterval(
        min(low, share), max(high, share), cases, total, confidence, "wilson", 0, seed
    )


def agreement_intervals(
    clusters: Sequence[object],
    human: npt.ArrayLike,
    judge: npt.ArrayLike,
    categories: int,
    *,
    settings: IntervalSettings | None = None,
    stream: int = 0,
    rng: np.random.Generator | None = None,
) -> tuple[RateInterval, RateInterval, int]:
    """Agreement's and Cohen's kappa's intervals of paired category codes (``human[i]``
    and ``judge[i]`` in ``range(categories)``), resampling the ``clusters`` (a case's
    id per pair: a case is drawn with all its pairs). Returns the agreement interval,
    the kappa interval (expanded percentile of the case resamples in which kappa is
    defined) and how many resamples defined kappa. ``rng`` (default: stream
    ``stream`` of ``settings.seed``) draws the resamples."""
    settings = settings or IntervalSettings()
    per_case = _per_case_columns(clusters, human, judge, categories)
    cases, pairs = int(per_case.shape[0]), int(per_case[:, 0].sum())
    agreement = rate_interval(
        per_case[:, 1], per_case[:, 0], confidence=settings.confidence, seed=settings.seed
    )

    def kappa_interval(
        low: float | None, high: float | None, reason: str | None = None
    ) -> RateInterval:
        method: IntervalMethod | None = None if reason else "percentile"
        return RateInterval(
            low, high, cases, pairs, settings.confidence, method,
            settings.resamples, settings.seed, reason,
        )  # fmt: skip

    if cases < 2:
        return agreement, kappa_interval(None, None, f"fewer than 2 cases ({cases})"), 0
    rng = rng or np.random.default_rng([settings.seed, stream])
    sums = resampled_sums(per_case, settings.resamples, rng)
    kappas = _kappas(sums, categories)
    defined = kappas[~np.isnan(kappas)]
    if not defined.size:
        return agreement, kappa_interval(None, None, "κ undefined in every resample"), 0
    point = float(_kappas(per_case.sum(axis=0)[None, :].astype(np.float64), categories)[0])
    low, high = percentile_interval(
        defined[:, None], expanded_confidence(settings.confidence, cases)
    )
    low_value, high_value = float(low[0]), float(high[0])
    if not math.isnan(point):
        low_value, high_value = min(low_value, point), max(high_value, point)
    return agreement, kappa_interval(low_value, high_value), int(defined.size)


def _per_case_columns(
    clusters: Sequence[object], human: npt.ArrayLike, judge: npt.ArrayLike, categories: int
) -> IntArray:
    """Per case (in sorted order of its key): ``[pairs, agreeing, human one-hot, judge
    one-hot]`` summed over its pairs."""
    human_codes = np.asarray(human, dtype=np.int64)
    judge_codes = np.asarray(judge, dtype=np.int64)
    _, cluster_of = np.unique(np.asarray([str(key) for key in clusters]), return_inverse=True)
    cases = int(cluster_of.max()) + 1 if cluster_of.size else 0
    levels = np.arange(categories)
    columns = np.concatenate(
        [
            np.ones((human_codes.size, 1), dtype=np.int64),
            (human_codes == judge_codes)[:, None],
            human_codes[:, None] == levels[None, :],
            judge_codes[:, None] == levels[None, :],
        ],
        axis=1,
    ).astype(np.int64)
    per_case: IntArray = np.zeros((cases, columns.shape[1]), dtype=np.int64)
    np.add.at(per_case, cluster_of, columns)
    return per_case


def _kappas(sums: FloatArray, categories: int) -> FloatArray:
    """Cohen's kappa per row of summed ``[pairs, agreeing, human one-hot, judge
    one-hot]`` (NaN where undefined): ``(n·a - Σ hₖjₖ) / (n² - Σ hₖjₖ)``."""
    units, agreeing = sums[:, 0], sums[:, 1]
    chance = (sums[:, 2 : 2 + categories] * sums[:, 2 + categories :]).sum(axis=1)
    numerator = units * agreeing - chance
    denominator = units * units - chance
    kappa = np.full(sums.shape[0], np.nan)
    np.divide(numerator, denominator, out=kappa, where=denominator != 0)
    return kappa
