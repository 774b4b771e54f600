"""Panel disagreement as a review signal, against ground-truth metrics and labels."""

from __future__ import annotations

import pytest

from docevals_mlflow import EvaluationCase, MetricResult, artifact_from_value, build_suite_report
from docevals_mlflow.diagnostics import disagreement_budget, panel_disagreement
from docevals_mlflow.evaluation.stage import build_stage_report
from docevals_mlflow.judges.calibration import HumanLabel


def stage_report(stage_id: str, truth: str | None, panel: str, agreement: float):
    case = EvaluationCase(
        case_id="case",
        stage_id=stage_id,
        prediction={"a": 1},
        references=[artifact_from_value({"a": 1}, authority="ground_truth", artifact_id="gt")],
    )
    results = [
        MetricResult(
            name="panel",
            basis="judge_panel",
            verdict=panel,
            scores={"group_agreement": agreement, "sample_agreement": agreement},
        )
    ]
    if truth is not None:
        results.append(MetricResult(name="exact", basis="ground_truth", verdict=truth))
    return build_stage_report(case, results, {})


STAGES = [
    # (stage, truth, panel verdict, group agreement) -> disagreement, error
    ("s1", "pass", "pass", 1.0),  # 0.0, right
    ("s2", "fail", "pass", 0.5),  # 0.5, wrong
    ("s3", "pass", "pass", 0.5),  # 0.5, right
    ("s4", "fail", "fail", 1.0),  # 0.0, right
    ("s5", "pass", "uncertain", 2 / 3),  # 1/3, wrong (a human must decide)
]


def reports():
    return [stage_report(*item) for item in STAGES]


def test_panel_disagreement():
    assert panel_disagreement(reports()[1].metric("panel")) == 0.5
    assert panel_disagreement(reports()[1].metric("exact")) is None


def test_budget_against_ground_truth_metrics():
    budget = disagreement_budget(reports(), budgets=(0.2, 0.4, 0.6), targets=(0.5,))
    assert budget is not None
    assert budget.truth == "ground_truth_metrics"
    assert (budget.review.items, budget.review.errors) == (5, 2)
    # First the two at 0.5 (one wrong), then s5 at 1/3 (wrong).
    captures = [point.error_capture for point in budget.review.budgets]
    assert captures == pytest.approx([0.25, 0.5, 1.0])
    assert [item.stage_id for item in budget.order] == ["s2", "s3", "s5", "s1", "s4"]
    assert [item.error for item in budget.order] == [True, False, True, False, False]


def test_stages_without_truth_or_panels_are_left_out():
    assert disagreement_budget([stage_report("s", None, "pass", 1.0)]) is None
    assert disagreement_budget(reports(), metric="another") is None


def test_suites_carry_the_budget():
    suite = build_suite_report(reports())
    assert suite.disagreement is not None
    assert suite.disagreement.review.errors == 2


def test_budget_against_human_labels():
    panel_only = [
        stage_report(stage, None, panel, agreement) for stage, _, panel, agreement in STAGES
    ]
    labels = [
        HumanLabel(case_id="case", stage_id=stage, label=truth) for stage, truth, _, _ in STAGES
    ]
    budget = disagreement_budget(panel_only, labels=labels, budgets=(0.2, 0.4, 0.6))
    assert budget is not None
    assert budget.truth == "human_labels"
    assert [point.error_capture for point in budget.review.budgets] == pytest.approx(
        [0.25, 0.5, 1.0]
    )
