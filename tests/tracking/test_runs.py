"""Logging evaluations as MLflow runs, against temporary SQLite stores."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from docevals_mlflow import (
    EvaluationCase,
    EvaluationSpec,
    ExactStructuredMetric,
    FunctionMetric,
    OperationSpec,
    PipelineCase,
    PipelineEvaluator,
    artifact_from_value,
    compare_documents,
)
from docevals_mlflow.tracking.bundle import BundleWriter
from docevals_mlflow.tracking.bundle_folders import read_bundle
from docevals_mlflow.tracking.layout import layout_evaluation, layout_fields
from docevals_mlflow.tracking.runs import (
    TrackingError,
    TrackingUnavailableError,
    log_bundle,
    resolve_tracking_uri,
)
from tests.tracking.invoices import SCHEMA

DOCUMENTS = [
    {
        "id": "a",
        "class": "Invoice",
        "expected": {"number": "1", "total": "10.00", "lines": [{"sku": "X"}]},
        "predicted": {"number": "1", "total": 10, "lines": [{"sku": "X"}]},
    },
    {
        "id": "b",
        "class": "Invoice",
        "expected": {"number": "2", "total": "5.00", "lines": [{"sku": "Y"}, {"sku": "Z"}]},
        "predicted": {"number": "3", "lines": [{"sku": "Z"}]},
    },
]


def fields_bundle(tmp_path: Path) -> Path:
    report = compare_documents(DOCUMENTS, SCHEMA).to_report()
    writer = BundleWriter(run_name="fields-test")
    layout_fields(writer, report, markdown="# report\n", dashboard="<html></html>")
    return writer.write(tmp_path / "bundle")


def test_default_uri_is_a_local_sqlite_file(monkeypatch, tmp_path):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.chdir(tmp_path)
    assert resolve_tracking_uri() == f"sqlite:///{tmp_path.as_posix()}/mlflow.db"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://127.0.0.1:1")
    assert resolve_tracking_uri() == "http://127.0.0.1:1"
    assert resolve_tracking_uri("sqlite:///x.db") == "sqlite:///x.db"


def test_field_run_layout(mlflow_store, tmp_path):
    logged = log_bundle(fields_bundle(tmp_path), experiment="layout")
    client = MlflowClient(mlflow_store)
    run = client.get_run(logged.run_id)
    params, metrics, tags = run.data.params, run.data.metrics, run.data.tags
    assert params["schema.id"] == "invoices"
    assert params["schema.sha256"] == SCHEMA.sha256
    assert "docevals.version" in params
    # a: 3 TP. b: number FD, total FN, lines paired Z/Z TP, Y missed FN.
    assert metrics["overall/tp"] == 4
    assert metrics["overall/fd"] == 1
    assert metrics["overall/fn"] == 2
    assert metrics["Summary/documents"] == 2
    assert metrics["Summary/f1"] == pytest.approx(8 / 11)  # P 4/5, R 4/6
    assert "overall/f1" not in metrics
    assert metrics["field/total/f1"] == pytest.approx(2 / 3)
    assert metrics["class/Invoice/macro_f1"] == pytest.approx((1.0 + 0.4) / 2)
    # Cells, FAR/FDR and list counts per field are in the figure tables, not metrics.
    assert "field/number/fd" not in metrics
    assert "list/lines/missed" not in metrics
    logged_tables = json.loads(tags["mlflow.loggedArtifacts"])
    assert {"path": "tables/fields.json", "type": "table"} in logged_tables
    table = json.loads(
        Path(
            client.download_artifacts(logged.run_id, "tables/fields.json", str(tmp_path))
        ).read_text(encoding="utf-8")
    )
    rows = {row[0]: dict(zip(table["columns"], row, strict=True)) for row in table["data"]}
    assert rows["field/number"]["fd"] == 1
    assert rows["field/lines.sku"]["tp"] == 2
    assert rows["field/number"]["far"] is None  # undefined (no FA, no TN): never a 0
    assert tags["docevals.kind"] == "evaluation"
    assert tags["docevals.report_kind"] == "fields"
    assert tags["mlflow.note.content"].startswith("**docevals field comparison**")
    assert run.info.run_name == "fields-test"
    assert run.info.status == "FINISHED"
    paths = {item.path for item in client.list_artifacts(logged.run_id, "report")}
    assert paths == {"report/report.json", "report/report.md", "report/dashboard.html"}
    index = json.loads(
        Path(
            client.download_artifacts(logged.run_id, "metrics_index.json", str(tmp_path))
        ).read_text(encoding="utf-8")
    )
    assert index["field"]["lines.sku"] == "$.lines[].sku"
    rows = pd.read_parquet(
        client.download_artifacts(logged.run_id, "results/fields.parquet", str(tmp_path))
    )
    assert len(rows) == 7
    assert set(rows["outcome"]) == {"TP", "FD", "FN"}


def test_field_run_rules_unparsed_discovered_and_lists(mlflow_store, tmp_path):
    documents = [
        {
            "id": "c",
            "class": "Invoice",
            "expected": {"number": "4", "total": "N/A", "lines": [{"sku": "A"}], "memo": "x"},
            "predicted": {"number": "4", "total": "n/a", "lines": [{"sku": "B"}], "memo": "x"},
        },
        {"id": "d", "class": "Invoice", "expected": {"number": "5"}, "predicted": {"number": "5"}},
    ]
    report = compare_documents(documents, SCHEMA, shape_mismatch="count").to_report()
    writer = BundleWriter(run_name="rules")
    layout_fields(writer, report, markdown="", dashboard="")
    logged = log_bundle(writer.write(tmp_path / "bundle"), experiment="rules")
    run = MlflowClient(mlflow_store).get_run(logged.run_id)
    params, metrics = run.data.params, run.data.metrics
    assert params["fields.list_pairing"] == "schema"
    assert params["fields.discovered"] == "exclude"
    assert params["fields.shape_mismatch"] == "count"
    assert metrics["overall/unparsed"] == 2
    assert metrics["field/total/unparsed"] == 2
    assert "field/number/unparsed" not in metrics
    assert metrics["overall/invalid_expected"] == 0
    # memo is not in the schema: its own namespace, outside overall/.
    assert metrics["discovered/memo/f1"] == 1
    assert metrics["discovered/overall/f1"] == 1
    assert "field/memo/f1" not in metrics
    assert metrics["overall/tp"] == 3  # number twice, total (identical text)
    assert metrics["list/lines/far"] == 0.0
    # A against B: a weak pair; d has no lines on either side: one empty list.
    lists = json.loads(writer.files["tables/lists.json"])
    row = dict(zip(lists["columns"], lists["data"][0], strict=True))
    assert (row["key"], row["weak"], row["empty"]) == ("list/lines", 1, 1)
    fields = json.loads(writer.files["tables/fields.json"])
    keys = [row[0] for row in fields["data"]]
    assert "discovered/memo" in keys
    assert "field/memo" not in keys


def test_values_keep_their_text_in_parquet(mlflow_store, tmp_path):
    documents = [{"id": "z", "expected": {"code": "0123"}, "predicted": {"code": "0123"}}]
    writer = BundleWriter()
    layout_fields(
        writer,
        compare_documents(documents).to_report(),
        markdown="",
        dashboard="",
    )
    bundle = writer.write(tmp_path / "b")
    rows = pd.read_parquet(bundle / "artifacts" / "results" / "fields.parquet")
    assert rows["expected"].tolist() == ["0123"]


def test_long_params_go_to_artifacts_with_their_hash(tmp_path):
    writer = BundleWriter()
    writer.param("op.x.action", "a" * 7000)
    assert writer.bundle.params["op.x.action"].startswith("sha256:")
    assert writer.files["params/op.x.action.txt"] == b"a" * 7000


def pipeline_report():
    spec = OperationSpec(
        spec_id="totals",
        operation="sum",
        version="2",
        action_instruction="Add the lines.",
        evaluation_spec=EvaluationSpec(spec_id="totals-eval", objective="o", criteria=["c"]),
    )
    extract = EvaluationCase(
        case_id="inv-1",
        stage_id="extract",
        operation="extract",
        prediction={"total": 3},
        references=[artifact_from_value({"total": 4}, authority="ground_truth", artifact_id="gt")],
    )
    total = EvaluationCase(
        case_id="inv-1",
        stage_id="sum",
        operation="sum",
        input_data={"total": 3},
        prediction={"sum": 3},
        depends_on=["extract"],
    )
    return PipelineEvaluator(
        operation_metrics={
            "extract": [ExactStructuredMetric()],
            "sum": [FunctionMetric("check", lambda case: True)],
        },
        operation_specs=[spec],
    ).evaluate(PipelineCase(pipeline_id="inv-1", stages=[extract, total]))


def test_pipeline_run_layout(mlflow_store, tmp_path):
    report = pipeline_report()
    writer = BundleWriter(run_name="pipeline")
    layout_evaluation(writer, report, markdown="# p\n", dashboard="<html></html>")
    logged = log_bundle(writer.write(tmp_path / "bundle"))
    client = MlflowClient(mlflow_store)
    run = client.get_run(logged.run_id)
    params, metrics, tags = run.data.params, run.data.metrics, run.data.tags
    assert params["pipeline.id"] == "inv-1"
    assert params["op.sum.spec_id"] == "totals"
    assert params["op.sum.version"] == "2"
    assert params["op.sum.eval_spec_status"] == "draft"
    assert metrics["stage/extract/fail_rate"] == 1.0
    assert metrics["Summary/case_fail_rate"] == 1.0
    assert metrics["Summary/cases"] == 1
    assert metrics["stage/extract/failure/current_stage"] == 1.0
    assert metrics["stage/sum/failure/upstream"] == 1.0
    assert "overall/cases" not in metrics
    assert metrics["metric/exact_structured/field_accuracy"] == 0.0
    assert tags["docevals.verdict"] == "fail"
    assert tags["docevals.report_kind"] == "pipeline"
    operations = json.loads(
        Path(
            client.download_artifacts(logged.run_id, "specs/operations.json", str(tmp_path))
        ).read_text(encoding="utf-8")
    )
    (variant,) = operations["operations"]["sum"]["variants"].values()
    assert variant["action_instruction"] == "Add the lines."
    inputs = run.inputs.dataset_inputs
    assert [entry.dataset.name for entry in inputs] == ["inv-1-ground-truth"]
    assert {tag.key: tag.value for tag in inputs[0].tags}["mlflow.data.context"] == "ground_truth"


def test_reusing_a_run_with_different_params_is_refused(mlflow_store, tmp_path):
    bundle = fields_bundle(tmp_path)
    logged = log_bundle(bundle)
    again = log_bundle(bundle, run_id=logged.run_id)  # same params: fine
    assert again.run_id == logged.run_id
    manifest, _ = read_bundle(bundle)
    manifest.params["schema.sha256"] = "different"
    (bundle / "run.json").write_text(manifest.model_dump_json(), encoding="utf-8")
    with pytest.raises(TrackingError, match=r"schema\.sha256"):
        log_bundle(bundle, run_id=logged.run_id)
    params = MlflowClient(mlflow_store).get_run(logged.run_id).data.params
    assert params["schema.sha256"] == SCHEMA.sha256


def test_unreachable_server_fails_fast(tmp_path):
    with pytest.raises(TrackingUnavailableError, match="unreachable"):
        log_bundle(fields_bundle(tmp_path), tracking_uri="http://127.0.0.1:9")


def test_logging_costs_a_constant_number_of_calls(mlflow_store, tmp_path, monkeypatch):
    """The number of store calls does not grow with the number of metrics."""
    calls = []
    original = MlflowClient.log_batch

    def counting(self, *args, **kwargs):
        calls.append(len(kwargs.get("metrics", ())))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(MlflowClient, "log_batch", counting)
    writer = BundleWriter()
    for index in range(900):
        writer.metric(f"field/f{index}/f1", index / 900)
    log_bundle(writer.write(tmp_path / "b"))
    assert calls == [900]  # one batch: 900 metrics < the store's 1,000 per batch


def test_python_api_logs_a_field_comparison_with_extra_params(mlflow_store, tmp_path):
    from docevals_mlflow import log_field_comparison

    expected = tmp_path / "expected.jsonl"
    expected.write_text('{"id": "a", "data": {"number": "1"}}\n', encoding="utf-8")
    logged = log_field_comparison(
        compare_documents(DOCUMENTS, SCHEMA),
        ground_truth=expected,
        run_name="v2",
        experiment="api",
        params={"prompt.version": "2"},
        tags={"team": "extraction"},
    )
    run = MlflowClient(mlflow_store).get_run(logged.run_id)
    assert run.data.params["prompt.version"] == "2"
    assert run.data.tags["team"] == "extraction"
    assert run.data.metrics["overall/tp"] == 4
    (dataset,) = run.inputs.dataset_inputs
    assert dataset.dataset.name == "expected"


def test_python_api_keeps_the_bundle_when_logging_fails(tmp_path):
    from docevals_mlflow import log_evaluation_report

    kept = tmp_path / "kept.run"
    with pytest.raises(TrackingUnavailableError):
        log_evaluation_report(
            pipeline_report(), tracking_uri="http://127.0.0.1:9", keep_bundle_at=kept
        )
    bundle, artifacts = read_bundle(kept)
    assert bundle.params["pipeline.id"] == "inv-1"
    assert (artifacts / "report" / "dashboard.html").is_file()


def test_judge_panel_params_metrics_and_review_queue(mlflow_store, tmp_path):
    from docevals_mlflow.evaluation.panel_metric import JudgePanelMetric, JudgeVariant
    from tests.judges.fakes import ScriptedAdapter, answer

    def variant(name, verdict):
        adapter = ScriptedAdapter(
            lambda request, repair: answer(request, prediction=verdict), provider=name, model="m"
        )
        return JudgeVariant(name=name, judge=adapter)

    panel = JudgePanelMetric(
        [variant("a", "correct"), variant("b", "correct"), variant("c", "incorrect")],
        name="panel",
    )
    case = EvaluationCase(
        case_id="c1",
        prediction={"total": 1},
        references=[artifact_from_value({"total": 1}, authority="ground_truth", artifact_id="gt")],
    )
    from docevals_mlflow import Evaluator

    report = Evaluator([panel]).evaluate(case)
    writer = BundleWriter()
    layout_evaluation(writer, report, markdown="", dashboard="")
    logged = log_bundle(writer.write(tmp_path / "bundle"))
    client = MlflowClient(mlflow_store)
    run = client.get_run(logged.run_id)
    params, metrics = run.data.params, run.data.metrics
    assert params["judge.panel"] == "a=a:m@0.0, b=b:m@0.0, c=c:m@0.0"
    assert params["judge.panel_sha256"] == panel.panel_sha256
    assert params["judge.vote_rule"] == "majority"
    assert len(params["judge.instructions_sha256"]) == 64
    assert metrics["judge/a/pass_rate"] == 1.0
    assert metrics["judge/c/pass_rate"] == 0.0
    assert metrics["panel/panel/model_group_agreement"] == pytest.approx(2 / 3)
    assert metrics["panel/panel/human_review_rate"] == 1.0
    paths = {item.path for item in client.list_artifacts(logged.run_id, "review")}
    assert paths == {"review/queue.json"}
    queue = json.loads(
        Path(
            client.download_artifacts(logged.run_id, "review/queue.json", str(tmp_path))
        ).read_text(encoding="utf-8")
    )
    assert queue[0]["reason"] == "minority dissent"


def test_sqlite_artifacts_sit_next_to_the_database_not_the_working_folder(
    mlflow_store, tmp_path, monkeypatch
):
    bundle = fields_bundle(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    logged = log_bundle(bundle, tracking_uri=mlflow_store, experiment="next to the db")
    run = MlflowClient(mlflow_store).get_run(logged.run_id)
    assert run.info.artifact_uri.startswith((tmp_path / "mlruns" / "next_to_the_db").as_uri())
    assert list(elsewhere.iterdir()) == []
