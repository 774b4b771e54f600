"""Headline first: the key scheme MLflow's UI orders by, figure tables, and old runs."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mlflow.tracking import MlflowClient

from docevals_mlflow import compare_documents, evaluate_split_batch, log_split_report
from docevals_mlflow.compare.deltas import metric_deltas
from docevals_mlflow.judges.calibration import calibrate
from docevals_mlflow.tracking.bundle import BundleWriter
from docevals_mlflow.tracking.calibration_runs import layout_calibration
from docevals_mlflow.tracking.figure_tables import OLD_HEADLINE, table_figures
from docevals_mlflow.tracking.generation_runs import layout_generation_run
from docevals_mlflow.tracking.layout import layout_evaluation, layout_fields
from docevals_mlflow.tracking.snapshots import snapshot_from_writer
from docevals_mlflow.tracking.split_api import split_bundle
from tests.judges.test_calibration import judge_labels, judge_reports
from tests.split.test_seed_metrics import EXPECTED, PREDICTED
from tests.tracking.test_generation_runs import AGREED, DISPUTED
from tests.tracking.test_runs import DOCUMENTS, SCHEMA, pipeline_report

CONFIDENT = [
    {**document, "confidence": {"$.number": 0.9, "$.total": 0.4}} for document in DOCUMENTS
]


def fields_writer(documents: list[dict[str, Any]] = DOCUMENTS) -> BundleWriter:
    writer = BundleWriter(run_name="fields")
    report = compare_documents(documents, SCHEMA).to_report()
    layout_fields(writer, report, markdown="", dashboard="")
    return writer


def split_writer() -> BundleWriter:
    report = evaluate_split_batch(
        [
            ({"id": "a", "sections": EXPECTED}, PREDICTED),
            ({"id": "b", "sections": EXPECTED}, EXPECTED),
        ]
    )
    return split_bundle(report)


def pipeline_writer() -> BundleWriter:
    writer = BundleWriter(run_name="pipeline")
    layout_evaluation(writer, pipeline_report(), markdown="", dashboard="")
    return writer


def calibration_writer() -> BundleWriter:
    writer = BundleWriter(run_name="calibration")
    report = calibrate(judge_reports(), judge_labels(), bootstrap=20)
    layout_calibration(writer, report, markdown="")
    return writer


def generation_writer() -> BundleWriter:
    writer = BundleWriter(run_name="generation")
    layout_generation_run(writer, [DISPUTED, AGREED])
    return writer


def table_rows(writer: BundleWriter, path: str) -> dict[str, dict[str, Any]]:
    table = json.loads(writer.files[path])
    return {row[0]: dict(zip(table["columns"], row, strict=True)) for row in table["data"]}


@pytest.mark.parametrize(
    ("make", "headline"),
    [
        (
            fields_writer,
            [
                *("accuracy", "accuracy_ci_high", "accuracy_ci_low", "documents", "f1"),
                *("f1_ci_high", "f1_ci_low", "precision", "precision_ci_high"),
                *("precision_ci_low", "recall", "recall_ci_high", "recall_ci_low"),
            ],
        ),
        (
            pipeline_writer,
            [
                *("case_fail_rate", "case_not_applicable_rate", "case_pass_rate"),
                *("case_uncertain_rate", "cases", "human_review_rate"),
            ],
        ),
        (
            split_writer,
            [
                *("accuracy_with_order", "accuracy_with_order_ci_high"),
                *("accuracy_with_order_ci_low", "accuracy_without_order"),
                *("accuracy_without_order_ci_high", "accuracy_without_order_ci_low"),
                *("packets", "page_accuracy", "page_accuracy_ci_high", "page_accuracy_ci_low"),
                "pages",
            ],
        ),
        (
            calibration_writer,
            [
                *("agreement", "agreement_ci_high", "agreement_ci_low"),
                *("corrected_pass_rate", "human_pass_rate", "human_pass_rate_ci_high"),
                *("human_pass_rate_ci_low", "judge_pass_rate", "judge_pass_rate_ci_high"),
                *("judge_pass_rate_ci_low", "kappa", "kappa_ci_high", "kappa_ci_low"),
                *("labelled_cases", "labelled_claims"),
            ],
        ),
        (
            generation_writer,
            ["agreement", "cases", "fields_agreed", "fields_to_review", "human_review_rate"],
        ),
    ],
)
def test_the_headline_sorts_first(make, headline):
    keys = sorted(make().bundle.metrics)  # MLflow's UI orders by code points, like this
    assert keys[: len(headline)] == [f"Summary/{name}" for name in headline]
    # Every other key starts with a small letter, so "Summary" is the first section too.
    assert all(key[0].islower() for key in keys[len(headline) :])


def test_a_field_run_keeps_its_scores_as_metrics_and_the_rest_as_tables():
    writer = fields_writer(CONFIDENT)
    metrics = writer.bundle.metrics
    assert {
        key.removeprefix("field/total/") for key in metrics if key.startswith("field/total/")
    } == {
        "precision",
        "recall",
        "f1",
        "accuracy",
        "f1/ci_low",
        "f1/ci_high",
    }
    assert "calibration/overall/auroc" in metrics
    assert not any(key.startswith(("calibration/total", "review_")) for key in metrics)
    fields = table_rows(writer, "tables/fields.json")
    assert fields["field/total"]["name"] == "$.total"
    assert fields["field/number"]["fd"] == 1  # b: number FD, total FN
    assert fields["field/total"]["fn"] == 1
    assert fields["field/total"]["f1"] == metrics["field/total/f1"]
    # Every interval is in the table; only F1's per field (and the overall ones) are metrics.
    assert fields["field/total"]["f1_ci_low"] == metrics["field/total/f1/ci_low"]
    assert fields["field/total"]["recall_ci_high"] is not None
    assert "field/total/recall/ci_high" not in metrics
    assert fields["overall"]["f1_ci_high"] == metrics["Summary/f1_ci_high"]
    assert metrics["Summary/f1_ci_low"] <= metrics["Summary/f1"] <= metrics["Summary/f1_ci_high"]
    calibration = table_rows(writer, "tables/calibration.json")
    assert calibration["calibration/total"]["field"] == "$.total"
    tags = json.loads(writer.bundle.tags["mlflow.loggedArtifacts"])
    assert {entry["path"] for entry in tags} >= {
        "tables/fields.json",
        "tables/calibration.json",
        "tables/review_budget.json",
    }
    assert all(entry["type"] == "table" for entry in tags)
    # The index names the segments of logged keys only, not of table rows.
    index = json.loads(writer.files["metrics_index.json"])
    assert index["calibration"] == {"overall": "(all fields)"}


def test_the_calibration_headline_is_the_case_figures():
    writer = calibration_writer()
    metrics = writer.bundle.metrics
    assert metrics["Summary/agreement"] == metrics["calibration/cases/agreement"]
    assert metrics["Summary/kappa"] == metrics["calibration/cases/kappa"]
    assert metrics["Summary/labelled_cases"] == metrics["calibration/cases/n"]
    assert metrics["Summary/labelled_claims"] == metrics["calibration/claims/n"]
    # The index names the segments of logged keys only: the headline names none.
    assert "Summary" not in json.loads(writer.files["metrics_index.json"])


def test_the_generation_headline_sums_the_reports():
    writer = generation_writer()
    metrics = writer.bundle.metrics
    assert metrics["Summary/cases"] == 2
    assert metrics["Summary/agreement"] == metrics["generation/overall_agreement"]
    assert metrics["Summary/fields_agreed"] == metrics["generation/fields_agreed"] == 2
    assert metrics["Summary/fields_to_review"] == 2  # one disputed, one omitted by all
    assert metrics["Summary/human_review_rate"] == 0.5
    assert "Summary" not in json.loads(writer.files["metrics_index.json"])


def test_figure_tables_read_back_as_the_old_keys():
    writer = fields_writer(CONFIDENT)
    figures, index = table_figures(writer.files["tables/fields.json"])
    assert figures["field/number/fd"] == 1
    assert figures["overall/tp"] == writer.bundle.metrics["overall/tp"]
    assert "field/number/far" not in figures  # undefined: never a number
    assert index["field"]["total"] == "$.total"
    with pytest.raises(ValueError, match="not a figure table"):
        table_figures(b"[1, 2]")


def old_snapshot(writer: BundleWriter) -> Any:
    """The run as the previous version logged it: every figure a metric, the headline
    under overall/ (split/), no figure tables."""
    snapshot = snapshot_from_writer(writer, run_id="new")
    renamed = {new: old for old, new in OLD_HEADLINE.items()}
    metrics = {renamed.get(key, key): value for key, value in snapshot.metrics.items()}
    old = BundleWriter(run_name="old")
    for key, value in metrics.items():
        old.metric(key, value)
    for path, data in writer.files.items():
        if not path.startswith("tables/"):
            old.files[path] = data
    old.bundle.tags.update(writer.bundle.tags)
    assert "overall/f1" in metrics or "split/page_accuracy" in metrics
    return snapshot_from_writer(old, run_id="old")


@pytest.mark.parametrize("make", [fields_writer, split_writer])
def test_old_and_new_runs_compare_figure_by_figure(make):
    writer = make()
    new = snapshot_from_writer(writer, run_id="new")
    old = old_snapshot(writer)
    assert old.metrics == new.metrics
    deltas = metric_deltas(old, new)
    assert not deltas[["baseline", "candidate"]].isna().any().any()
    assert deltas["scope"].iloc[0] == "Summary"  # the headline leads the comparison too


def test_split_runs_carry_the_verdict_and_a_dashboard(mlflow_store):
    report = evaluate_split_batch([({"id": "a", "sections": EXPECTED}, PREDICTED)])
    logged = log_split_report(report, verdict="fail", run_name="split-verdict")
    client = MlflowClient(mlflow_store)
    run = client.get_run(logged.run_id)
    assert run.data.tags["docevals.verdict"] == "fail"
    assert run.data.metrics["Summary/page_accuracy"] == pytest.approx(
        report.page_level_accuracy.accuracy
    )
    page = client.download_artifacts(logged.run_id, "report/dashboard.html")
    with open(page, encoding="utf-8") as handle:
        text = handle.read()
    assert "Document split evaluation dashboard" in text


def test_a_new_experiment_gets_a_saved_view_of_the_headline(mlflow_store):
    report = evaluate_split_batch([({"id": "a", "sections": EXPECTED}, PREDICTED)])
    logged = log_split_report(report, experiment="with-view")
    client = MlflowClient(mlflow_store)
    tags = client.get_experiment(logged.experiment_id).tags
    view = json.loads(tags["mlflow.sharedViewState.docevals-headline"])
    assert view["name"] == "docevals headline"
    assert isinstance(view["createdAt"], int)
    columns = json.loads(view["state"])["selectedColumns"]
    assert "metrics.`Summary/f1`" in columns
    assert "metrics.`Summary/page_accuracy`" in columns
    assert "metrics.`Summary/kappa`" in columns  # calibrations
    # The PPI++ estimate of the true pass rate sits beside the judge's and the humans'.
    human = columns.index("metrics.`Summary/human_pass_rate`")
    assert columns[human + 1] == "metrics.`Summary/corrected_pass_rate`"
    assert "metrics.`Summary/fields_to_review`" in columns  # generations
    # An experiment that already exists is left as it is.
    client.set_experiment_tag(logged.experiment_id, "mlflow.sharedViewState.docevals-headline", "x")
    log_split_report(report, experiment="with-view")
    tags = client.get_experiment(logged.experiment_id).tags
    assert tags["mlflow.sharedViewState.docevals-headline"] == "x"
