"""Non-inferiority gates: is the candidate not worse than the baseline by more than a margin?

A regression gate (``--fail-on-regression``) fails only when a drop is *significant*,
so a run on too few documents passes it by saying nothing. A non-inferiority gate
turns the burden round: it passes only when the data *show* the candidate is at most
``margin`` worse. The test is one-sided at level ``alpha``: the candidate is
non-inferior when the one-sided ``1 - alpha`` bound of ``candidate - baseline`` (the
lower bound; the upper one for ``far`` and ``fdr``, where lower is better) clears
``-margin``. The bound is the paired percentile bootstrap over documents (or cases)
that the comparison already uses (the ``1 - 2 alpha`` two-sided interval's end).

Three verdicts, each with its reason:

* ``non-inferior``: the bound clears the margin;
* ``inferior``: even the opposite one-sided bound is beyond the margin;
* ``inconclusive``: too few matched documents (fewer than :data:`MIN_UNITS`), an
  undefined metric, or an interval that crosses the margin.

Only ``non-inferior`` passes the gate.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from docevals_mlflow.compare.statistics import (
    LOWER_IS_BETTER,
    paired_comparison,
    paired_proportions,
)
from docevals_mlflow.core.formatting import level_text, setting_text, signed_text
from docevals_mlflow.errors import InputError

if TYPE_CHECKING:
    from docevals_mlflow.compare.results import PairComparison, Settings

MIN_UNITS = 10
"""Fewer matched documents (or cases) than this make any verdict inconclusive: the
bootstrap bound of a handful of units is not a reliable one-sided bound."""

Verdict = Literal["non-inferior", "inferior", "inconclusive"]


@dataclass(frozen=True)
class NonInferiority:
    """One non-inferiority test of one candidate on one metric."""

    candidate: str
    metric: str
    margin: float
    alpha: float
    units: int
    """Matched documents (or cases) the test used."""
    unit: str
    baseline: float
    candidate_value: float
    delta: float
    bound: float
    """The one-sided ``1 - alpha`` bound of ``delta`` (lower; upper when lower is better)."""
    opposite: float
    verdict: Verdict
    reason: str

    @property
    def passed(self) -> bool:
        """Whether non-inferiority is shown (the gate passes)."""
        return self.verdict == "non-inferior"

    @property
    def test(self) -> str:
        """Which test, in words."""
        side = "upper" if self.metric in LOWER_IS_BETTER else "lower"
        level = level_text(1 - self.alpha)
        return f"one-sided paired bootstrap over {self.unit}s, {level} {side} bound"

    def text(self) -> str:
        """The verdict in one line: test, margin, bound and why."""
        return (
            f"non-inferiority {self.metric} (margin {setting_text(self.margin)}): {self.verdict}. "
            f"{self.test}: delta {signed_text(self.delta)}, bound {signed_text(self.bound)} over "
            f"{self.units} {self.unit}s; {self.reason}"
        )


def parse_margins(specs: Iterable[str], metrics: Sequence[str]) -> dict[str, float]:
    """``["f1=0.02", ...]`` as ``{"f1": 0.02}``; margins in the metric's own units (0-1)."""
    margins: dict[str, float] = {}
    for spec in specs:
        name, sep, text = spec.partition("=")
        name = name.strip()
        try:
            margin = float(text)
        except ValueError:
            margin = math.nan
        if not sep or not (math.isfinite(margin) and 0 <= margin < 1):
            raise InputError(
                f"--non-inferiority {spec!r}",
                expected="METRIC=MARGIN with a margin in [0, 1), e.g. f1=0.02",
            )
        if name not in metrics:
            raise InputError(
                f"--non-inferiority {spec!r}: unknown metric {name!r}",
                expected=", ".join(metrics),
            )
        margins[name] = margin
    return margins


def _verdict(
    delta: float, bound: float, opposite: float, margin: float, units: int, worse: int
) -> tuple[Verdict, str]:
    """``worse`` is -1 when a drop is worse (most metrics), +1 when a rise is (far, fdr)."""
    limit = worse * margin
    if units < MIN_UNITS:
        return "inconclusive", f"too few documents: {units} matched (at least {MIN_UNITS} needed)"
    if not (math.isfinite(delta) and math.isfinite(bound)):
        return "inconclusive", "the metric is undefined in a run (zero denominator)"
    if (bound - limit) * worse < 0:
        return (
            "non-inferior",
            f"the bound {signed_text(bound)} clears the margin {signed_text(limit)}",
        )
    if math.isfinite(opposite) and (opposite - limit) * worse > 0:
        return "inferior", f"the whole interval is beyond the margin {signed_text(limit)}"
    return (
        "inconclusive",
        f"the interval crosses the margin: bound {signed_text(bound)} is beyond "
        f"{signed_text(limit)} "
        "(more documents would narrow it)",
    )


def non_inferiority_test(
    baseline: npt.ArrayLike,
    candidate: npt.ArrayLike,
    *,
    metric: str,
    margin: float,
    alpha: float = 0.05,
    resamples: int = 2000,
    seed: int = 0,
    label: str = "candidate",
    unit: str = "document",
) -> NonInferiority:
    """Test that ``candidate`` is not worse than ``baseline`` by more than ``margin``.

    Field metrics take ``(documents, 5)`` cell arrays; ``pass_rate`` takes two 0/1
    arrays over the same cases. The bound is the paired percentile bootstrap's."""
    first = np.asarray(baseline)
    units = int(first.shape[0]) if first.ndim else 0
    options: dict[str, Any] = {"resamples": resamples, "seed": seed, "confidence": 1 - 2 * alpha}
    if metric == "pass_rate":
        values = paired_proportions(baseline, candidate, **options)
        value_a, value_b, delta, low, high = (float(value) for value in values)
    else:
        result = paired_comparison(baseline, candidate, metric=metric, **options)
        value_a, value_b = float(result.baseline[0]), float(result.candidate[0])
        delta = float(result.delta[0])
        low, high = float(result.ci_low[0]), float(result.ci_high[0])
    worse = 1 if metric in LOWER_IS_BETTER else -1
    bound, opposite = (high, low) if worse == 1 else (low, high)
    verdict, reason = _verdict(delta, bound, opposite, margin, units, worse)
    return NonInferiority(
        candidate=label,
        metric=metric,
        margin=margin,
        alpha=alpha,
        units=units,
        unit=unit,
        baseline=value_a,
        candidate_value=value_b,
        delta=delta,
        bound=bound,
        opposite=opposite,
        verdict=verdict,
        reason=reason,
    )


def pair_non_inferiority(
    pair: PairComparison, margins: Mapping[str, float], settings: Settings
) -> list[NonInferiority]:
    """The tests of ``margins`` for one candidate against the baseline."""
    from docevals_mlflow.compare.align import align_cases, align_documents
    from docevals_mlflow.compare.deltas import passed

    options: dict[str, Any] = {
        "alpha": settings.alpha,
        "resamples": settings.resamples,
        "seed": settings.seed,
    }
    tests = []
    for metric, margin in margins.items():
        if pair.unit == "document":
            documents = align_documents(pair.baseline, pair.candidate)
            assert documents is not None
            first, second = documents.baseline, documents.candidate
        else:
            cases = align_cases(pair.baseline, pair.candidate)
            assert cases is not None
            kept = [
                (a, b)
                for a, b in zip(cases.baseline, cases.candidate, strict=True)
                if "not_applicable" not in (a, b)
            ]
            first = np.array([passed(a) for a, _ in kept], dtype=np.float64)
            second = np.array([passed(b) for _, b in kept], dtype=np.float64)
        tests.append(
            non_inferiority_test(
                first,
                second,
                metric=metric,
                margin=margin,
                label=pair.candidate.label,
                unit=pair.unit,
                **options,
            )
        )
    return tests


def check_margins(margins: Mapping[str, float], unit: str) -> None:
    """Refuse a metric the runs' kind cannot be tested on."""
    for metric in margins:
        case_metric = metric == "pass_rate"
        if metric == "macro_f1" or case_metric != (unit == "case"):
            raise InputError(
                f"non-inferiority on {metric!r} is not available for {unit} runs",
                expected="pass_rate for case runs; precision, recall, f1, accuracy, far or "
                "fdr for field runs",
            )


TABLE_HEADER = (
    "candidate",
    "metric",
    "margin",
    "test",
    "delta",
    "one-sided bound",
    "units",
    "verdict",
    "why",
)
"""Columns of the tests' table in the Markdown and HTML comparisons."""


def table_rows(tests: Sequence[NonInferiority]) -> list[list[str]]:
    """One row of :data:`TABLE_HEADER` cells per test."""
    return [
        [
            test.candidate,
            test.metric,
            setting_text(test.margin),
            test.test,
            signed_text(test.delta),
            signed_text(test.bound),
            str(test.units),
            test.verdict,
            test.reason,
        ]
        for test in tests
    ]


def markdown_lines(tests: Sequence[NonInferiority]) -> list[str]:
    """A Markdown section of the tests (empty without tests)."""
    if not tests:
        return []
    lines = [
        "## Non-inferiority",
        "",
        "Passes only where the one-sided bound clears the margin; inconclusive fails the gate.",
        "",
        "| " + " | ".join(TABLE_HEADER) + " |",
        "|---|---|---:|---|---:|---:|---:|---|---|",
    ]
    lines += ["| " + " | ".join(row) + " |" for row in table_rows(tests)]
    return [*lines, ""]
