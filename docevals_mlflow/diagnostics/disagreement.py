"""Judge-panel disagreement as a review signal: which verdicts to check first.

A panel's disagreement on a case is ``1 - group_agreement`` (the share of model
groups that did not vote the winning answer; with no group score, the same from the
samples). Ranked most disputed first, the panel results go through the same review
budget as extraction confidence; an error is a panel verdict that differs from the
truth, taken from

* the ground-truth metrics of the same stage (an exact or field metric whose basis is
  ``ground_truth``), when panels run next to them; or
* human labels of the cases (:func:`docevals_mlflow.judges.calibration.calibrate`
  pairs them with the panel's verdicts).

An ``uncertain`` panel verdict counts as an error (a human has to decide it).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from docevals_mlflow.core.diagnostics import DisagreementBudget, ReviewCandidate
from docevals_mlflow.core.reports import EvaluationReport, PipelineEvaluationReport, SuiteReport
from docevals_mlflow.core.statistics import DEFAULT_BUDGETS, DEFAULT_TARGETS
from docevals_mlflow.core.verdicts import combine_verdicts
from docevals_mlflow.judges.calibration import HumanLabel, calibrate
from docevals_mlflow.judges.calibration.disagreement import (
    PANEL_BASIS,
    labelled_disagreement_budget,
    panel_disagreement,
    review_by_disagreement,
)

GROUND_TRUTH_BASIS = "ground_truth"


def _stages(
    reports: Iterable[EvaluationReport | PipelineEvaluationReport | SuiteReport],
) -> list[EvaluationReport]:
    stages: list[EvaluationReport] = []
    for report in reports:
        if isinstance(report, PipelineEvaluationReport):
            stages.extend(report.stage_reports)
        elif isinstance(report, EvaluationReport):
            stages.append(report)
    return stages


def _truth_from_metrics(stage: EvaluationReport) -> str | None:
    verdicts = [
        result.verdict
        for result in stage.metric_results
        if result.basis == GROUND_TRUTH_BASIS and result.verdict in ("pass", "fail")
    ]
    return combine_verdicts(verdicts) if verdicts else None


def disagreement_budget(
    reports: Iterable[EvaluationReport | PipelineEvaluationReport | SuiteReport],
    *,
    labels: Iterable[HumanLabel] | None = None,
    metric: str | None = None,
    budgets: Sequence[float] = DEFAULT_BUDGETS,
    targets: Sequence[float] = DEFAULT_TARGETS,
) -> DisagreementBudget | None:
    """The review budget of panel results ranked by disagreement.

    Without ``labels`` the truth is each stage's ground-truth metrics; with them, the
    human case labels (``metric`` picks the panel when a stage has several, as in
    :func:`~docevals_mlflow.judges.calibration.calibrate`). ``None`` when no panel
    result has a truth to compare with.
    """
    stages = _stages(reports)
    if labels is not None:
        return _labelled_budget(stages, labels, metric, budgets, targets)
    candidates = []
    for stage in stages:
        truth = None
        for result in stage.metric_results:
            if result.basis != PANEL_BASIS:  # the common case, checked first
                continue
            disagreement = panel_disagreement(result)
            if disagreement is None or result.verdict == "not_applicable":
                continue
            if metric is not None and result.name != metric:
                continue
            truth = truth or _truth_from_metrics(stage)
            if truth is None:
                break
            candidates.append(
                ReviewCandidate(
                    case_id=stage.case_id,
                    stage_id=stage.stage_id,
                    metric=result.name,
                    disagreement=disagreement,
                    panel_verdict=result.verdict,
                    truth=truth,
                    error=result.verdict != truth,
                )
            )
    return review_by_disagreement(candidates, "ground_truth_metrics", budgets, targets)


def _labelled_budget(
    stages: list[EvaluationReport],
    labels: Iterable[HumanLabel],
    metric: str | None,
    budgets: Sequence[float],
    targets: Sequence[float],
) -> DisagreementBudget | None:
    calibration = calibrate(stages, labels, metric=metric, bootstrap=0)
    if tuple(budgets) == tuple(DEFAULT_BUDGETS) and tuple(targets) == tuple(DEFAULT_TARGETS):
        return calibration.disagreement  # calibrate computed exactly this
    return labelled_disagreement_budget(stages, calibration.cases.pairs, budgets, targets)
