"""Report models of the diagnostics: counterfactual reruns, failure cascades,
confidence calibration and review budgets.

Plain data, JSON round-trippable. They live in ``core`` because stage, suite and
field reports carry them. :mod:`docevals_mlflow.diagnostics` computes the reruns and
cascades; calibration and review budgets are pure arithmetic that the field report
needs too, so :mod:`docevals_mlflow.core.statistics` computes those. Every
field a report gains from here is optional, so reports written before stay valid.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from docevals_mlflow.core.literals import FailureContext, Verdict
from docevals_mlflow.core.model import DocEvalsModel
from docevals_mlflow.core.results import MetricResult

RerunOutcome = Literal["caused_by_upstream", "independent_failure", "inconclusive", "not_rerun"]
"""What an oracle-swap rerun showed: the stage passed on corrected input (the
upstream failure caused its failure), still failed (it has a problem of its own),
gave an uncertain or not-applicable verdict, or could not be rerun."""


class CounterfactualRerun(DocEvalsModel):
    """A failed stage rerun on the ground-truth versions of its upstream outputs.

    Kept on the stage report whose attribution it decided (or tried to decide).
    """

    outcome: RerunOutcome
    original_context: FailureContext = "upstream_or_combined"
    """The attribution from verdicts alone, before the rerun."""
    source: Literal["action", "recorded"] | None = None
    """Where the new output came from: the registered action, or a recorded rerun
    result; ``None`` when nothing was rerun."""
    corrected_upstream: dict[str, str] = Field(default_factory=dict)
    """Direct upstream stage → what its output was replaced with (``reference <id>``,
    ``path table <id>`` patched into its prediction, or ``own prediction (passed)``)."""
    input_data: Any = None
    """The input the stage was rerun on."""
    prediction: Any = None
    """The output of the rerun."""
    verdict: Verdict | None = None
    """The combined verdict of the stage's metrics on the rerun output."""
    metric_results: list[MetricResult] = Field(default_factory=list)
    reason: str | None = None
    """Why the stage was not rerun, or why the rerun is inconclusive."""


class CounterfactualSummary(DocEvalsModel):
    """Counterfactual outcomes of one stage id across a suite."""

    combined_failures: int
    """Failures whose attribution from verdicts was ``upstream_or_combined``."""
    caused_by_upstream: int
    independent_failure: int
    inconclusive: int
    not_rerun: int
    caused_by_upstream_rate: float | None
    """``caused_by_upstream / (caused_by_upstream + independent_failure)``: of the
    failures a rerun could decide, the share the upstream failure caused."""
    coverage: float | None
    """Share of ``combined_failures`` a rerun decided."""


class CascadeEdge(DocEvalsModel):
    """Failure propagation along one dependency ``upstream → downstream`` in a batch.

    Counts are over pipelines where both stages have a decided verdict (pass or
    fail); rates are ``None`` when their denominator is zero.
    """

    upstream: str
    downstream: str
    pipelines: int
    upstream_failures: int
    downstream_failures: int
    co_failures: int
    """Pipelines where both stages failed."""
    co_failure_rate: float | None
    """``P(downstream fails | upstream failed)``."""
    baseline_failure_rate: float | None
    """``P(downstream fails | upstream passed)``, for contrast."""
    caused: int = 0
    """Co-failures a rerun showed were caused upstream."""
    independent: int = 0
    """Co-failures where the downstream stage still failed on corrected input."""
    undecided: int = 0
    """Co-failures without a deciding rerun."""
    caused_rate: float | None = None
    """``caused / (caused + independent)``."""


class ReliabilityBin(DocEvalsModel):
    """Items whose confidence lies in ``[low, high)`` (the last bin includes 1.0)."""

    low: float
    high: float
    count: int
    mean_confidence: float | None
    accuracy: float | None
    """Share of correct items; ``None`` for an empty bin."""


class CalibrationStats(DocEvalsModel):
    """How well confidence separates correct from wrong items, and how honest it is.

    ``auroc``: probability that a random correct item has a higher confidence than a
    random wrong one (ties count half); ``None`` without both kinds. ``brier`` (mean
    squared gap between confidence and correctness) and ``ece`` (expected calibration
    error over equal-width bins) need confidences in [0, 1]; ``None`` otherwise.
    """

    n: int
    errors: int
    accuracy: float | None
    mean_confidence: float | None
    auroc: float | None
    brier: float | None
    ece: float | None
    bins: list[ReliabilityBin] = Field(default_factory=list)


class BudgetPoint(DocEvalsModel):
    """Sending the ``budget`` share of items to review, most suspicious first."""

    budget: float
    """Share of items reviewed (0.1 for 10%); ``reviewed = ceil(budget * items)``."""
    reviewed: int
    errors_caught: float
    """Expected errors among the reviewed items; items tied at the cut-off are taken
    in random order, so a tie group contributes its error share pro rata."""
    error_capture: float | None
    """``errors_caught / errors``; ``None`` when there are no errors."""
    cutoff: float | None
    """The signal value of the last item reviewed."""


class ThresholdPoint(DocEvalsModel):
    """The least strict threshold on the signal that catches ``target`` of the errors."""

    target: float
    threshold: float | None
    """Review every item with confidence ≤ this (or disagreement ≥ this)."""
    reviewed: int
    review_rate: float | None
    error_capture: float | None
    """The share of errors caught at that threshold (at least ``target``)."""


class ReviewBudget(DocEvalsModel):
    """Which items to send to human review first, and what that catches."""

    signal: Literal["confidence", "disagreement"]
    """``confidence``: least confident first; ``disagreement``: most disputed first."""
    items: int
    errors: int
    budgets: list[BudgetPoint]
    thresholds: list[ThresholdPoint]
    curve: list[float] = Field(default_factory=list)
    """Error capture at review budgets 0%, 1%, …, 100% (empty without errors)."""


class ConfidenceCalibration(DocEvalsModel):
    """Calibration of extraction confidence against field correctness.

    Counted: leaves with a confidence and an expected or a predicted value; correct
    means TP or TN. ``fields`` is keyed by field template.
    """

    overall: CalibrationStats
    fields: dict[str, CalibrationStats] = Field(default_factory=dict)
    review: ReviewBudget
    notes: list[str] = Field(default_factory=list)


class DisagreementBudget(DocEvalsModel):
    """Judge-panel disagreement as a review signal.

    Items are (stage, panel metric) results; an error is a panel verdict that differs
    from the truth (a ground-truth metric on the same stage, or a human label), an
    ``uncertain`` panel verdict included. ``order`` lists the items most disputed
    first (at most :data:`MAX_REVIEW_ORDER`).
    """

    truth: Literal["ground_truth_metrics", "human_labels"]
    review: ReviewBudget
    order: list[ReviewCandidate] = Field(default_factory=list)


class ReviewCandidate(DocEvalsModel):
    """One panel result in review order."""

    case_id: str
    stage_id: str
    metric: str
    disagreement: float
    panel_verdict: Verdict
    truth: str
    error: bool


MAX_REVIEW_ORDER = 200
"""Items kept in :attr:`DisagreementBudget.order`."""

DisagreementBudget.model_rebuild()
