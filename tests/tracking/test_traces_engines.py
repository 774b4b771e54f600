"""Traces of field runs made on other engines: ``--workers`` processes and Spark honour
the traces policy and log the same documents as one process does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mlflow.tracking import MlflowClient

from docevals_mlflow.cli import main


def _traced_ids(uri: str, run_id: str) -> list[str]:
    client = MlflowClient(uri)
    experiment_id = client.get_run(run_id).info.experiment_id
    found = client.search_traces(
        locations=[experiment_id], filter_string=f"metadata.`mlflow.sourceRun` = '{run_id}'"
    )
    return sorted(trace.info.tags["docevals.document.id"] for trace in found)


def _write(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")


def test_workers_runs_trace_the_same_documents(mlflow_store):
    expected = [{"id": f"d{i}", "data": {"a": str(i), "b": "x"}} for i in range(40)]
    predicted = [
        {"id": f"d{i}", "data": {"a": str(i), "b": "y" if i % 7 == 0 else "x"}} for i in range(40)
    ]
    _write(Path("gt.jsonl"), expected)
    _write(Path("pred.jsonl"), predicted)
    argv = ["fields", "--expected", "gt.jsonl", "--predicted", "pred.jsonl", "--traces", "errors"]
    assert main([*argv, "--output", "one.json", "--run-name", "one"]) == 0
    assert main([*argv, "--output", "two.json", "--run-name", "two", "--workers", "2"]) == 0
    client = MlflowClient(mlflow_store)
    runs = {run.info.run_name: run.info.run_id for run in client.search_runs(["0", "1"])}
    wrong = sorted(f"d{i}" for i in range(0, 40, 7))
    assert _traced_ids(mlflow_store, runs["one"]) == wrong
    assert _traced_ids(mlflow_store, runs["two"]) == wrong


def test_spark_runs_honour_the_traces_policy(spark, mlflow_store):
    from docevals_mlflow.tracking.api import log_field_comparison
    from tests.spark.test_compare import compare, documents, serial

    comparison = compare(spark, documents())
    try:
        on_spark = comparison.log(run_name="spark", traces="errors")
        limited = comparison.log(run_name="spark-3", traces=3)
    finally:
        comparison.unpersist()
    alone = log_field_comparison(serial(documents()), run_name="alone", traces="errors")
    wrong = _traced_ids(mlflow_store, alone.run_id)
    assert wrong
    assert _traced_ids(mlflow_store, on_spark.run_id) == wrong
    # At most 3, the wrong ones first.
    kept = _traced_ids(mlflow_store, limited.run_id)
    assert len(kept) == 3
    assert set(wrong) <= set(kept)
