from __future__ import annotations

import numpy as np
import pytest

from docevals_mlflow import EvaluationCase, FunctionMetric, Metric, MetricResult
from docevals_mlflow.evaluation.metrics import metric_config, run_metric

CASE = EvaluationCase(case_id="c", prediction={"total": 3}, input_data={"a": 1, "b": 2})


def test_bool_none_and_result_pass_through():
    assert FunctionMetric("m", lambda case: True).evaluate(CASE).verdict == "pass"
    failed = FunctionMetric("m", lambda case: False, score_name="ok").evaluate(CASE)
    assert (failed.verdict, failed.scores) == ("fail", {"ok": 0.0})
    assert FunctionMetric("m", lambda case: None).evaluate(CASE).verdict == "not_applicable"
    assert FunctionMetric("m", lambda case: np.bool_(True)).evaluate(CASE).verdict == "pass"
    custom = MetricResult(name="custom", basis="mine", verdict="uncertain")
    assert FunctionMetric("m", lambda case: custom).evaluate(CASE) is custom


def test_number_without_threshold_is_uncertain_with_note():
    result = FunctionMetric("m", lambda case: 0.75, score_name="agreement").evaluate(CASE)
    assert result.verdict == "uncertain"
    assert result.scores == {"agreement": 0.75}
    assert "threshold" in result.notes[0]


@pytest.mark.parametrize(
    ("value", "verdict"), [(0.8, "pass"), (0.79, "fail"), (np.float64(0.9), "pass")]
)
def test_number_with_threshold_decides(value, verdict):
    metric = FunctionMetric("m", lambda case: value, threshold=0.8)
    assert metric.evaluate(CASE).verdict == verdict


def test_seed_style_calculation_check():
    def total_matches(stage):
        return stage.prediction["total"] == stage.input_data["a"] + stage.input_data["b"]

    metric = FunctionMetric("recalculate_total", total_matches, score_name="calculation_accuracy")
    result = metric.evaluate(CASE)
    assert (result.name, result.verdict, result.scores) == (
        "recalculate_total",
        "pass",
        {"calculation_accuracy": 1.0},
    )


def test_unsupported_return_is_isolated_as_uncertain():
    result = run_metric(FunctionMetric("m", lambda case: "yes"), CASE)
    assert result.verdict == "uncertain"
    assert result.requires_human_review
    assert result.error is not None
    assert result.error.type == "MetricError"
    assert "returned str" in result.error.message


def test_raising_metric_is_isolated():
    def broken(case):
        raise KeyError("line_items")

    result = run_metric(FunctionMetric("broken", broken), CASE)
    assert (result.name, result.verdict, result.basis) == ("broken", "uncertain", "error")
    assert result.error is not None
    assert result.error.type == "KeyError"
    assert result.notes == ["metric raised KeyError: 'line_items'"]


def test_metric_returning_wrong_type_is_isolated():
    class Wrong:
        name = "wrong"

        def evaluate(self, case):
            return {"verdict": "pass"}

    result = run_metric(Wrong(), CASE)
    assert result.verdict == "uncertain"
    assert "returned dict" in result.notes[0]


def test_metric_config_covers_function_code():
    def first(case):
        return True

    def second(case):
        return False

    one = metric_config(FunctionMetric("m", first))
    two = metric_config(FunctionMetric("m", second))
    assert one["code_sha256"] != two["code_sha256"]
    assert one["function"].endswith("first")
    assert metric_config(FunctionMetric("m", first, threshold=0.5))["threshold"] == 0.5


def test_protocol_is_structural():
    class Mine:
        name = "mine"

        def evaluate(self, case):
            return MetricResult(name="mine", basis="x", verdict="pass")

    assert isinstance(Mine(), Metric)
    assert metric_config(Mine()) == {
        "type": f"{Mine.__module__}.{Mine.__qualname__}",
        "name": "mine",
    }
