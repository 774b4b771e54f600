from __future__ import annotations

import pytest

from docevals_mlflow import (
    ConfigurationError,
    ExactStructuredMetric,
    FunctionMetric,
    PipelineCase,
    PipelineEvaluator,
)
from tests.evaluation.conftest import VerdictMetric, stage


def diamond() -> PipelineCase:
    # extract -> (calculate, classify) -> route
    return PipelineCase(
        pipeline_id="p",
        stages=[
            stage("route", ["calculate", "classify"]),
            stage("calculate", ["extract"]),
            stage("extract"),
            stage("classify", ["extract"]),
        ],
    )


def run(verdicts):
    metric = VerdictMetric(verdicts)
    report = PipelineEvaluator(default_metrics=[metric]).evaluate(diamond())
    return report, {s.stage_id: s.failure_context for s in report.stage_reports}


def test_execution_order_is_topological_and_stable():
    report, _ = run(dict.fromkeys(["extract", "calculate", "classify", "route"], "pass"))
    assert report.waves == [["extract"], ["calculate", "classify"], ["route"]]
    assert report.execution_order == ["extract", "calculate", "classify", "route"]


def test_every_failure_context_value():
    _, contexts = run({"extract": "pass", "calculate": "fail", "classify": "pass", "route": "pass"})
    assert contexts == {
        "extract": "none",
        "calculate": "current_stage",
        "classify": "none",
        "route": "upstream",
    }
    _, contexts = run({"extract": "fail", "calculate": "fail", "classify": "pass", "route": "fail"})
    assert contexts == {
        "extract": "current_stage",
        "calculate": "upstream_or_combined",
        "classify": "upstream",
        "route": "upstream_or_combined",
    }
    _, contexts = run(
        {"extract": "uncertain", "calculate": "fail", "classify": "pass", "route": "pass"}
    )
    assert contexts == dict.fromkeys(["extract", "calculate", "classify", "route"], "indeterminate")
    _, contexts = run(
        {"extract": "pass", "calculate": "pass", "classify": "not_applicable", "route": "pass"}
    )
    assert contexts["route"] == "indeterminate"
    assert contexts["calculate"] == "none"


def test_upstream_verdicts_are_transitive():
    report, _ = run({"extract": "fail", "calculate": "pass", "classify": "pass", "route": "pass"})
    assert report.stage("route").upstream_verdicts == {
        "extract": "fail",
        "calculate": "pass",
        "classify": "pass",
    }
    assert report.stage("route").failure_context == "upstream"
    assert report.verdict == "fail"


def test_metric_selection_stage_then_operation_then_default():
    by_stage = FunctionMetric("by_stage", lambda case: True)
    by_operation = FunctionMetric("by_operation", lambda case: True)
    default = FunctionMetric("default", lambda case: True)
    pipeline = PipelineCase(
        pipeline_id="p",
        stages=[
            stage("a", operation="op"),
            stage("b", operation="op"),
            stage("c", operation="other"),
        ],
    )
    report = PipelineEvaluator(
        stage_metrics={"a": [by_stage]},
        operation_metrics={"op": [by_operation]},
        default_metrics=[default],
    ).evaluate(pipeline)
    chosen = {s.stage_id: [m.name for m in s.metric_results] for s in report.stage_reports}
    assert chosen == {"a": ["by_stage"], "b": ["by_operation"], "c": ["default"]}


def test_stage_without_metrics_fails_before_anything_runs():
    calls = []

    def counted(case):
        calls.append(case.stage_id)
        return True

    pipeline = PipelineCase(
        pipeline_id="p", stages=[stage("a", operation="op"), stage("b", operation="nothing")]
    )
    evaluator = PipelineEvaluator(operation_metrics={"op": [FunctionMetric("m", counted)]})
    with pytest.raises(ConfigurationError) as raised:
        evaluator.evaluate(pipeline)
    assert raised.value.stage == "b"
    assert calls == []


def test_raising_metric_isolated_other_stages_still_run():
    def broken(case):
        raise ZeroDivisionError("division by zero")

    pipeline = PipelineCase(
        pipeline_id="p",
        stages=[stage("a", operation="bad"), stage("b", ["a"]), stage("c")],
    )
    report = PipelineEvaluator(
        operation_metrics={"bad": [FunctionMetric("broken", broken)]},
        default_metrics=[FunctionMetric("ok", lambda case: True)],
    ).evaluate(pipeline)
    a = report.stage("a")
    assert a.verdict == "uncertain"
    assert a.metric("broken").error is not None
    assert a.metric("broken").error.message == "division by zero"
    assert report.stage("b").failure_context == "indeterminate"
    assert report.stage("c").verdict == "pass"
    assert report.requires_human_review


def test_seed_readme_example_runs_unchanged():
    from docevals_mlflow import EvaluationCase, artifact_from_value

    extraction = EvaluationCase(
        case_id="document-001",
        stage_id="extract",
        operation="parse_line_items",
        prediction={
            "line_items": [{"quantity": 2, "unit_price": 4.25}, {"quantity": 1, "unit_price": 3.00}]
        },
        references=[
            artifact_from_value(
                {
                    "line_items": [
                        {"quantity": 2, "unit_price": 4.25},
                        {"quantity": 1, "unit_price": 3.00},
                    ]
                },
                authority="ground_truth",
                artifact_id="human-transcription",
            ),
        ],
    )
    calculation = EvaluationCase(
        case_id="document-001",
        stage_id="calculate-total",
        operation="sum_quantity_times_unit_price",
        input_data=extraction.prediction,
        prediction={"total": 11.50},
        depends_on=["extract"],
        rubric="Total equals the sum of quantity multiplied by unit price.",
    )

    def total_matches(stage):
        expected = sum(
            row["quantity"] * row["unit_price"] for row in stage.input_data["line_items"]
        )
        return stage.prediction["total"] == expected

    pipeline = PipelineCase(pipeline_id="document-processing", stages=[extraction, calculation])
    report = PipelineEvaluator(
        operation_metrics={
            "parse_line_items": [ExactStructuredMetric()],
            "sum_quantity_times_unit_price": [
                FunctionMetric(
                    "recalculate_total", total_matches, score_name="calculation_accuracy"
                )
            ],
        }
    ).evaluate(pipeline)
    assert [s.verdict for s in report.stage_reports] == ["pass", "pass"]
    assert report.stage("calculate-total").metric("recalculate_total").scores == {
        "calculation_accuracy": 1.0
    }
    assert report.checkpoint is None
