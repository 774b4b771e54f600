"""Is it real: the tested effects of one candidate against the baseline.

Field comparison runs: the chosen metric over all matched documents, per field and
per class (when there are several), each with a paired bootstrap interval and a
paired randomisation test; the share of fully correct documents with the exact
McNemar test. Case and pipeline evaluations: the pass rate over all decided stages
and per stage, with a paired bootstrap interval and the exact McNemar test. Holm's
correction then runs within each family, across units and candidates.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from docevals_mlflow.compare.align import AlignedCases, AlignedDocuments, class_cells
from docevals_mlflow.compare.deltas import passed, verdict_kappa
from docevals_mlflow.compare.results import CASE_METRIC, FAMILIES, Settings
from docevals_mlflow.compare.statistics import (
    PairedResult,
    direction,
    holm,
    mcnemar_exact,
    paired_comparison,
    paired_proportions,
)

if TYPE_CHECKING:
    import pandas as pd

ALL_DOCUMENTS = "all documents"
CORRECT_DOCUMENTS = "documents fully correct"
ALL_CASES = "all cases"


def _row(
    family: str,
    unit: str,
    metric: str,
    test: str,
    n: int,
    values: Sequence[float],
    p_value: float,
    *,
    kappa: float = np.nan,
    detail: str = "",
) -> tuple[Any, ...]:
    baseline, candidate, delta, low, high = (float(value) for value in values)
    return (
        family,
        unit,
        metric,
        test,
        int(n),
        baseline,
        candidate,
        delta,
        low,
        high,
        float(p_value),
        np.nan,
        False,
        "none",
        float(kappa),
        detail,
    )


def _pass_fail(flags: np.ndarray[Any, Any]) -> list[str]:
    return ["pass" if flag else "fail" for flag in flags]


def _randomisation_rows(
    family: str, units: Sequence[str], counts: Sequence[int], result: PairedResult, metric: str
) -> list[tuple[Any, ...]]:
    return [
        _row(
            family,
            unit,
            metric,
            "randomisation",
            counts[index],
            (
                result.baseline[index],
                result.candidate[index],
                result.delta[index],
                result.ci_low[index],
                result.ci_high[index],
            ),
            result.p_value[index],
        )
        for index, unit in enumerate(units)
    ]


def field_effects(aligned: AlignedDocuments, settings: Settings) -> list[tuple[Any, ...]]:
    options: dict[str, Any] = {
        "resamples": settings.resamples,
        "seed": settings.seed,
        "confidence": settings.confidence,
    }
    metric = settings.metric
    documents = len(aligned.ids)
    overall = paired_comparison(aligned.baseline, aligned.candidate, metric=metric, **options)
    rows = _randomisation_rows("overall", [ALL_DOCUMENTS], [documents], overall, metric)
    # Fully correct: no false alarm, false discovery or miss anywhere in the document.
    first_ok = aligned.baseline[:, 1:4].sum(axis=1) == 0
    second_ok = aligned.candidate[:, 1:4].sum(axis=1) == 0
    broken = int((first_ok & ~second_ok).sum())
    fixed = int((~first_ok & second_ok).sum())
    rows.append(
        _row(
            "overall",
            CORRECT_DOCUMENTS,
            "correct_rate",
            "mcnemar",
            documents,
            paired_proportions(first_ok, second_ok, **options),
            mcnemar_exact(broken, fixed),
            kappa=verdict_kappa(_pass_fail(first_ok), _pass_fail(second_ok)),
            detail=f"{fixed} fixed, {broken} broken",
        )
    )
    if aligned.fields:
        fields = paired_comparison(
            aligned.baseline_fields, aligned.candidate_fields, metric=metric, **options
        )
        # n: the documents where the field has a leaf in either run.
        present = (aligned.baseline_fields.sum(axis=2) > 0) | (
            aligned.candidate_fields.sum(axis=2) > 0
        )
        rows += _randomisation_rows(
            "field", aligned.fields, present.sum(axis=0).tolist(), fields, metric
        )
    names, first_classes = class_cells(aligned.baseline, aligned.classes)
    if len(names) > 1:
        _, second_classes = class_cells(aligned.candidate, aligned.classes)
        classes = paired_comparison(first_classes, second_classes, metric=metric, **options)
        counts = [aligned.classes.count(name) for name in names]
        rows += _randomisation_rows("class", names, counts, classes, metric)
    return rows


def _case_test(
    family: str,
    unit: str,
    first: Sequence[str],
    second: Sequence[str],
    settings: Settings,
) -> tuple[Any, ...]:
    first_pass = np.array([passed(verdict) for verdict in first], dtype=bool)
    second_pass = np.array([passed(verdict) for verdict in second], dtype=bool)
    broken = int((first_pass & ~second_pass).sum())
    fixed = int((~first_pass & second_pass).sum())
    return _row(
        family,
        unit,
        CASE_METRIC,
        "mcnemar",
        len(first),
        paired_proportions(
            first_pass,
            second_pass,
            resamples=settings.resamples,
            seed=settings.seed,
            confidence=settings.confidence,
        ),
        mcnemar_exact(broken, fixed),
        kappa=verdict_kappa(first, second),
        detail=f"{fixed} fixed, {broken} broken",
    )


def _decided(aligned: AlignedCases) -> list[int]:
    # A stage that was not applicable in either run says nothing about pass or fail.
    return [
        index
        for index, (first, second) in enumerate(
            zip(aligned.baseline, aligned.candidate, strict=True)
        )
        if "not_applicable" not in (first, second)
    ]


def case_effects(aligned: AlignedCases, settings: Settings) -> list[tuple[Any, ...]]:
    keep = _decided(aligned)
    first = [aligned.baseline[index] for index in keep]
    second = [aligned.candidate[index] for index in keep]
    rows = [_case_test("overall", ALL_CASES, first, second, settings)]
    stages: dict[str, list[int]] = {}
    for index in keep:
        stages.setdefault(aligned.keys[index][1], []).append(index)
    if len(stages) > 1:
        for stage, indices in stages.items():
            rows.append(
                _case_test(
                    "stage",
                    stage,
                    [aligned.baseline[index] for index in indices],
                    [aligned.candidate[index] for index in indices],
                    settings,
                )
            )
    return rows


def adjust(frames: list[pd.DataFrame], settings: Settings) -> None:
    """Holm within each family, across its units and all candidates (in place)."""
    for family in FAMILIES:
        masks = [(frame["family"] == family).to_numpy() for frame in frames]
        raw = [
            frame["p_value"].to_numpy(dtype=np.float64)[mask]
            for frame, mask in zip(frames, masks, strict=True)
        ]
        if not sum(len(part) for part in raw):
            continue
        adjusted = holm(np.concatenate(raw))
        start = 0
        for frame, mask, part in zip(frames, masks, raw, strict=True):
            frame.loc[mask, "p_adjusted"] = adjusted[start : start + len(part)]
            start += len(part)
    for frame in frames:
        adjusted_p = frame["p_adjusted"].to_numpy(dtype=np.float64)
        significant = np.isfinite(adjusted_p) & (adjusted_p < settings.alpha)
        frame["significant"] = significant
        frame["direction"] = [
            direction(
                float(delta),
                bool(flag),
                lower_is_better=settings.lower_is_better and metric == settings.metric,
            )
            for delta, flag, metric in zip(
                frame["delta"], significant, frame["metric"], strict=True
            )
        ]
