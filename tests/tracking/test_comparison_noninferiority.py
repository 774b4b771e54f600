"""Non-inferiority verdicts of ``docevals compare`` as a comparison run logs them."""

from __future__ import annotations

import json

import numpy as np
import pytest
from mlflow.tracking import MlflowClient

from docevals_mlflow import compare_runs, log_comparison
from docevals_mlflow.tracking.bundle import BundleWriter
from docevals_mlflow.tracking.comparison_runs import layout_comparison
from tests.compare.synthetic import field_run, simulate_cells

BASE, CANDIDATE = "a" * 32, "b" * 32


def gated_comparison():
    """Every wrong value (FD) of the baseline left out (FN) by the candidate, over 200
    documents: recall drops by about 10 points (inferior), precision rises and
    accuracy stays (both non-inferior)."""
    rng = np.random.default_rng(7)
    cells = simulate_cells(rng, 200, [0.1] * 5)
    worse = cells.copy()
    worse[:, :, 3], worse[:, :, 2] = worse[:, :, 2], 0
    return compare_runs(
        field_run(BASE, cells),
        field_run(CANDIDATE, worse),
        resamples=300,
        non_inferiority={"accuracy": 0.02, "recall": 0.02, "precision": 0.02},
    )


def test_each_verdict_is_a_tag_its_figures_metrics_and_its_line_an_artifact():
    comparison = gated_comparison()
    verdicts = {test.metric: test.verdict for test in comparison.non_inferiority}
    assert verdicts == {
        "accuracy": "non-inferior",
        "recall": "inferior",
        "precision": "non-inferior",
    }
    writer = BundleWriter(kind="comparison")
    layout_comparison(writer, comparison)
    tags, metrics = writer.bundle.tags, writer.bundle.metrics
    assert tags[f"docevals.noninferiority.{CANDIDATE}.recall"] == "inferior"
    assert tags[f"docevals.noninferiority.{CANDIDATE}.precision"] == "non-inferior"
    prefix = f"compare/{CANDIDATE}/noninferiority"
    recall = next(test for test in comparison.non_inferiority if test.metric == "recall")
    assert metrics[f"{prefix}/recall/passed"] == 0
    assert metrics[f"{prefix}/precision/passed"] == 1
    assert metrics[f"{prefix}/recall/bound"] == pytest.approx(recall.bound)
    assert metrics[f"{prefix}/recall/delta"] == pytest.approx(recall.delta)
    assert metrics[f"{prefix}/recall/margin"] == 0.02
    assert metrics[f"{prefix}/recall/units"] == 200
    # A test not passed fails the run's verdict, as it fails the command.
    assert tags["docevals.verdict"] == "fail"
    entries = json.loads(writer.files["comparison/non_inferiority.json"])
    assert [entry["metric"] for entry in entries] == ["accuracy", "recall", "precision"]
    assert entries[1]["verdict"] == "inferior"
    assert entries[1]["passed"] is False
    assert entries[1]["text"] == recall.text()
    assert entries[1]["text"].startswith("non-inferiority recall (margin 0.02): inferior.")
    assert entries[1]["reason"] == recall.reason


def test_an_inconclusive_test_is_a_failed_gate_and_a_passed_one_keeps_pass():
    rng = np.random.default_rng(3)
    few = simulate_cells(rng, 6, [0.05] * 5)  # fewer than 10 documents: inconclusive
    comparison = compare_runs(
        field_run(BASE, few), field_run(CANDIDATE, few), resamples=200,
        non_inferiority={"f1": 0.05},
    )  # fmt: skip
    writer = BundleWriter(kind="comparison")
    layout_comparison(writer, comparison)
    assert writer.bundle.tags[f"docevals.noninferiority.{CANDIDATE}.f1"] == "inconclusive"
    assert writer.bundle.metrics[f"compare/{CANDIDATE}/noninferiority/f1/passed"] == 0
    assert writer.bundle.tags["docevals.verdict"] == "fail"
    many = simulate_cells(rng, 200, [0.05] * 5)
    passed = compare_runs(
        field_run(BASE, many), field_run(CANDIDATE, many.copy()), resamples=200,
        non_inferiority={"f1": 0.02},
    )  # fmt: skip
    writer = BundleWriter(kind="comparison")
    layout_comparison(writer, passed)
    assert writer.bundle.tags["docevals.verdict"] == "pass"
    assert writer.bundle.metrics[f"compare/{CANDIDATE}/noninferiority/f1/passed"] == 1
    # Without tests, nothing of them is logged.
    plain = BundleWriter(kind="comparison")
    layout_comparison(plain, compare_runs(field_run(BASE, many), field_run(CANDIDATE, many)))
    assert not any("noninferiority" in key for key in plain.bundle.metrics)
    assert not any("noninferiority" in key for key in plain.bundle.tags)
    assert "comparison/non_inferiority.json" not in plain.files


def test_the_verdicts_reach_an_mlflow_store(mlflow_store):
    logged = log_comparison(gated_comparison(), experiment="gates")
    client = MlflowClient(mlflow_store)
    run = client.get_run(logged.run_id)
    assert run.data.tags[f"docevals.noninferiority.{CANDIDATE}.recall"] == "inferior"
    assert run.data.tags[f"docevals.noninferiority.{CANDIDATE}.precision"] == "non-inferior"
    assert run.data.metrics[f"compare/{CANDIDATE}/noninferiority/recall/passed"] == 0
    assert run.data.metrics[f"compare/{CANDIDATE}/noninferiority/precision/passed"] == 1
    assert run.data.tags["docevals.verdict"] == "fail"
    path = client.download_artifacts(logged.run_id, "comparison/non_inferiority.json")
    with open(path, encoding="utf-8") as handle:
        entries = json.load(handle)
    assert {entry["metric"]: entry["verdict"] for entry in entries}["recall"] == "inferior"
    assert "one-sided paired bootstrap over documents" in entries[0]["text"]
