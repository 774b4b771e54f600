"""The commands log to MLflow by default, and never lose an evaluation."""

from __future__ import annotations

import json
import re
from pathlib import Path

from mlflow.tracking import MlflowClient

from docevals_mlflow.cli import main


def write_inputs(folder: Path) -> tuple[Path, Path]:
    expected = folder / "expected.jsonl"
    predicted = folder / "predicted.jsonl"
    expected.write_text(
        json.dumps({"id": "1", "data": {"total": "10.00", "name": "ACME"}}) + "\n",
        encoding="utf-8",
    )
    predicted.write_text(
        json.dumps({"id": "1", "data": {"total": 10, "name": "ACME Inc"}}) + "\n",
        encoding="utf-8",
    )
    return expected, predicted


def run_id_from(output: str) -> str:
    match = re.search(r"MLflow run ([0-9a-f]{32})", output)
    assert match, output
    return match.group(1)


def test_fields_logs_a_run_by_default(mlflow_store, tmp_path, capsys):
    expected, predicted = write_inputs(tmp_path)
    code = main(
        [
            "fields",
            "--expected",
            str(expected),
            "--predicted",
            str(predicted),
            "--output",
            str(tmp_path / "report.json"),
            "--experiment",
            "extraction",
            "--run-name",
            "prompt-v2",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    run = MlflowClient(mlflow_store).get_run(run_id_from(out))
    assert run.info.run_name == "prompt-v2"
    assert MlflowClient(mlflow_store).get_experiment(run.info.experiment_id).name == "extraction"
    assert run.data.metrics["Summary/documents"] == 1
    assert run.data.tags["docevals.report_kind"] == "fields"
    (dataset,) = run.inputs.dataset_inputs
    assert dataset.dataset.name == "expected"
    assert f"mlflow ui --backend-store-uri {mlflow_store}" in out


def test_no_mlflow_logs_nothing(mlflow_store, tmp_path, capsys):
    expected, predicted = write_inputs(tmp_path)
    argv = ["fields", "--expected", str(expected), "--predicted", str(predicted)]
    assert main([*argv, "--output", str(tmp_path / "r.json"), "--no-mlflow"]) == 0
    assert "MLflow run" not in capsys.readouterr().out
    assert MlflowClient(mlflow_store).search_runs(experiment_ids=["0"]) == []
    assert MlflowClient(mlflow_store).get_experiment_by_name("docevals") is None


def test_evaluate_case_logs_a_run_with_its_verdict(mlflow_store, tmp_path, capsys):
    prediction = tmp_path / "pred.json"
    truth = tmp_path / "truth.json"
    prediction.write_text('{"total": 3}', encoding="utf-8")
    truth.write_text('{"total": 4}', encoding="utf-8")
    code = main(
        [
            "evaluate-case",
            "--prediction",
            str(prediction),
            "--ground-truth",
            str(truth),
            "--output",
            str(tmp_path / "case.json"),
        ]
    )
    assert code == 1
    run = MlflowClient(mlflow_store).get_run(run_id_from(capsys.readouterr().out))
    assert run.data.tags["docevals.verdict"] == "fail"
    assert run.data.params["case.id"] == "pred"
    assert run.data.metrics["stage/output/failure/current_stage"] == 1.0


def test_unreachable_server_keeps_the_bundle_and_log_sends_it_later(mlflow_store, tmp_path, capsys):
    expected, predicted = write_inputs(tmp_path)
    output = tmp_path / "reports" / "batch.json"
    code = main(
        [
            "fields",
            "--expected",
            str(expected),
            "--predicted",
            str(predicted),
            "--output",
            str(output),
            "--tracking-uri",
            "http://127.0.0.1:9",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0
    assert output.is_file()
    bundle = tmp_path / "reports" / "batch.run"
    assert (bundle / "run.json").is_file()
    assert f"docevals log {bundle}" in captured.err
    assert "unreachable" in captured.err

    assert main(["log", str(bundle)]) == 0
    run = MlflowClient(mlflow_store).get_run(run_id_from(capsys.readouterr().out))
    assert run.data.tags["docevals.report_kind"] == "fields"
    assert run.data.metrics["Summary/documents"] == 1


def test_log_errors_exit_2(mlflow_store, tmp_path, capsys):
    assert main(["log", str(tmp_path / "missing")]) == 2
    assert "not a folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["log", str(tmp_path / "empty")]) == 2
    assert "no run.json" in capsys.readouterr().err


def test_a_parquet_folder_ground_truth_has_a_content_digest(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from docevals_mlflow.tracking.layout import fields_dataset

    folder = tmp_path / "truth"
    folder.mkdir()
    pq.write_table(pa.table({"id": ["a"], "data": ['{"v": 1}']}), folder / "part-0.parquet")
    (folder / "_SUCCESS").write_text("")
    first, frame = fields_dataset(folder)
    assert list(frame["file"]) == ["part-0.parquet"]
    pq.write_table(pa.table({"id": ["a"], "data": ['{"v": 2}']}), folder / "part-0.parquet")
    second, _ = fields_dataset(folder)
    assert second.digest != first.digest
    assert not first.digest.startswith("e3b0c44298fc1c14")  # SHA-256 of nothing
