"""Case and pipeline evaluations as MLflow traces: a span per stage, an LLM span per
judge call with its tokens and cost, verdicts as assessments; against temporary
SQLite stores, with a scripted judge."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from docevals_mlflow import (
    EvaluationCase,
    ExactStructuredMetric,
    PipelineCase,
    PipelineEvaluator,
    artifact_from_value,
)
from docevals_mlflow.cli import main
from docevals_mlflow.core.secrets import register_secrets
from docevals_mlflow.evaluation.llm_metric import LLMJudgeMetric
from docevals_mlflow.evaluation.suite import build_suite_report
from docevals_mlflow.judges.judge import ModelJudge
from docevals_mlflow.judges.testing import ScriptedAdapter, answer
from docevals_mlflow.judges.usage import Usage
from docevals_mlflow.tracking.assembly import assemble_evaluation, log_assembled
from docevals_mlflow.tracking.options import RunOptions
from tests.helpers import write_json
from tests.test_secrets_everywhere import forms

USAGE = Usage(requests=1, input_tokens=120, output_tokens=9, total_tokens=129, cost_usd=0.0015)
PLANTED = "sk-planted-4f9c2e7d1b8a6035"


def _pipeline(pipeline_id: str, *, truth: int = 1) -> PipelineCase:
    def stage(stage_id: str, depends_on: tuple[str, ...] = ()) -> EvaluationCase:
        return EvaluationCase(
            case_id=pipeline_id,
            stage_id=stage_id,
            prediction={"v": 1},
            references=[
                artifact_from_value({"v": truth}, authority="ground_truth", artifact_id="gt")
            ],
            depends_on=list(depends_on),
        )

    return PipelineCase(
        pipeline_id=pipeline_id, stages=[stage("extract"), stage("total", ("extract",))]
    )


def _evaluator() -> PipelineEvaluator:
    adapter = ScriptedAdapter(lambda request, repair: answer(request), usage=USAGE)
    judge = LLMJudgeMetric(ModelJudge(adapter))
    return PipelineEvaluator(default_metrics=[ExactStructuredMetric(), judge])


@pytest.fixture(autouse=True)
def _store_is_migrated(migrated_store: str) -> None:
    """The store the tests name (tmp_path/mlflow.db) is a copy of one migrated once
    per session: MLflow's migrations cost seconds per new store."""


def _uri(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path.as_posix()}/mlflow.db"


def _traces(uri: str, logged: object) -> list:
    found = MlflowClient(uri).search_traces(
        locations=[logged.experiment_id],  # type: ignore[attr-defined]
        filter_string=f"metadata.`mlflow.sourceRun` = '{logged.run_id}'",  # type: ignore[attr-defined]
    )
    return sorted(found, key=lambda trace: trace.info.request_preview)


def test_a_pipeline_case_is_one_trace_with_stage_and_llm_spans(tmp_path):
    report = _evaluator().evaluate(_pipeline("p1"))
    uri = _uri(tmp_path)
    logged = log_assembled(assemble_evaluation(report, RunOptions(tracking_uri=uri)))
    (trace,) = _traces(uri, logged)
    spans = trace.data.spans
    assert [(span.name, span.span_type) for span in spans] == [
        ("case p1", "CHAIN"),
        ("stage extract", "CHAIN"),
        ("llm_judge", "LLM"),
        ("stage total", "CHAIN"),
        ("llm_judge", "LLM"),
    ]
    root, extract, judge = spans[0], spans[1], spans[2]
    assert root.inputs == {"case_id": "p1", "stages": ["extract", "total"]}
    assert extract.parent_id == root.span_id
    assert judge.parent_id == extract.span_id
    assert extract.outputs["verdict"] == "pass"
    assert extract.outputs["metrics"]["exact_structured"]["verdict"] == "pass"
    assert spans[3].inputs["depends_on"] == ["extract"]
    assert judge.get_attribute("mlflow.chat.tokenUsage") == {
        "input_tokens": 120,
        "output_tokens": 9,
        "total_tokens": 129,
    }
    assert judge.get_attribute("mlflow.llm.model") == "judge-1"
    assert judge.llm_cost == {"total_cost": 0.0015}
    assert trace.info.token_usage == {"input_tokens": 240, "output_tokens": 18, "total_tokens": 258}
    assessments = {item.name: item for item in trace.info.assessments}
    assert assessments["verdict"].value == "pass"
    assert assessments["total"].metadata["upstream_verdicts"] == "extract: pass"
    assert assessments["total/failure_context"].value == "none"
    assert assessments["extract/llm_judge"].metadata["f1"] == "1.0"
    run = MlflowClient(uri).get_run(logged.run_id)
    assert run.data.tags["docevals.traces"] == "1"


def test_a_batch_traces_each_pipeline_and_errors_keeps_the_failed_one(tmp_path):
    reports = _evaluator().evaluate_batch([_pipeline("good"), _pipeline("bad", truth=2)])
    stages = [stage for report in reports for stage in report.stage_reports]
    suite = build_suite_report(reports, suite_id="batch")
    uri = _uri(tmp_path)
    every = log_assembled(
        assemble_evaluation(suite, RunOptions(tracking_uri=uri), stage_reports=stages)
    )
    assert [t.info.tags["docevals.case.id"] for t in _traces(uri, every)] == ["bad", "good"]
    wrong = log_assembled(
        assemble_evaluation(
            suite, RunOptions(tracking_uri=uri, traces="errors"), stage_reports=stages
        )
    )
    (trace,) = _traces(uri, wrong)
    assessments = {item.name: item.value for item in trace.info.assessments}
    assert assessments["verdict"] == "fail"
    assert assessments["extract/exact_structured"] == "fail"
    assert assessments["total/failure_context"] != "none"


def test_evaluate_case_logs_its_trace_and_traces_none_logs_none(mlflow_store):
    write_json(Path("p.json"), {"total": 1})
    write_json(Path("t.json"), {"total": 2})
    uri = mlflow_store
    base = ["evaluate-case", "--prediction", "p.json", "--ground-truth", "t.json"]
    base += ["--fail-on", "never"]
    assert main([*base, "--output", "a.json", "--run-name", "a"]) == 0
    assert main([*base, "--output", "b.json", "--run-name", "b", "--traces", "none"]) == 0
    client = MlflowClient(uri)
    (experiment,) = [e for e in client.search_experiments() if e.name == "docevals"]
    runs = {run.info.run_name: run for run in client.search_runs([experiment.experiment_id])}
    traces = client.search_traces(locations=[experiment.experiment_id])
    sources = [trace.info.trace_metadata["mlflow.sourceRun"] for trace in traces]
    assert sources == [runs["a"].info.run_id]
    assert runs["a"].data.tags["docevals.traces"] == "1"
    assert "docevals.traces" not in runs["b"].data.tags


def test_a_planted_api_key_never_reaches_a_trace_row(tmp_path):
    report = _evaluator().evaluate(_pipeline("p1", truth=2))
    stage = report.stage_reports[0]
    leaky = stage.model_copy(
        update={
            "warnings": [f"provider said: key {PLANTED} refused"],
            "metric_results": [
                result.model_copy(update={"notes": [f"Authorization: Bearer {PLANTED}"]})
                for result in stage.metric_results
            ],
        }
    )
    report = report.model_copy(update={"stage_reports": [leaky, *report.stage_reports[1:]]})
    register_secrets(PLANTED)
    uri = _uri(tmp_path)
    logged = log_assembled(assemble_evaluation(report, RunOptions(tracking_uri=uri)))
    (trace,) = _traces(uri, logged)
    assessments = {item.name: item for item in trace.info.assessments}
    assert "[REDACTED]" in assessments["extract"].rationale
    rows = _trace_rows(tmp_path / "mlflow.db")
    assert rows
    leaked = [form for form in forms(PLANTED) if form in rows]
    assert leaked == []


def _trace_rows(database: Path) -> str:
    tables = ("trace_info", "trace_tags", "trace_request_metadata", "assessments", "spans")
    with sqlite3.connect(database) as connection:
        return "\n".join(
            repr(row) for table in tables for row in connection.execute(f"SELECT * FROM {table}")
        )


@pytest.mark.parametrize("policy", ["all", "1"])
def test_suite_command_traces_the_cases_of_its_reports(mlflow_store, policy):
    for name, total in (("c1", 1), ("c2", 2)):
        write_json(Path(f"{name}.json"), {"total": 1})
        write_json(Path(f"{name}-truth.json"), {"total": total})
        argv = ["evaluate-case", "--prediction", f"{name}.json", "--case-id", name]
        argv += ["--ground-truth", f"{name}-truth.json", "--output", f"r-{name}.json"]
        assert main([*argv, "--no-mlflow", "--fail-on", "never"]) == 0
    argv = ["suite", "r-c1.json", "r-c2.json", "--output", "s.json", "--traces", policy]
    assert main(argv) == 0
    client = MlflowClient(mlflow_store)
    (experiment,) = [e for e in client.search_experiments() if e.name == "docevals"]
    traces = client.search_traces(locations=[experiment.experiment_id])
    ids = sorted(trace.info.tags["docevals.case.id"] for trace in traces)
    assert ids == (["c1", "c2"] if policy == "all" else ["c2"])
