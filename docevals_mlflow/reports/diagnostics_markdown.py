"""Markdown sections of the diagnostics: counterfactual reruns, failure cascades,
confidence calibration and review budgets."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from docevals_mlflow.core.diagnostics import (
    CascadeEdge,
    ConfidenceCalibration,
    DisagreementBudget,
    ReviewBudget,
)
from docevals_mlflow.core.formatting import (
    count_text,
    level_text,
    metric_text,
    percent_text,
    score_text,
)
from docevals_mlflow.core.reports import EvaluationReport, SuiteReport
from docevals_mlflow.reports.markdown import table

MAX_CALIBRATION_FIELDS = 50
"""Fields in the calibration table (least separating first); the JSON has all."""
MAX_REVIEW_ROWS = 20

_OUTCOME_TEXT = {
    "caused_by_upstream": "caused upstream: passes on corrected input",
    "independent_failure": "independent: still fails on corrected input",
    "inconclusive": "inconclusive: the rerun is uncertain",
    "not_rerun": "not rerun",
}


def counterfactual_section(stages: Sequence[EvaluationReport]) -> list[str]:
    """``## Counterfactual reruns`` of a pipeline; empty when nothing was rerun."""
    reruns = [stage for stage in stages if stage.counterfactual is not None]
    if not reruns:
        return []
    lines = [
        "## Counterfactual reruns",
        "",
        "Each stage that failed along with an upstream stage was rerun on the ground-truth "
        "versions of its upstream outputs and scored with its own metrics.",
        "",
    ]
    rows = []
    for stage in reruns:
        rerun = stage.counterfactual
        assert rerun is not None
        rows.append(
            (
                stage.stage_id,
                _OUTCOME_TEXT[rerun.outcome],
                ", ".join(f"{name}: {source}" for name, source in rerun.corrected_upstream.items())
                or "n/a",
                rerun.source or "n/a",
                rerun.verdict or "n/a",
                rerun.reason or "",
            )
        )
    lines += table(
        ["Stage", "Outcome", "Corrected upstream", "Rerun from", "Rerun verdict", "Note"], rows
    )
    return lines


def _counterfactual_table(report: SuiteReport) -> list[str]:
    rows = [
        (
            stage_id,
            summary.counterfactual.combined_failures,
            summary.counterfactual.caused_by_upstream,
            summary.counterfactual.independent_failure,
            summary.counterfactual.inconclusive + summary.counterfactual.not_rerun,
            percent_text(summary.counterfactual.caused_by_upstream_rate),
        )
        for stage_id, summary in report.stages.items()
        if summary.counterfactual is not None
    ]
    if not rows:
        return []
    return [
        "## Counterfactual attribution",
        "",
        *table(
            [
                "Stage",
                "Combined failures",
                "Caused upstream",
                "Independent",
                "Undecided",
                "Caused-upstream rate",
            ],
            rows,
        ),
    ]


def cascades_section(edges: Sequence[CascadeEdge] | None) -> list[str]:
    """``## Failure cascades``: one row per dependency edge with an upstream failure."""
    shown = [edge for edge in edges or () if edge.upstream_failures or edge.downstream_failures]
    if not shown:
        return []
    lines = [
        "## Failure cascades",
        "",
        "Per dependency: P(downstream fails | upstream failed), the same when upstream "
        "passed, and — where reruns decided it — the share of co-failures caused upstream.",
        "",
    ]
    lines += table(
        [
            "Upstream → downstream",
            "Pipelines",
            "Upstream failed",
            "Both failed",
            "Co-failure rate",
            "Baseline rate",
            "Caused / independent / undecided",
            "Caused rate",
        ],
        (
            (
                f"{edge.upstream} → {edge.downstream}",
                edge.pipelines,
                edge.upstream_failures,
                edge.co_failures,
                percent_text(edge.co_failure_rate),
                percent_text(edge.baseline_failure_rate),
                f"{edge.caused} / {edge.independent} / {edge.undecided}",
                percent_text(edge.caused_rate),
            )
            for edge in shown
        ),
    )
    return lines


def budget_lines(review: ReviewBudget, *, unit: str) -> list[str]:
    """Budget and threshold tables of one review budget."""
    if not review.errors:
        return [f"No wrong {unit} among {review.items}: nothing for a review to catch."]
    lines = [
        f"{review.errors} wrong of {review.items} {unit}. Reviewing the most suspicious first:",
        "",
    ]
    lines += table(
        ["Review budget", f"{unit.capitalize()} reviewed", "Errors caught", "Error capture"],
        (
            (
                level_text(point.budget),
                point.reviewed,
                count_text(point.errors_caught),
                percent_text(point.error_capture),
            )
            for point in review.budgets
        ),
    )
    comparison = "≤" if review.signal == "confidence" else "≥"
    lines += [
        "",
        "The least strict threshold catching a target share of errors (review every item "
        f"with {review.signal} {comparison} threshold):",
        "",
    ]
    lines += table(
        ["Target", "Threshold", "Review rate", "Error capture"],
        (
            (
                level_text(point.target),
                # Four decimals, not a score's two: rounding a threshold moves which
                # items "confidence <= threshold" selects.
                metric_text(point.threshold),
                percent_text(point.review_rate),
                percent_text(point.error_capture),
            )
            for point in review.thresholds
        ),
    )
    return lines


def disagreement_section(budget: DisagreementBudget | None) -> list[str]:
    """``## Panel disagreement as a review signal``."""
    if budget is None:
        return []
    truth = "human labels" if budget.truth == "human_labels" else "ground-truth metrics"
    lines = [
        "## Panel disagreement as a review signal",
        "",
        f"Panel verdicts ranked by disagreement (1 − model-group agreement); an error is "
        f"a verdict that differs from the {truth} (uncertain included).",
        "",
        *budget_lines(budget.review, unit="verdicts"),
    ]
    top = budget.order[:MAX_REVIEW_ROWS]
    if top:
        lines += ["", "Review first:", ""]
        lines += table(
            ["Case", "Stage", "Panel", "Disagreement", "Panel verdict", "Truth"],
            (
                (
                    item.case_id,
                    item.stage_id,
                    item.metric,
                    score_text(item.disagreement),
                    item.panel_verdict,
                    item.truth,
                )
                for item in top
            ),
        )
    return lines


def suite_diagnostics_sections(report: SuiteReport) -> list[str]:
    """Counterfactual, cascade and disagreement sections of a suite (may be empty)."""
    lines: list[str] = []
    for part in (
        _counterfactual_table(report),
        cascades_section(report.cascades),
        disagreement_section(report.disagreement),
    ):
        if part:
            lines += ["", *part]
    return lines


def calibration_section(calibration: ConfidenceCalibration | Mapping[str, Any] | None) -> list[str]:
    """``## Confidence calibration`` of a field comparison; empty without confidence."""
    if not calibration:
        return []
    if not isinstance(calibration, ConfidenceCalibration):
        calibration = ConfidenceCalibration.model_validate(calibration)
    overall = calibration.overall
    lines = [
        "## 🎚️ Confidence calibration",
        "",
        f"{overall.n} fields with an extraction confidence: accuracy "
        f"{percent_text(overall.accuracy)}, mean confidence "
        f"{percent_text(overall.mean_confidence)}; "
        f"AUROC {metric_text(overall.auroc)} (0.5: confidence says nothing about correctness, "
        f"1: it separates them perfectly), Brier {metric_text(overall.brier)}, ECE "
        f"{metric_text(overall.ece)} (0: honest confidence).",
        "",
    ]
    lines += [f"- {note}" for note in calibration.notes]
    if calibration.notes:
        lines.append("")
    ranked = sorted(
        calibration.fields.items(),
        key=lambda item: (item[1].auroc is None, item[1].auroc or 0.0, item[0]),
    )
    shown = ranked[:MAX_CALIBRATION_FIELDS]
    lines += table(
        ["Field", "Fields", "Errors", "Accuracy", "AUROC", "Brier", "ECE"],
        (
            (
                template,
                stats.n,
                stats.errors,
                percent_text(stats.accuracy),
                metric_text(stats.auroc),
                metric_text(stats.brier),
                metric_text(stats.ece),
            )
            for template, stats in shown
        ),
    )
    if len(ranked) > len(shown):
        lines += ["", f"{len(ranked) - len(shown)} more fields in the JSON report."]
    lines += ["", "### Review budget", "", *budget_lines(calibration.review, unit="fields")]
    return lines
