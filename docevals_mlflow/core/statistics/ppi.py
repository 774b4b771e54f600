"""Prediction-powered inference (PPI++) for a mean: a judge labels every case, humans
label a random subset, and the estimate of the true mean uses both.

With human labels ``Y`` and judge scores ``f`` on the ``n`` labelled cases, and judge
scores ``f̃`` on the ``N`` unlabelled cases, the estimate is
(Angelopoulos, Bates, Fannjiang, Jordan, Zrnic 2023; power tuning from
Angelopoulos, Duchi, Zrnic 2023, "PPI++")::

    θ̂_λ = mean(Y) + λ · (mean(f̃) - mean(f))
    Var(θ̂_λ) ≈ Var(Y - λ f) / n + λ² Var(f̃) / N
    λ̂ = Cov(Y, f) / ((1 + n / N) · Var(f))        (the variance-minimising λ)

and the interval is the normal (CLT) one, ``θ̂ ± z · √Var``. ``λ = 0`` is the
human-only mean and its interval; a judge that agrees perfectly (``f = Y``) gives
``λ̂ = N / (n + N)`` and the variance of a mean over all ``n + N`` cases.

The estimate is unbiased whatever the judge's bias, but only when the labelled cases
are a random sample of all the cases. A judge that does not correlate positively with
the humans cannot help (``λ̂ ≤ 0``); then :func:`ppi_mean` falls back to the human-only
interval and says why.

Pure NumPy and SciPy (for the normal quantile).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.stats import norm

from docevals_mlflow.errors import ConfigurationError, InputError

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class MeanEstimate:
    """A mean with its normal-approximation interval."""

    estimate: float
    low: float
    high: float
    std_error: float
    n: int
    """Observations behind the estimate (labelled plus, for PPI, unlabelled)."""

    @property
    def width(self) -> float:
        """``high - low``."""
        return self.high - self.low


@dataclass(frozen=True)
class PPIResult:
    """The PPI++ estimate beside the judge-only and human-only ones.

    ``corrected`` is the PPI++ estimate, or the human-only one when ``fallback``
    names why the judge was not used (then ``lam`` is 0).
    """

    corrected: MeanEstimate
    judge_only: MeanEstimate
    human_only: MeanEstimate
    lam: float
    """The power-tuning λ used (0 on fallback)."""
    lam_estimated: float | None
    """λ̂ from the data (``None`` when it could not be estimated)."""
    labelled: int
    unlabelled: int
    fallback: str | None = None


def _column(values: Any, name: str) -> FloatArray:
    array = np.asarray(values, dtype=np.float64).reshape(-1)
    if array.size and not np.all(np.isfinite(array)):
        raise InputError(f"{name} holds a value that is not a finite number")
    return array


def _z(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ConfigurationError(f"confidence {confidence} is outside (0, 1)")
    return float(norm.ppf(0.5 + confidence / 2.0))


def _interval(
    estimate: float, variance: float, n: int, z: float, bounds: tuple[float, float] | None
) -> MeanEstimate:
    error = math.sqrt(max(variance, 0.0))
    low, high = estimate - z * error, estimate + z * error
    if bounds is not None:
        low, high = max(low, bounds[0]), min(high, bounds[1])
    return MeanEstimate(estimate=estimate, low=low, high=high, std_error=error, n=n)


def clt_mean(
    values: Any, *, confidence: float = 0.95, bounds: tuple[float, float] | None = None
) -> MeanEstimate:
    """The mean of ``values`` with the CLT interval ``mean ± z · sd / √n`` (sample
    standard deviation, ``ddof=1``); ``bounds`` clips the interval (``(0, 1)`` for a
    share).

    Raises:
        InputError: fewer than two values, or a value is not finite.
    """
    data = _column(values, "values")
    if data.size < 2:
        raise InputError(f"{data.size} value(s): a mean's interval needs at least 2")
    variance = float(np.var(data, ddof=1)) / data.size
    return _interval(float(data.mean()), variance, int(data.size), _z(confidence), bounds)


def ppi_lambda(human: Any, judge_labelled: Any, judge_unlabelled: Any) -> float | None:
    """PPI++'s variance-minimising λ̂ = Cov(Y, f) / ((1 + n/N) · Var(f)) for a mean;
    ``None`` when it is undefined (judge constant on the labelled cases, or no
    unlabelled cases)."""
    y = _column(human, "human")
    f = _column(judge_labelled, "judge_labelled")
    n, big_n = y.size, np.asarray(judge_unlabelled).size
    if n < 2 or big_n == 0:
        return None
    variance = float(np.var(f, ddof=1))
    if variance <= 0.0:
        return None
    covariance = float(np.cov(y, f, ddof=1)[0, 1])
    return covariance / ((1.0 + n / big_n) * variance)


def ppi_mean_at(
    human: Any,
    judge_labelled: Any,
    judge_unlabelled: Any,
    lam: float,
    *,
    confidence: float = 0.95,
    bounds: tuple[float, float] | None = None,
) -> MeanEstimate:
    """The PPI estimate of the mean for a given ``lam`` and its CLT interval
    (``lam = 0``: the human-only mean; ``lam = 1``: classical PPI).

    Raises:
        InputError: the labelled columns differ in length, fewer than two labelled
            cases, or a value is not finite.
    """
    y = _column(human, "human")
    f = _column(judge_labelled, "judge_labelled")
    g = _column(judge_unlabelled, "judge_unlabelled")
    if y.size != f.size:
        raise InputError(f"{y.size} human labels for {f.size} judge scores on the same cases")
    if y.size < 2:
        raise InputError(f"{y.size} labelled case(s): PPI needs at least 2")
    if lam != 0.0 and g.size == 0:
        raise InputError("no unlabelled cases: the judge adds nothing (use lam=0)")
    rectified = y - lam * f
    estimate = float(rectified.mean()) + (lam * float(g.mean()) if g.size else 0.0)
    variance = float(np.var(rectified, ddof=1)) / y.size
    if lam != 0.0:
        # One unlabelled score has no variance of its own; the judge's scores on every
        # case estimate the same spread.
        spread = g if g.size > 1 else np.concatenate([f, g])
        variance += lam * lam * float(np.var(spread, ddof=1)) / g.size
    return _interval(estimate, variance, int(y.size + g.size), _z(confidence), bounds)


def ppi_mean(
    human: Any,
    judge_labelled: Any,
    judge_unlabelled: Any,
    *,
    confidence: float = 0.95,
    bounds: tuple[float, float] | None = None,
    kappa: float | None = None,
) -> PPIResult:
    """PPI++ estimate of the true mean, with λ̂ from the data, beside the judge-only
    and human-only estimates.

    ``human`` and ``judge_labelled`` hold the human label and the judge's score of
    each labelled case (1 pass, 0 fail, or any number); ``judge_unlabelled`` the
    judge's scores of the cases nobody labelled. ``kappa`` (judge against humans),
    when given, must be above 0: a judge no better than chance falls back to the
    human-only estimate, as does ``λ̂ ≤ 0`` or an undefined ``λ̂``.

    Raises:
        InputError: see :func:`ppi_mean_at`.
    """
    y = _column(human, "human")
    f = _column(judge_labelled, "judge_labelled")
    g = _column(judge_unlabelled, "judge_unlabelled")
    human_only = ppi_mean_at(y, f, g, 0.0, confidence=confidence, bounds=bounds)
    judge_only = clt_mean(np.concatenate([f, g]), confidence=confidence, bounds=bounds)
    lam = ppi_lambda(y, f, g)
    fallback = _fallback_reason(lam, kappa, g.size)
    if fallback is not None or lam is None:
        corrected, used = human_only, 0.0
    else:
        corrected = ppi_mean_at(y, f, g, lam, confidence=confidence, bounds=bounds)
        used = lam
    return PPIResult(
        corrected=corrected,
        judge_only=judge_only,
        human_only=human_only,
        lam=used,
        lam_estimated=lam,
        labelled=int(y.size),
        unlabelled=int(g.size),
        fallback=fallback,
    )


def _fallback_reason(lam: float | None, kappa: float | None, unlabelled: int) -> str | None:
    if unlabelled == 0:
        return "every judged case is labelled: the judge adds nothing to the human labels"
    if lam is None:
        return "the judge gave one verdict on every labelled case: λ̂ is undefined"
    if kappa is not None and kappa <= 0.0:
        return f"the judge agrees with humans no better than chance (κ {kappa:.2f})"
    if lam <= 0.0:
        return f"the judge does not correlate positively with the humans (λ̂ {lam:.2f})"
    return None


__all__ = ["MeanEstimate", "PPIResult", "clt_mean", "ppi_lambda", "ppi_mean", "ppi_mean_at"]
