from __future__ import annotations

import pytest

from docevals_mlflow import (
    EvaluationCase,
    Evaluator,
    FunctionMetric,
    InputError,
    MetricResult,
    PipelineCase,
    PipelineEvaluator,
    build_suite_report,
)
from tests.evaluation.conftest import VerdictMetric, stage


class UsageMetric:
    name = "judge"

    def evaluate(self, case):
        return MetricResult(
            name="judge",
            basis="fake",
            verdict="pass",
            scores={"f1": 0.5 if case.stage_id == "a" else None},
            requires_human_review=case.stage_id == "b",
            usage={"requests": 1, "input_tokens": 100},
        )


def test_suite_counts_stages_cases_metrics_and_usage():
    pipeline_one = PipelineEvaluator(
        default_metrics=[VerdictMetric({"a": "fail", "b": "pass"}), UsageMetric()]
    ).evaluate(PipelineCase(pipeline_id="one", stages=[stage("a"), stage("b", ["a"])]))
    pipeline_two = PipelineEvaluator(
        default_metrics=[VerdictMetric({"a": "pass", "b": "pass"}), UsageMetric()]
    ).evaluate(PipelineCase(pipeline_id="two", stages=[stage("a"), stage("b", ["a"])]))
    single = Evaluator([FunctionMetric("fn", lambda case: None)]).evaluate(
        EvaluationCase(
            case_id="s",
            stage_id="a",
            prediction=1,
            input_data=1,
            producer={"provider": "openai", "model": "gpt"},
        )
    )
    suite = build_suite_report([pipeline_one, pipeline_two, single], suite_id="nightly")
    assert suite.suite_id == "nightly"
    assert suite.case_count == 3
    assert suite.stage_count == 5
    assert suite.case_verdict_counts == {
        "pass": 1,
        "fail": 1,
        "uncertain": 0,
        "not_applicable": 1,
    }
    assert suite.verdict_counts == {"pass": 3, "fail": 1, "uncertain": 0, "not_applicable": 1}
    a = suite.stages["a"]
    assert a.count == 3
    assert a.pass_rate == pytest.approx(1 / 3)
    assert a.fail_rate == pytest.approx(1 / 3)
    assert a.not_applicable_rate == pytest.approx(1 / 3)
    assert a.failure_contexts["current_stage"] == 1
    assert a.failure_contexts["indeterminate"] == 1
    assert suite.stages["b"].failure_contexts["upstream"] == 1
    assert suite.stages["b"].human_review_rate == 1.0
    judge = suite.metrics["judge"]
    assert judge.count == 4
    assert judge.human_review_rate == 0.5
    assert judge.score_means == {"f1": 0.5}
    assert suite.usage == {"input_tokens": 400.0, "requests": 4.0}
    assert suite.producers == {"openai:gpt": 1, "unknown": 4}
    assert suite.human_review_rate == pytest.approx(2 / 5)


def test_metric_errors_are_counted():
    def broken(case):
        raise ValueError("bad")

    report = Evaluator([FunctionMetric("broken", broken)]).evaluate(
        EvaluationCase(case_id="s", prediction=1, input_data=1)
    )
    suite = build_suite_report([report])
    assert suite.metrics["broken"].error_count == 1
    assert suite.metrics["broken"].verdict_counts["uncertain"] == 1


def test_empty_suite_is_an_input_error():
    with pytest.raises(InputError):
        build_suite_report([])
