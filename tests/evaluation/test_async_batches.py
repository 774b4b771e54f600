"""evaluate_batch: concurrent cases and stages, results in order, limits respected."""

from __future__ import annotations

import time

import pytest

from docevals_mlflow import (
    ConfigurationError,
    EvaluationCase,
    Evaluator,
    PipelineCase,
    PipelineEvaluator,
    artifact_from_value,
)
from docevals_mlflow.evaluation.llm_metric import LLMJudgeMetric
from docevals_mlflow.judges.judge import ModelJudge
from tests.judges.fakes import ScriptedAdapter, answer


def cases(count):
    return [
        EvaluationCase(
            case_id=f"case-{index}",
            prediction={"n": index},
            references=[
                artifact_from_value({"n": index}, authority="ground_truth", artifact_id="gt")
            ],
        )
        for index in range(count)
    ]


def slow_adapter(delay=0.1):
    return ScriptedAdapter(lambda request, repair: answer(request), delay=delay)


def test_cases_run_concurrently_and_keep_their_order():
    adapter = slow_adapter()
    evaluator = Evaluator([LLMJudgeMetric(ModelJudge(adapter))])
    started = time.perf_counter()
    reports = evaluator.evaluate_batch(cases(12), max_concurrency=6)
    elapsed = time.perf_counter() - started
    assert [report.case_id for report in reports] == [f"case-{i}" for i in range(12)]
    assert all(report.verdict == "pass" for report in reports)
    assert adapter.max_in_flight == 6
    assert elapsed < 0.2 * 12 / 6 + 0.5  # ~2 rounds of 0.1 s, far from 12 in a row


def test_concurrency_must_be_positive():
    with pytest.raises(ConfigurationError):
        Evaluator([LLMJudgeMetric(ModelJudge(slow_adapter()))]).evaluate_batch(
            cases(1), max_concurrency=0
        )


def pipeline(pipeline_id):
    def stage(stage_id, depends_on=()):
        return EvaluationCase(
            case_id=pipeline_id,
            stage_id=stage_id,
            prediction={"v": 1},
            references=[artifact_from_value({"v": 1}, authority="ground_truth", artifact_id="gt")],
            depends_on=list(depends_on),
        )

    # a -> (b, c) -> d: b and c can run at the same time.
    return PipelineCase(
        pipeline_id=pipeline_id,
        stages=[stage("a"), stage("b", ["a"]), stage("c", ["a"]), stage("d", ["b", "c"])],
    )


def test_independent_stages_of_many_pipelines_overlap(tmp_path):
    adapter = slow_adapter(0.1)
    evaluator = PipelineEvaluator(default_metrics=[LLMJudgeMetric(ModelJudge(adapter))])
    pipelines = [pipeline(f"p{index}") for index in range(4)]
    started = time.perf_counter()
    reports = evaluator.evaluate_batch(
        pipelines, max_concurrency=8, checkpoint_root=tmp_path / "ckpt"
    )
    elapsed = time.perf_counter() - started
    assert [report.pipeline_id for report in reports] == ["p0", "p1", "p2", "p3"]
    assert [s.stage_id for s in reports[0].stage_reports] == ["a", "b", "c", "d"]
    assert adapter.calls == 16
    assert adapter.max_in_flight == 8  # four pipelines x (b, c)
    assert elapsed < 0.3 * 4  # three dependency levels, not 16 calls in a row
    assert (tmp_path / "ckpt" / "p0" / "01-a.json").is_file()
    again = evaluator.evaluate_batch(pipelines, checkpoint_root=tmp_path / "ckpt")
    assert adapter.calls == 16  # everything reused
    assert again[0].checkpoint is not None
    assert again[0].checkpoint.reused == ["a", "b", "c", "d"]


def test_repeated_pipeline_ids_cannot_share_checkpoints(tmp_path):
    evaluator = PipelineEvaluator(default_metrics=[LLMJudgeMetric(ModelJudge(slow_adapter(0)))])
    with pytest.raises(ConfigurationError, match="collide"):
        evaluator.evaluate_batch([pipeline("p"), pipeline("p")], checkpoint_root=tmp_path)
