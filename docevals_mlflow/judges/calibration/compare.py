""":func:`calibrate`: compare a judge's verdicts in evaluation reports with human labels.

It pairs the labels with the judge's answers, computes the figures of each level
(cases, claims) and of judge panels, and lists the labels that match nothing and the
judged cases and claims nobody labelled.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

import numpy as np

from docevals_mlflow.core.reports import EvaluationReport, PipelineEvaluationReport, SuiteReport
from docevals_mlflow.errors import ConfigurationError
from docevals_mlflow.judges.calibration.correction import pass_rate_correction
from docevals_mlflow.judges.calibration.disagreement import labelled_disagreement_budget
from docevals_mlflow.judges.calibration.figures import (
    CASE_ABSTENTIONS,
    CLAIM_ABSTENTIONS,
    _level_figures,
    _panel_figures,
)
from docevals_mlflow.judges.calibration.labels import (
    CASE_LABELS,
    PREDICTION_CLAIM_LABELS,
    HumanLabel,
    _label_key,
    _reject_repeats,
)
from docevals_mlflow.judges.calibration.matching import (
    _NO_ANSWER,
    _Judged,
    _judged_units,
    _pair_labels,
    _Pairing,
    _stage_reports,
)
from docevals_mlflow.judges.calibration.report import (
    CalibrationReport,
    JudgedItem,
    LevelCalibration,
)

_UnitKey = tuple[str, str]


def calibrate(
    reports: Iterable[EvaluationReport | PipelineEvaluationReport | SuiteReport],
    labels: Iterable[HumanLabel],
    *,
    metric: str | None = None,
    bootstrap: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> CalibrationReport:
    """Compare a judge's verdicts in ``reports`` with human ``labels``.

    Each case label is paired with the verdict of ``metric`` on that case and stage
    (by default the stage's only judge or panel metric); each claim label with the
    judge's answer on that claim (a panel's consensus answer). Kappa is computed
    with the judge's unsure answers as categories of their own (the headline
    figure, which an abstaining judge cannot game) and on the decided subset. The case
    pass rate is also estimated with PPI++ from the judge's verdicts on every case and
    the human case labels (:attr:`CalibrationReport.pass_rate`).

    Intervals resample labelled case ids, each with all its labels (its claims are not
    independent): Wilson for shares, and for kappa the expanded percentile interval of
    ``bootstrap`` case resamples seeded with ``seed`` (each level its own stream).
    ``bootstrap=0`` skips them.

    Raises:
        ConfigurationError: a stage has several judge metrics and ``metric`` is not
            given, no stage has the metric asked for, or a setting is out of range.
        InputError: a suite report is passed, a case appears twice, a label is given
            twice, or a claim label does not fit its claim's kind.
    """
    _check_settings(bootstrap, confidence, seed)
    labels = list(labels)
    _reject_repeats(labels)
    stages = _stage_reports(reports)
    units, present = _judged(stages, metric)
    pairing = _pair_labels(labels, units, present, metric)
    cases, claims = _levels(pairing, bootstrap, seed, confidence)
    panel = _panel_figures(list(units.values()), pairing.variant_pairs)
    used = Counter(unit.metric for unit in units.values())
    unlabelled_cases, unlabelled_claims = _unlabelled(units, labels)
    return CalibrationReport(
        metric=metric,
        metrics_used=sorted(used),
        bootstrap=bootstrap,
        seed=seed,
        confidence=confidence,
        cases=cases,
        claims=claims,
        panel=panel,
        disagreement=(
            labelled_disagreement_budget(stages, cases.pairs) if panel is not None else None
        ),
        pass_rate=pass_rate_correction(
            units, cases.pairs, kappa=cases.kappa, confidence=confidence
        ),
        unmatched_labels=pairing.unmatched,
        unlabelled_cases=unlabelled_cases,
        unlabelled_claims=unlabelled_claims,
        notes=_notes(units, used),
    )


def _check_settings(bootstrap: int, confidence: float, seed: int) -> None:
    if bootstrap < 0:
        raise ConfigurationError(f"bootstrap must be 0 or more, not {bootstrap}")
    if not 0 < confidence < 1:
        raise ConfigurationError(f"confidence {confidence} is outside (0, 1)")
    if seed < 0:
        raise ConfigurationError(f"seed must be 0 or more, not {seed}")


def _judged(
    stages: list[EvaluationReport], metric: str | None
) -> tuple[dict[_UnitKey, _Judged], set[_UnitKey]]:
    """The judged units of ``metric`` (and the stages present); refuses when none."""
    units, present = _judged_units(stages, metric)
    if units:
        return units, present
    if metric is not None:
        found = sorted({result.name for stage in stages for result in stage.metric_results})
        raise ConfigurationError(
            f"no report has a metric {metric!r}",
            expected=f"one of {', '.join(found)}" if found else None,
        )
    raise ConfigurationError("no report has a judge or panel metric to calibrate")


def _levels(
    pairing: _Pairing, bootstrap: int, seed: int, confidence: float
) -> tuple[LevelCalibration, LevelCalibration]:
    """The figures of the cases and of the claims, each from its own random stream."""
    case_seed, claim_seed = np.random.SeedSequence(seed).spawn(2)
    cases = _level_figures(
        "cases",
        pairing.case_pairs,
        human_categories=CASE_LABELS,
        abstention_categories=CASE_ABSTENTIONS,
        positive="fail",
        resamples=bootstrap,
        seed=case_seed,
        confidence=confidence,
    )
    claims = _level_figures(
        "claims",
        pairing.claim_pairs,
        human_categories=PREDICTION_CLAIM_LABELS,
        abstention_categories=CLAIM_ABSTENTIONS,
        positive="incorrect",
        resamples=bootstrap,
        seed=claim_seed,
        confidence=confidence,
    )
    return cases, claims


def _unlabelled(
    units: Mapping[_UnitKey, _Judged], labels: list[HumanLabel]
) -> tuple[list[JudgedItem], list[JudgedItem]]:
    """The judged cases and claims no label names."""
    labelled = {_label_key(label) for label in labels}
    cases = [
        JudgedItem(
            case_id=unit.case_id,
            stage_id=unit.stage_id,
            metric=unit.metric,
            judge_answer=unit.verdict,
        )
        for unit in units.values()
        if (unit.case_id, unit.stage_id, None) not in labelled
    ]
    claims = [
        JudgedItem(
            case_id=unit.case_id,
            stage_id=unit.stage_id,
            claim_id=claim_id,
            metric=unit.metric,
            judge_answer=answer,
        )
        for unit in units.values()
        for claim_id, (_, answer) in (unit.claims or {}).items()
        if (unit.case_id, unit.stage_id, claim_id) not in labelled
    ]
    return cases, claims


def _notes(units: Mapping[_UnitKey, _Judged], used: Counter[str]) -> list[str]:
    notes = []
    if len(used) > 1:
        notes.append(
            "verdicts come from several metrics: "
            + ", ".join(f"{name} ({count} cases)" for name, count in sorted(used.items()))
        )
    blind = sum(unit.no_claims == _NO_ANSWER for unit in units.values())
    if blind:
        notes.append(
            f"{blind} judged case(s) hold no usable judge answer, so their claims are unknown"
        )
    return notes
