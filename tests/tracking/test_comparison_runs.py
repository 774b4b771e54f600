"""A comparison logged as a run of kind ``comparison``."""

from __future__ import annotations

import numpy as np
from mlflow.tracking import MlflowClient

from docevals_mlflow import compare_runs, log_comparison
from docevals_mlflow.tracking.bundle import BundleWriter
from docevals_mlflow.tracking.comparison_runs import layout_comparison
from tests.compare.synthetic import field_run, simulate_cells


def comparison(*, regress: bool):
    rng = np.random.default_rng(4)
    good = simulate_cells(rng, 120, [0.05, 0.05, 0.05, 0.02, 0.05])
    bad = simulate_cells(rng, 120, [0.05, 0.05, 0.05, 0.40, 0.05])
    first = field_run("a" * 32, good if regress else bad)
    second = field_run("b" * 32, bad if regress else good)
    return compare_runs(first, second, resamples=300)


def test_the_layout_of_a_comparison_run():
    writer = BundleWriter(kind="comparison")
    layout_comparison(writer, comparison(regress=True))
    params, tags, metrics = writer.bundle.params, writer.bundle.tags, writer.bundle.metrics
    assert params["compare.baseline_run_id"] == "a" * 32
    assert params["compare.candidate_run_ids"] == "b" * 32
    assert params["compare.metric"] == "f1"
    assert params["compare.resamples"] == "300"
    assert tags["docevals.kind"] == "comparison"
    assert tags["docevals.compare.runs"] == f"{'a' * 32},{'b' * 32}"
    assert tags["docevals.verdict"] == "fail"
    assert "significant regression" in tags["mlflow.note.content"]
    candidate = "b" * 32
    assert metrics[f"compare/{candidate}/regressions"] >= 1
    assert metrics[f"compare/{candidate}/field/total/delta"] < 0
    assert metrics[f"compare/{candidate}/field/total/p_adjusted"] < 0.05
    assert metrics[f"compare/{candidate}/overall/all documents/ci_high"] < 0
    assert metrics[f"compare/{candidate}/matched"] == 120
    files = set(writer.files)
    assert {
        "comparison/comparison.md",
        "comparison/comparison.html",
        "comparison/effects.csv",
        "comparison/flips.csv",
        "comparison/metrics.csv",
        "comparison/changes.json",
    } <= files


def test_log_comparison(mlflow_store):
    logged = log_comparison(comparison(regress=False), experiment="comparisons")
    client = MlflowClient(mlflow_store)
    run = client.get_run(logged.run_id)
    assert run.info.run_name == f"compare {'b' * 32} vs {'a' * 32}"
    assert run.data.tags["docevals.kind"] == "comparison"
    assert run.data.tags["docevals.verdict"] == "pass"
    paths = {item.path for item in client.list_artifacts(logged.run_id, "comparison")}
    assert "comparison/comparison.html" in paths
    assert logged.experiment_name == "comparisons"
    # A comparison run is not an evaluation: it registers no prompt.
    assert "mlflow.linkedPrompts" not in run.data.tags
