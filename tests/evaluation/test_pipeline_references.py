"""Pipeline ids made file names (reports, checkpoint folders) stay distinct or are
refused, and an evaluator's metrics must name stages and operations that exist."""

from __future__ import annotations

import pytest

from docevals_mlflow import (
    ConfigurationError,
    EvaluationCase,
    ExactStructuredMetric,
    InputError,
    PipelineCase,
    PipelineEvaluator,
    artifact_from_value,
)
from docevals_mlflow.evaluation.pipeline import (
    FILE_NAME_LIMIT,
    pipeline_file_name,
    pipeline_file_names,
)


def pipeline(pipeline_id: str, *, operation: str = "extract") -> PipelineCase:
    return PipelineCase(
        pipeline_id=pipeline_id,
        stages=[
            EvaluationCase(
                case_id=pipeline_id,
                stage_id="extract",
                operation=operation,
                prediction={"v": 1},
                references=[
                    artifact_from_value({"v": 1}, authority="ground_truth", artifact_id="gt")
                ],
            )
        ],
    )


@pytest.mark.parametrize(
    ("pipeline_id", "name"),
    [("invoice-1", "invoice-1"), ("invoice 7/a", "invoice_7_a"), ("///", "pipeline")],
)
def test_short_ids_keep_their_usual_names(pipeline_id, name):
    assert pipeline_file_name(pipeline_id) == name


def test_long_ids_sharing_a_prefix_get_distinct_names_of_bounded_length():
    first, second = "a" * 200 + "1", "a" * 200 + "2"
    names = pipeline_file_names([first, second])
    assert names[first] != names[second]
    assert {len(name) for name in names.values()} == {FILE_NAME_LIMIT}
    assert names[first] == pipeline_file_name(first)  # the same name every run


@pytest.mark.parametrize(
    ("ids", "message"),
    [
        (["inv/1", "inv_1"], "pipeline ids 'inv/1' and 'inv_1' both make the file name 'inv_1'"),
        (["p", "p"], "pipeline id 'p' is given twice"),
    ],
)
def test_ids_that_make_one_name_are_refused(ids, message):
    with pytest.raises(ConfigurationError, match=message):
        pipeline_file_names(ids)


def test_batches_refuse_checkpoint_folders_that_would_collide(tmp_path):
    evaluator = PipelineEvaluator(default_metrics=[ExactStructuredMetric()])
    with pytest.raises(ConfigurationError, match="collide"):
        evaluator.evaluate_batch(
            [pipeline("inv/1"), pipeline("inv_1")], checkpoint_root=tmp_path / "ckpt"
        )
    assert not (tmp_path / "ckpt").exists()
    # Without checkpoints nothing is written under those names, so nothing collides.
    reports = evaluator.evaluate_batch([pipeline("inv/1"), pipeline("inv_1")])
    assert [report.pipeline_id for report in reports] == ["inv/1", "inv_1"]


def test_metrics_must_name_stages_and_operations_that_exist():
    pipelines = [pipeline("a"), pipeline("b", operation="parse")]
    PipelineEvaluator(
        stage_metrics={"extract": [ExactStructuredMetric()]},
        operation_metrics={"parse": [ExactStructuredMetric()]},
    ).check_references(pipelines)
    with pytest.raises(InputError, match="stage 'extrct', which no pipeline has") as caught:
        PipelineEvaluator(stage_metrics={"extrct": [ExactStructuredMetric()]}).check_references(
            pipelines
        )
    assert caught.value.path == "metrics.stages.extrct"
    assert caught.value.expected == "one of the stages: 'extract'"
    with pytest.raises(InputError, match="operation 'sum'") as caught:
        PipelineEvaluator(operation_metrics={"sum": [ExactStructuredMetric()]}).check_references(
            pipelines
        )
    assert caught.value.expected == "one of the operations: 'extract', 'parse'"
