"""A split evaluation logged as an MLflow run (temporary SQLite store)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from docevals_mlflow import evaluate_split, evaluate_split_batch, log_split_report
from docevals_mlflow.tracking.split_api import split_bundle
from tests.split.test_seed_metrics import EXPECTED, PREDICTED


def test_log_split_report_layout(mlflow_store, tmp_path):
    truth = tmp_path / "truth.json"
    truth.write_text(json.dumps({"sections": EXPECTED}), encoding="utf-8")
    report = evaluate_split_batch(
        [
            ({"id": "a", "sections": EXPECTED}, PREDICTED),
            ({"id": "b", "sections": EXPECTED}, EXPECTED),
        ],
        expected_only=["c"],
    )
    logged = log_split_report(
        report,
        ground_truth=truth,
        run_name="split-test",
        experiment="split",
        params={"model": "m1"},
    )
    client = MlflowClient(mlflow_store)
    run = client.get_run(logged.run_id)
    metrics, params, tags = run.data.metrics, run.data.params, run.data.tags
    assert metrics["Summary/page_accuracy"] == pytest.approx(13 / 15)
    assert metrics["Summary/accuracy_without_order"] == pytest.approx(5 / 6)
    assert metrics["Summary/accuracy_with_order"] == pytest.approx(4 / 6)
    assert metrics["split/macro_page_accuracy"] == pytest.approx(0.875)
    assert metrics["Summary/packets"] == 2
    assert metrics["Summary/pages"] == 15
    assert metrics["split/unpaired_expected"] == 1
    assert metrics["split/unmatched_predicted_sections"] == 2
    assert metrics["split/class/Invoice/precision"] == pytest.approx(6 / 7)
    assert metrics["split/class/W2/f1"] == 1.0
    # Support, predicted and the cells per class: the figure table.
    assert "split/class/Receipt/support" not in metrics
    classes = json.loads(
        Path(client.download_artifacts(logged.run_id, "tables/split_classes.json")).read_text()
    )
    rows = {row[0]: dict(zip(classes["columns"], row, strict=True)) for row in classes["data"]}
    assert rows["split/class/Receipt"]["support"] == 4
    assert metrics["split/boundary/tp"] == 4
    assert metrics["split/section/f1"] == pytest.approx(report.matching.exact.f1)
    assert metrics["split/graded/packet_score"] == pytest.approx(report.graded.packet_score)
    assert params["model"] == "m1"
    assert "docevals.version" in params
    assert tags["docevals.report_kind"] == "split"
    assert tags["mlflow.note.content"].startswith("**docevals split evaluation**: 2 packets")
    assert run.info.run_name == "split-test"
    artifacts = {item.path for item in client.list_artifacts(logged.run_id, "report")}
    assert artifacts == {
        "report/report.json",
        "report/report.md",
        "report/dashboard.html",
        "report/confusion_matrix.html",
    }
    results = {item.path for item in client.list_artifacts(logged.run_id, "results")}
    assert results == {"results/packets.parquet", "results/pages.parquet"}
    folder = Path(client.download_artifacts(logged.run_id, "results"))
    packets = pd.read_parquet(folder / "packets.parquet")
    assert packets["packet_id"].tolist() == ["a", "b"]
    pages = pd.read_parquet(folder / "pages.parquet")
    assert len(pages) == 15
    index = json.loads(
        Path(client.download_artifacts(logged.run_id, "metrics_index.json")).read_text()
    )
    assert index["class"]["Invoice"] == "Invoice"
    inputs = run.inputs.dataset_inputs
    assert [item.dataset.name for item in inputs] == ["truth"]


def test_one_packet_report_and_undefined_figures(mlflow_store):
    # One one-document packet: boundary scores are undefined and not logged as 0.
    report = evaluate_split(EXPECTED[:1], EXPECTED[:1])
    logged = log_split_report(report)
    metrics = MlflowClient(mlflow_store).get_run(logged.run_id).data.metrics
    assert metrics["Summary/page_accuracy"] == 1.0
    assert "split/boundary/f1" not in metrics
    assert metrics["split/boundary/tp"] == 0


def test_class_keys_are_legal_and_mapped():
    expected = [
        {"section_id": "a", "document_class": "Form 1040 / Schedule C?", "page_indices": [0]}
    ]
    writer = split_bundle(evaluate_split(expected, expected))
    keys = [key for key in writer.bundle.metrics if key.startswith("split/class/")]
    assert "split/class/Form 1040 _ Schedule C_/f1" in keys
    index = json.loads(writer.files["metrics_index.json"])
    assert index["class"]["Form 1040 _ Schedule C_"] == "Form 1040 / Schedule C?"
