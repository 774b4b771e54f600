"""Judge-panel disagreement as a review signal, against the human case labels.

A panel's disagreement on a case is ``1 - group_agreement`` (the share of model
groups that did not vote the winning answer; with no group score, the same from the
samples). Ranked most disputed first, the panel verdicts go through the review budget
of :mod:`docevals_mlflow.core.statistics`; an error is a verdict the humans did not
give. :func:`~docevals_mlflow.diagnostics.disagreement_budget` ranks the same signal
against ground-truth metrics too.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from docevals_mlflow.core.diagnostics import MAX_REVIEW_ORDER, DisagreementBudget, ReviewCandidate
from docevals_mlflow.core.reports import EvaluationReport
from docevals_mlflow.core.results import MetricResult
from docevals_mlflow.core.statistics import DEFAULT_BUDGETS, DEFAULT_TARGETS, review_budget

PANEL_BASIS = "judge_panel"


def panel_disagreement(result: MetricResult) -> float | None:
    """``1 - group_agreement`` of a panel result (samples when groups are missing);
    ``None`` for anything that is not a panel result with an agreement score."""
    if result.basis != PANEL_BASIS:
        return None
    for score in ("group_agreement", "sample_agreement"):
        value = result.scores.get(score)
        if value is not None:
            return min(1.0, max(0.0, 1.0 - float(value)))
    return None


def review_by_disagreement(
    candidates: list[ReviewCandidate],
    truth: Any,
    budgets: Sequence[float],
    targets: Sequence[float],
) -> DisagreementBudget | None:
    """The review budget of ``candidates``, most disputed first (``None`` without any)."""
    if not candidates:
        return None
    review = review_budget(
        [candidate.disagreement for candidate in candidates],
        [candidate.error for candidate in candidates],
        signal="disagreement",
        budgets=budgets,
        targets=targets,
    )
    ordered = sorted(
        candidates,
        key=lambda item: (-item.disagreement, item.case_id, item.stage_id, item.metric),
    )
    return DisagreementBudget(truth=truth, review=review, order=ordered[:MAX_REVIEW_ORDER])


def labelled_disagreement_budget(
    stages: list[EvaluationReport],
    case_pairs: Iterable[Any],
    budgets: Sequence[float] = DEFAULT_BUDGETS,
    targets: Sequence[float] = DEFAULT_TARGETS,
) -> DisagreementBudget | None:
    """The disagreement budget of panel verdicts already paired with human case
    labels (``CalibrationReport.cases.pairs``); ``None`` without a panel verdict."""
    results = {
        (stage.case_id, stage.stage_id, result.name): result
        for stage in stages
        for result in stage.metric_results
    }
    candidates = []
    for pair in case_pairs:
        result = results.get((pair.case_id, pair.stage_id, pair.metric))
        disagreement = panel_disagreement(result) if result is not None else None
        if result is None or disagreement is None:
            continue
        candidates.append(
            ReviewCandidate(
                case_id=pair.case_id,
                stage_id=pair.stage_id,
                metric=pair.metric,
                disagreement=disagreement,
                panel_verdict=result.verdict,
                truth=pair.human,
                error=not pair.agrees,
            )
        )
    return review_by_disagreement(candidates, "human_labels", budgets, targets)
