"""evaluate_batch: concurrent cases and stages, results in order, limits respected."""

from __future__ import annotations

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
from docevals_mlflow.judges.testing import ScriptedAdapter, answer


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
    reports = evaluator.evaluate_batch(cases(12), max_concurrency=6)
    assert [report.case_id for report in reports] == [f"case-{i}" for i in range(12)]
    assert all(report.verdict == "pass" for report in reports)
    assert adapter.max_in_flight == 6  # concurrent, not twelve in a row


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
    reports = evaluator.evaluate_batch(
        pipelines, max_concurrency=8, checkpoint_root=tmp_path / "ckpt"
    )
    assert [report.pipeline_id for report in reports] == ["p0", "p1", "p2", "p3"]
    assert [s.stage_id for s in reports[0].stage_reports] == ["a", "b", "c", "d"]
    assert adapter.calls == 16
    assert adapter.max_in_flight == 8  # four pipelines x (b, c), not 16 calls in a row
    assert (tmp_path / "ckpt" / "p0" / "01-a.json").is_file()
    again = evaluator.evaluate_batch(pipelines, checkpoint_root=tmp_path / "ckpt")
    assert adapter.calls == 16  # everything reused
    assert again[0].checkpoint is not None
    assert again[0].checkpoint.reused == ["a", "b", "c", "d"]


def test_repeated_pipeline_ids_cannot_share_checkpoints(tmp_path):
    evaluator = PipelineEvaluator(default_metrics=[LLMJudgeMetric(ModelJudge(slow_adapter(0)))])
    with pytest.raises(ConfigurationError, match="collide"):
        evaluator.evaluate_batch([pipeline("p"), pipeline("p")], checkpoint_root=tmp_path)


def test_batches_report_progress_as_units_finish(tmp_path):
    seen: list[tuple[int, int]] = []
    evaluator = Evaluator([LLMJudgeMetric(ModelJudge(slow_adapter(0.01)))])
    evaluator.evaluate_batch(cases(5), max_concurrency=2, progress=lambda *p: seen.append(p))
    assert seen == [(0, 5), (1, 5), (2, 5), (3, 5), (4, 5), (5, 5)]

    seen.clear()
    pipelines = PipelineEvaluator(default_metrics=[LLMJudgeMetric(ModelJudge(slow_adapter(0.01)))])
    pipelines.evaluate_batch([pipeline("p0"), pipeline("p1")], progress=lambda *p: seen.append(p))
    assert seen == [(done, 8) for done in range(9)]  # the batch's stages, counted once

    seen.clear()
    pipelines.evaluate(pipeline("p2"), progress=lambda *p: seen.append(p))
    assert seen == [(done, 4) for done in range(5)]
