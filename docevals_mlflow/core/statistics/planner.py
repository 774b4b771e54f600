"""Sample-size planning from a field report: how many documents a figure needs.

A field's micro F1 (or precision, recall, accuracy) is a ratio of sums over documents,
``R = sum(y_i) / sum(x_i)`` (F1: ``y = 2TP``, ``x = 2TP + FP + FN``). Documents are
the independent units (fields inside one document are correlated), so its variance is
the delta-method (linearisation) variance of a ratio estimator over document clusters::

    u_i = (y_i - R x_i) / mean(x)        var(R) ≈ s_u² / n

where ``s_u²`` is the sample variance of ``u_i`` over the ``n`` documents (those
without the field count, with ``u_i = 0``: a plan is for documents drawn like these).
The same formula over single leaves (each leaf its own cluster) is the variance the
figure would have if leaves were independent; their ratio is the design effect, and
``deff = 1 + (m - 1) rho`` gives the intra-document correlation ``rho`` for ``m`` leaves
per document.

* Documents for a ``±k`` interval at level ``1 - alpha``: ``n = (z_{1-alpha/2} s_u / k)²``.
* Minimum detectable difference between two versions on the same documents (paired):
  ``(z_{1-alpha/2} + z_power) s_d / √n``, ``s_d²`` the variance of the per-document
  difference of the two linearised values. From one report ``s_d² = 2 s_u² (1 - r)``
  for an assumed between-version correlation ``r`` (stated with the figure).
* Documents to detect a difference ``Δ`` (or to show non-inferiority at margin ``Δ``
  when the versions are equal, one-sided): ``n = ((z_a + z_power) s_d / Δ)²``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from docevals_mlflow.core.statistics.planner_report import (
    document_cells,
    load_fields_report,
    paired_order,
)
from docevals_mlflow.errors import InputError

FloatArray = npt.NDArray[np.float64]

PLAN_METRICS = ("f1", "precision", "recall", "accuracy")
"""Metrics the planner handles: ratios of confusion-cell sums."""
OVERALL = "overall"
"""The unit name of the whole-document figure."""
DEFAULT_PAIR_CORRELATION = 0.5


def ratio_parts(cells: npt.ArrayLike, metric: str) -> tuple[FloatArray, FloatArray]:
    """Numerator and denominator of ``metric`` per row of ``tp, fa, fd, fn, tn`` cells."""
    array = np.asarray(cells, dtype=np.float64)
    tp, fa, fd, fn, tn = (array[..., index] for index in range(5))
    if metric == "f1":
        return 2 * tp, 2 * tp + fa + fd + fn
    if metric == "precision":
        return tp, tp + fa + fd
    if metric == "recall":
        return tp, tp + fn
    if metric == "accuracy":
        return tp + tn, tp + fa + fd + fn + tn
    raise InputError(f"unknown metric {metric!r} for planning", expected=", ".join(PLAN_METRICS))


_DENOMINATOR_CELLS = {
    "f1": (0, 1, 2, 3),
    "precision": (0, 1, 2),
    "recall": (0, 3),
    "accuracy": (0, 1, 2, 3, 4),
}
"""The cells (``tp, fa, fd, fn, tn`` positions) whose leaves are in each metric's denominator."""


def denominator_leaves(cells: npt.ArrayLike, metric: str) -> FloatArray:
    """Per row, the leaves that count in ``metric`` (its cluster size)."""
    array = np.asarray(cells, dtype=np.float64)
    sizes: FloatArray = array[..., list(_DENOMINATOR_CELLS[metric])].sum(axis=-1)
    return sizes


def linearised(cells: npt.ArrayLike, metric: str) -> tuple[float, FloatArray]:
    """The metric over all rows and each row's linearised contribution ``u_i``.

    NaN and an empty array when the metric is undefined (zero denominator)."""
    y, x = ratio_parts(cells, metric)
    if x.size == 0 or x.sum() == 0:
        return math.nan, np.zeros(0)
    value = float(y.sum() / x.sum())
    return value, (y - value * x) / x.mean()


def cluster_variance(cells: npt.ArrayLike, metric: str) -> float:
    """``s_u²``: the per-document variance of the metric's linearised contribution
    (``var(metric) ≈ s_u² / n``); NaN with fewer than two documents or no denominator."""
    _, u = linearised(cells, metric)
    return float(u.var(ddof=1)) if u.size >= 2 else math.nan


def leaf_variance(totals: npt.ArrayLike, metric: str) -> float:
    """The variance of the metric if every leaf were an independent unit (the same
    linearisation, one leaf per cluster): the baseline of the design effect.
    ``totals`` are the cells summed over all documents."""
    tp, fa, fd, fn, tn = (float(value) for value in np.asarray(totals, dtype=np.float64))
    y, x = ratio_parts(np.asarray([tp, fa, fd, fn, tn]), metric)
    if float(x) == 0:
        return math.nan
    value = float(y) / float(x)
    # Each leaf's (y, x) in this metric: (w, w) when it counts for the metric, (0, w') when
    # it counts against, (0, 0) when it is outside the denominator.
    weights = {
        "f1": [(2, 2, tp), (0, 1, fa + fd + fn)],
        "precision": [(1, 1, tp), (0, 1, fa + fd)],
        "recall": [(1, 1, tp), (0, 1, fn)],
        "accuracy": [(1, 1, tp + tn), (0, 1, fa + fd + fn)],
    }[metric]
    leaves = sum(count for _, x_leaf, count in weights if x_leaf)
    if leaves < 2:
        return math.nan
    x_mean = float(x) / leaves
    squares = sum(count * (y_leaf - value * x_leaf) ** 2 for y_leaf, x_leaf, count in weights)
    return squares / (leaves - 1) / x_mean**2 / leaves


def _z(probability: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(probability))


def documents_for_half_width(variance: float, half_width: float, *, alpha: float = 0.05) -> int:
    """Documents for a two-sided ``1 - alpha`` normal interval of ``±half_width``."""
    if not math.isfinite(variance):
        return 0
    return max(2, math.ceil((_z(1 - alpha / 2) / half_width) ** 2 * variance))


def minimum_detectable_difference(
    difference_variance: float,
    documents: int,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    one_sided: bool = False,
) -> float:
    """The smallest true difference a paired test of ``documents`` detects with ``power``."""
    if documents < 2 or not math.isfinite(difference_variance):
        return math.nan
    z_alpha = _z(1 - alpha) if one_sided else _z(1 - alpha / 2)
    return (z_alpha + _z(power)) * math.sqrt(difference_variance / documents)


def documents_for_difference(
    difference_variance: float,
    difference: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    one_sided: bool = False,
) -> int:
    """Documents for a paired test to detect ``difference`` with ``power`` (inverse of
    :func:`minimum_detectable_difference`)."""
    if not math.isfinite(difference_variance):
        return 0
    z_alpha = _z(1 - alpha) if one_sided else _z(1 - alpha / 2)
    return max(2, math.ceil(((z_alpha + _z(power)) / difference) ** 2 * difference_variance))


@dataclass(frozen=True)
class FieldPlan:
    """The plan of one field (or ``overall``); every figure with what it assumes."""

    field: str
    metric: str
    value: float
    documents: int
    """Documents in the report (those without the field included)."""
    documents_with_field: int
    leaves: int
    variance: float
    """``s_u²``: per-document variance of the linearised metric."""
    design_effect: float
    intra_document_correlation: float
    current_half_width: float
    required_documents: int
    """Documents for the requested ``±half_width`` interval."""
    difference_variance: float
    difference_source: str
    """``paired`` (from two reports) or ``assumed r=…`` (one report)."""
    mdd_now: float
    """Minimum detectable difference (two-sided test) at the report's size."""
    mdd_at_required: float
    documents_for_difference: int | None
    """Documents to detect ``difference`` (two-sided), when one was asked for."""
    assumptions: tuple[str, ...]


@dataclass(frozen=True)
class SamplePlan:
    """What :func:`plan_sample_size` returns: one :class:`FieldPlan` per unit."""

    metric: str
    half_width: float
    alpha: float
    power: float
    difference: float | None
    fields: tuple[FieldPlan, ...]
    notes: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (NaN as ``None``)."""
        ready: dict[str, Any] = _json_ready(asdict(self))
        return ready


def _json_ready(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _json_ready(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_json_ready(item) for item in value]
    return value


def _plan_unit(
    name: str,
    cells: FloatArray,
    other: FloatArray | None,
    settings: dict[str, Any],
) -> FieldPlan:
    # Why long: one plan gathers eight figures, each with the assumption it rests on.
    metric, alpha, power = settings["metric"], settings["alpha"], settings["power"]
    value, u = linearised(cells, metric)
    variance = float(u.var(ddof=1)) if u.size >= 2 else math.nan
    totals = cells.sum(axis=0)
    sizes = denominator_leaves(cells, metric)
    present = int((cells.sum(axis=1) > 0).sum())
    leaves = int(sizes.sum())
    documents = len(cells)
    srs = leaf_variance(totals, metric)
    clustered = variance / documents if documents else math.nan
    design = clustered / srs if math.isfinite(srs) and srs > 0 else math.nan
    mean_size = float((sizes[sizes > 0] ** 2).sum() / max(sizes.sum(), 1))
    icc = (design - 1) / (mean_size - 1) if mean_size > 1 and math.isfinite(design) else math.nan
    z = _z(1 - alpha / 2)
    assumptions = [
        f"documents drawn like these ({present} of {documents} hold {name})",
        f"normal interval at {1 - alpha:.0%} over document clusters (delta method)",
    ]
    if other is not None:
        _, u_other = linearised(other, metric)
        if u_other.size == u.size and u.size >= 2:
            difference_variance = float((u_other - u).var(ddof=1))
            source = "paired"
        else:
            difference_variance, source = math.nan, "paired (undefined in one report)"
        assumptions.append("differences measured on the same documents in both reports")
    else:
        r = settings["pair_correlation"]
        difference_variance = 2 * variance * (1 - r)
        source = f"assumed r={r:g}"
        assumptions.append(
            f"one report: both versions assumed to have this variance, with per-document "
            f"correlation r={r:g} between them"
        )
    required = documents_for_half_width(variance, settings["half_width"], alpha=alpha)
    difference = settings["difference"]
    assumptions.append(f"two-sided paired test at alpha={alpha:g}, power {power:g}")
    return FieldPlan(
        field=name,
        metric=metric,
        value=value,
        documents=documents,
        documents_with_field=present,
        leaves=leaves,
        variance=variance,
        design_effect=design,
        intra_document_correlation=icc,
        current_half_width=z * math.sqrt(variance / documents) if documents else math.nan,
        required_documents=required,
        difference_variance=difference_variance,
        difference_source=source,
        mdd_now=minimum_detectable_difference(
            difference_variance, documents, alpha=alpha, power=power
        ),
        mdd_at_required=minimum_detectable_difference(
            difference_variance, required, alpha=alpha, power=power
        ),
        documents_for_difference=(
            documents_for_difference(difference_variance, difference, alpha=alpha, power=power)
            if difference is not None
            else None
        ),
        assumptions=tuple(assumptions),
    )


def _check(half_width: float, alpha: float, power: float, metric: str, correlation: float) -> None:
    if not (math.isfinite(half_width) and 0 < half_width < 1):
        raise InputError(f"half-width {half_width:g}", expected="a value between 0 and 1")
    if not (math.isfinite(alpha) and 0 < alpha < 1):
        raise InputError(f"alpha {alpha:g}", expected="a level between 0 and 1")
    if not (math.isfinite(power) and 0 < power < 1):
        raise InputError(f"power {power:g}", expected="a probability between 0 and 1")
    if not (math.isfinite(correlation) and -1 <= correlation <= 1):
        raise InputError(f"pair correlation {correlation:g}", expected="a value in [-1, 1]")
    if metric not in PLAN_METRICS:
        raise InputError(f"unknown metric {metric!r}", expected=", ".join(PLAN_METRICS))


def _units(
    first: dict[str, Any], second: dict[str, Any] | None, wanted: list[str], source: str
) -> dict[str, tuple[Any, Any]]:
    """Each planned unit's cells, and the other report's in the same document order."""
    for name in wanted:
        if name != OVERALL and name not in first["fields"]:
            known = ", ".join(sorted(first["fields"])[:10]) or "none (no rows)"
            raise InputError(f"unknown field {name!r}", source=source, expected=known)
    units: dict[str, tuple[Any, Any]] = {}
    for name in wanted or [OVERALL, *sorted(first["fields"])]:
        cells = first["overall"] if name == OVERALL else first["fields"][name]
        paired = None
        if second is not None:
            cells_b = second["overall"] if name == OVERALL else second["fields"].get(name)
            paired = None if cells_b is None else cells_b[second["order"]].astype(np.float64)
        units[name] = (cells, paired)
    return units


def plan_sample_size(
    report: Mapping[str, Any] | str | os.PathLike[str],
    half_width: float = 0.03,
    field: str | Sequence[str] | None = None,
    *,
    metric: str = "f1",
    alpha: float = 0.05,
    power: float = 0.8,
    other: Mapping[str, Any] | str | os.PathLike[str] | None = None,
    pair_correlation: float = DEFAULT_PAIR_CORRELATION,
    difference: float | None = None,
) -> SamplePlan:
    """Plan the documents a field report's figures need (see the module docstring).

    Args:
        report: a field report (its dict or the path of its JSON).
        half_width: the wanted ``±`` half-width of the ``1 - alpha`` interval.
        field: one template (or several) to plan; default every field and ``overall``.
        metric: ``f1`` (default), ``precision``, ``recall`` or ``accuracy``.
        alpha: two-sided level of the interval and the test.
        power: power of the paired test for the minimum detectable difference.
        other: a second report over the same documents (another prompt version): the
            paired differences give the variance of a difference; without it
            ``pair_correlation`` is assumed.
        pair_correlation: assumed per-document correlation of two versions.
        difference: also plan the documents to detect this difference.

    Raises:
        InputError: bad settings, a report that is not a field report, or an unknown field.
    """
    _check(half_width, alpha, power, metric, pair_correlation)
    if difference is not None and not (math.isfinite(difference) and 0 < difference < 1):
        raise InputError(f"difference {difference:g}", expected="a value between 0 and 1")
    first_data, first_source = load_fields_report(report, "report")
    first = document_cells(first_data, first_source)
    second = None
    if other is not None:
        second_data, second_source = load_fields_report(other, "other report")
        second = document_cells(second_data, second_source)
        second["order"] = paired_order(first, second, second_source)
    wanted = [field] if isinstance(field, str) else list(field or [])
    units = _units(first, second, wanted, first_source)
    notes: list[str] = []
    if not first["fields"]:
        notes.append("the report has no per-document rows: only the overall figure is planned")
    settings = {
        "metric": metric,
        "alpha": alpha,
        "power": power,
        "half_width": half_width,
        "pair_correlation": pair_correlation,
        "difference": difference,
    }
    plans = tuple(
        _plan_unit(name, cells.astype(np.float64), paired, settings)
        for name, (cells, paired) in units.items()
    )
    return SamplePlan(metric, half_width, alpha, power, difference, plans, tuple(notes))
