from __future__ import annotations

import json

import pytest

from docevals_mlflow import (
    CheckpointWarning,
    EvaluationCase,
    EvaluationSpec,
    FunctionMetric,
    OperationSpec,
    PipelineCase,
    PipelineEvaluator,
    artifact_from_path,
)
from docevals_mlflow.evaluation.checkpoints import CheckpointStore
from tests.evaluation.conftest import VerdictMetric, stage


def two_stages() -> PipelineCase:
    return PipelineCase(pipeline_id="p", stages=[stage("extract"), stage("calc", ["extract"])])


def test_resume_reuses_checkpoints_without_running_metrics(tmp_path):
    metric = VerdictMetric({"extract": "fail", "calc": "pass"})
    evaluator = PipelineEvaluator(default_metrics=[metric])
    first = evaluator.evaluate(two_stages(), checkpoint_dir=tmp_path)
    assert metric.calls == ["extract", "calc"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["01-extract.json", "02-calc.json"]
    second = evaluator.evaluate(two_stages(), checkpoint_dir=tmp_path)
    assert metric.calls == ["extract", "calc"]
    assert second.checkpoint is not None
    assert second.checkpoint.reused == ["extract", "calc"]
    assert second.checkpoint.computed == []
    assert all(report.from_checkpoint for report in second.stage_reports)
    strip = {"from_checkpoint"}
    assert [r.model_dump(exclude=strip) for r in second.stage_reports] == [
        r.model_dump(exclude=strip) for r in first.stage_reports
    ]
    assert second.stage("calc").failure_context == "upstream"


def test_changed_context_invalidates(tmp_path):
    metric = VerdictMetric({"extract": "pass", "calc": "pass"})
    evaluator = PipelineEvaluator(default_metrics=[metric])
    evaluator.evaluate(two_stages(), checkpoint_dir=tmp_path, checkpoint_context={"model": "a"})
    with pytest.warns(CheckpointWarning, match="stale"):
        report = evaluator.evaluate(
            two_stages(), checkpoint_dir=tmp_path, checkpoint_context={"model": "b"}
        )
    assert metric.calls == ["extract", "calc", "extract", "calc"]
    assert report.checkpoint is not None
    assert set(report.checkpoint.invalidated) == {"extract", "calc"}
    # The rewritten checkpoints are now current.
    evaluator.evaluate(two_stages(), checkpoint_dir=tmp_path, checkpoint_context={"model": "b"})
    assert len(metric.calls) == 4


def _spec(instruction: str) -> OperationSpec:
    return OperationSpec(
        spec_id="calc-spec",
        operation="sum",
        action_instruction=instruction,
        evaluation_spec=EvaluationSpec(spec_id="e", objective="o", criteria=["c"]),
    )


def test_operation_spec_change_invalidates_only_that_stage(tmp_path):
    metric = VerdictMetric({"extract": "pass", "calc": "pass"})
    pipeline = PipelineCase(
        pipeline_id="p", stages=[stage("extract"), stage("calc", ["extract"], operation="sum")]
    )
    PipelineEvaluator(default_metrics=[metric], operation_specs=[_spec("Add it up.")]).evaluate(
        pipeline, checkpoint_dir=tmp_path
    )
    with pytest.warns(CheckpointWarning, match="calc"):
        report = PipelineEvaluator(
            default_metrics=[metric], operation_specs=[_spec("Add it all up.")]
        ).evaluate(pipeline, checkpoint_dir=tmp_path)
    assert metric.calls == ["extract", "calc", "calc"]
    assert report.checkpoint is not None
    assert report.checkpoint.reused == ["extract"]


def test_metric_configuration_change_invalidates(tmp_path):
    def check(case):
        return True

    pipeline = PipelineCase(pipeline_id="p", stages=[stage("a")])
    PipelineEvaluator(default_metrics=[FunctionMetric("m", check, threshold=0.5)]).evaluate(
        pipeline, checkpoint_dir=tmp_path
    )
    with pytest.warns(CheckpointWarning):
        report = PipelineEvaluator(
            default_metrics=[FunctionMetric("m", check, threshold=0.9)]
        ).evaluate(pipeline, checkpoint_dir=tmp_path)
    assert report.checkpoint is not None
    assert report.checkpoint.computed == ["a"]


def test_reference_file_bytes_change_invalidates(tmp_path):
    truth = tmp_path / "truth.json"
    truth.write_text('{"a": 1}', encoding="utf-8")
    ckpt = tmp_path / "ckpt"

    def pipeline():
        return PipelineCase(
            pipeline_id="p",
            stages=[
                EvaluationCase(
                    case_id="c",
                    prediction={"a": 1},
                    references=[artifact_from_path(tmp_path / "page.png", authority="evidence")],
                )
            ],
        )

    (tmp_path / "page.png").write_bytes(b"\x89PNG\r\n\x1a\nfirst")
    metric = FunctionMetric("m", lambda case: True)
    PipelineEvaluator(default_metrics=[metric]).evaluate(pipeline(), checkpoint_dir=ckpt)
    (tmp_path / "page.png").write_bytes(b"\x89PNG\r\n\x1a\nsecond")
    with pytest.warns(CheckpointWarning, match="stale"):
        report = PipelineEvaluator(default_metrics=[metric]).evaluate(
            pipeline(), checkpoint_dir=ckpt
        )
    assert report.checkpoint is not None
    assert report.checkpoint.computed == ["output"]


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b"\xff\xfe garbage",
        b"[]",
        json.dumps({"format": "docevals-checkpoint/1", "stage_id": "extract"}).encode(),
    ],
)
def test_corrupt_checkpoint_is_recomputed_with_warning(tmp_path, content):
    metric = VerdictMetric({"extract": "pass", "calc": "pass"})
    evaluator = PipelineEvaluator(default_metrics=[metric])
    evaluator.evaluate(two_stages(), checkpoint_dir=tmp_path)
    (tmp_path / "01-extract.json").write_bytes(content)
    with pytest.warns(CheckpointWarning, match=r"corrupt|stale"):
        report = evaluator.evaluate(two_stages(), checkpoint_dir=tmp_path)
    assert metric.calls == ["extract", "calc", "extract"]
    assert report.checkpoint is not None
    assert report.checkpoint.computed == ["extract"]
    assert report.checkpoint.reused == ["calc"]
    # The corrupt file was replaced by a valid one.
    assert json.loads((tmp_path / "01-extract.json").read_text())["stage_id"] == "extract"


def test_tampered_report_inside_checkpoint_is_corrupt(tmp_path):
    metric = VerdictMetric({"extract": "pass", "calc": "pass"})
    evaluator = PipelineEvaluator(default_metrics=[metric])
    evaluator.evaluate(two_stages(), checkpoint_dir=tmp_path)
    path = tmp_path / "01-extract.json"
    data = json.loads(path.read_text())
    data["report"]["verdict"] = "maybe"
    path.write_text(json.dumps(data))
    with pytest.warns(CheckpointWarning, match="corrupt"):
        evaluator.evaluate(two_stages(), checkpoint_dir=tmp_path)
    assert metric.calls.count("extract") == 2


def test_upstream_attribution_recomputed_on_reuse(tmp_path):
    evaluator = PipelineEvaluator(
        default_metrics=[VerdictMetric({"extract": "pass", "calc": "fail"})]
    )
    first = evaluator.evaluate(two_stages(), checkpoint_dir=tmp_path)
    assert first.stage("calc").failure_context == "current_stage"
    # extract now fails (its metric changed); calc is reused but must be re-attributed.
    changed = PipelineEvaluator(
        stage_metrics={"extract": [VerdictMetric({"extract": "fail"}, name="other")]},
        default_metrics=[VerdictMetric({"extract": "pass", "calc": "fail"})],
    )
    with pytest.warns(CheckpointWarning):
        second = changed.evaluate(two_stages(), checkpoint_dir=tmp_path)
    assert second.checkpoint is not None
    assert second.checkpoint.reused == ["calc"]
    assert second.stage("calc").failure_context == "upstream_or_combined"
    assert second.stage("calc").upstream_verdicts == {"extract": "fail"}


def test_writes_are_atomic_and_leave_no_temp_files(tmp_path):
    PipelineEvaluator(
        default_metrics=[VerdictMetric({"extract": "pass", "calc": "pass"})]
    ).evaluate(two_stages(), checkpoint_dir=tmp_path)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_context_must_be_json(tmp_path):
    from docevals_mlflow import InputError

    with pytest.raises(InputError, match="checkpoint_context"):
        CheckpointStore(tmp_path, {"when": object()})


def test_unsafe_stage_ids_get_safe_file_names(tmp_path):
    store = CheckpointStore(tmp_path, None)
    assert store.path_for(3, "../etc/passwd stage").name == "03-etc_passwd_stage.json"
    assert store.path_for(1, "...").name == "01-stage.json"
