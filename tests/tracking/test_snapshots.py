"""Runs loaded from a temporary SQLite store (and from bundles and reports) as snapshots."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docevals_mlflow import (
    compare_documents,
    compare_runs,
    load_run_snapshot,
    log_field_comparison,
)
from docevals_mlflow.errors import InputError, InputFileNotFoundError
from docevals_mlflow.tracking.bundle import BundleWriter
from docevals_mlflow.tracking.layout import layout_fields
from docevals_mlflow.tracking.runs import TrackingUnavailableError
from tests.tracking.evaluations import log_panel_run, panel_report
from tests.tracking.invoices import SCHEMA


def documents(wrong_total: bool) -> list[dict[str, object]]:
    return [
        {
            "id": "a",
            "class": "Invoice",
            "expected": {"number": "1", "total": "10.00", "lines": [{"sku": "X"}]},
            "predicted": {
                "number": "1",
                "total": 99 if wrong_total else 10,
                "lines": [{"sku": "X"}],
            },
        },
        {
            "id": "b",
            "class": "Invoice",
            "expected": {"number": "2", "total": "5.00", "lines": [{"sku": "Y"}, {"sku": "Z"}]},
            "predicted": {"number": "3", "total": 5, "lines": [{"sku": "Z"}]},
        },
    ]


def log_fields(
    name: str,
    *,
    wrong_total: bool,
    experiment: str = "extraction",
    ground_truth: Path | None = None,
) -> str:
    batch = compare_documents(documents(wrong_total), SCHEMA)
    logged = log_field_comparison(
        batch, run_name=name, experiment=experiment, ground_truth=ground_truth
    )
    return logged.run_id


def test_a_field_run_loads_with_its_tables(mlflow_store, tmp_path):
    expected = tmp_path / "expected.jsonl"
    expected.write_text('{"id": "a", "data": {"number": "1"}}\n', encoding="utf-8")
    run_id = log_fields("v1", wrong_total=True, ground_truth=expected)
    snapshot = load_run_snapshot(run_id)
    assert list(snapshot.datasets) == ["expected"]
    assert len(snapshot.datasets["expected"]) == 32
    assert snapshot.run_id == run_id
    assert snapshot.run_name == "v1"
    assert snapshot.experiment == "extraction"
    assert snapshot.report_kind == "fields"
    assert snapshot.params["schema.id"] == "invoices"
    assert snapshot.metrics["Summary/documents"] == 2
    # Figures kept in the run's figure tables come back as keys, for comparisons.
    assert snapshot.metrics["field/total/fd"] == 1
    assert snapshot.metrics["overall/tp"] == 4
    documents_table = snapshot.documents
    assert documents_table is not None
    assert documents_table.document_id == ["a", "b"]
    assert documents_table.document_class == ["Invoice", "Invoice"]
    # a: number TP, total FD, sku TP. b: number FD, total TP, Z TP, Y missed.
    assert documents_table.tp == [2, 2]
    assert documents_table.fd == [1, 1]
    assert documents_table.fn == [0, 1]
    fields = snapshot.fields
    assert fields is not None
    cells = {
        (doc, field): (tp, fd, fn)
        for doc, field, tp, fd, fn in zip(
            fields.document_id, fields.field, fields.tp, fields.fd, fields.fn, strict=True
        )
    }
    assert cells["a", "$.total"] == (0, 1, 0)
    assert cells["b", "$.lines[].sku"] == (1, 0, 1)
    assert snapshot.metrics_index["field"]["lines.sku"] == "$.lines[].sku"
    assert snapshot.cases is None
    assert snapshot.votes is None


def test_runs_are_found_by_name(mlflow_store):
    log_fields("v1", wrong_total=True)
    newer = log_fields("v1", wrong_total=False)  # the same name again: the newest wins
    log_fields("other", wrong_total=False, experiment="elsewhere")
    assert load_run_snapshot("extraction/v1").run_id == newer
    assert load_run_snapshot("v1").run_id == newer
    assert load_run_snapshot("other", experiment="elsewhere").run_name == "other"
    log_fields("v1", wrong_total=False, experiment="elsewhere")
    with pytest.raises(InputError, match="several experiments"):
        load_run_snapshot("v1")
    assert load_run_snapshot("v1", experiment="extraction").run_id == newer
    with pytest.raises(InputError, match="no run of that id or name"):
        load_run_snapshot("missing")
    with pytest.raises(InputError, match="has no run named"):
        load_run_snapshot("extraction/missing")
    with pytest.raises(InputError, match="no such run"):
        load_run_snapshot("0" * 32)


def test_loaded_field_runs_compare(mlflow_store):
    first = load_run_snapshot(log_fields("v1", wrong_total=True))
    second = load_run_snapshot(log_fields("v2", wrong_total=False))
    (pair,) = compare_runs(first, second, resamples=200).pairs
    effects = pair.effects.set_index(["family", "unit"])
    # $.total: a FD and b TP (F1 2/3), then both TP.
    assert effects.loc[("field", "$.total"), "baseline"] == pytest.approx(2 / 3)
    assert effects.loc[("field", "$.total"), "candidate"] == pytest.approx(1.0)
    # Two documents cannot make anything significant.
    assert not pair.effects["significant"].any()
    flips = pair.flips.set_index("id")
    assert list(flips.index) == ["a"]  # b keeps its wrong number and missed line
    assert flips.loc["a", "why"] == "$.total errors 1→0"
    assert pair.metrics.set_index("key").loc["field/total/f1", "delta"] == pytest.approx(1 / 3)


def test_a_judged_pipeline_run_loads_with_votes_specs_and_panel(mlflow_store, tmp_path):
    votes = {
        "a": {"s1": "correct", "s2": "correct", "s3": "incorrect", "s4": "correct"},
        "b": {"s1": "correct", "s2": "incorrect", "s3": "incorrect", "s4": "correct"},
        "c": {"s1": "correct", "s2": "correct", "s3": "incorrect", "s4": "incorrect"},
    }
    logged = log_panel_run(tmp_path, panel_report(votes), name="panel-v1")
    snapshot = load_run_snapshot(logged.run_id)
    cases = snapshot.cases
    assert cases is not None
    assert list(zip(cases.stage_id, cases.verdict, strict=True)) == [
        ("s1", "pass"),
        ("s2", "pass"),
        ("s3", "fail"),
        ("s4", "pass"),
    ]
    table = snapshot.votes
    assert table is not None
    by_member = {
        (stage, member): verdict
        for stage, member, verdict in zip(table.stage_id, table.member, table.verdict, strict=True)
    }
    assert by_member["s2", "b"] == "fail"
    assert by_member["s1", "a"] == "pass"
    assert set(table.provider) == {"a", "b", "c"}
    assert snapshot.operations is not None
    (variant,) = snapshot.operations["extract"]["variants"].values()
    assert variant["action_instruction"] == "Extract the total."
    assert snapshot.panels is not None
    assert [member["name"] for member in snapshot.panels["panel"]["variants"]] == ["a", "b", "c"]


def test_judged_runs_compare_with_the_votes_that_flipped(mlflow_store, tmp_path):
    before = {
        "a": {"s1": "correct", "s2": "correct", "s3": "incorrect", "s4": "correct"},
        "b": {"s1": "correct", "s2": "correct", "s3": "incorrect", "s4": "correct"},
        "c": {"s1": "correct", "s2": "correct", "s3": "incorrect", "s4": "correct"},
    }
    after = {
        "a": {"s1": "correct", "s2": "correct", "s3": "correct", "s4": "correct"},
        "b": {"s1": "correct", "s2": "correct", "s3": "correct", "s4": "correct"},
        "c": {"s1": "correct", "s2": "correct", "s3": "incorrect", "s4": "correct"},
    }
    first = log_panel_run(tmp_path, panel_report(before), name="v1")
    log_panel_run(
        tmp_path,
        panel_report(
            after,
            action="Extract the total, in the invoice currency.",
            criteria=("the total matches", "the currency is kept"),
            models={"c": "c-2"},
        ),
        name="v2",
    )
    comparison = compare_runs(
        load_run_snapshot(first.run_id), load_run_snapshot("judged/v2"), resamples=200
    )
    (pair,) = comparison.pairs
    flips = pair.flips.set_index("stage")
    assert list(flips.index) == ["s3"]
    assert flips.loc["s3", "change"] == "fixed"
    assert flips.loc["s3", "why"] == "panel/a: fail→pass; panel/b: fail→pass"
    (operation,) = pair.changes.operations
    assert operation.status == "changed"
    assert operation.criteria_added == ["the currency is kept"]
    assert "+Extract the total, in the invoice currency." in operation.diffs[0].diff
    (panel,) = pair.changes.panels
    changed = {member.name: member.changed for member in panel.members if member.changed}
    assert changed == {"c": ["model", "group"]}
    judges = pair.judges.set_index("member")
    assert judges.loc["a", "votes_changed"] == 1
    assert judges.loc["c", "votes_changed"] == 0
    overall = pair.effects.set_index("unit").loc["all cases"]
    assert overall["detail"] == "1 fixed, 0 broken"
    assert overall["p_value"] == pytest.approx(1.0)


def test_bundles_and_report_files_load_without_mlflow(tmp_path, monkeypatch):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://127.0.0.1:9")  # never contacted
    report = compare_documents(documents(wrong_total=True), SCHEMA).to_report()
    writer = BundleWriter(run_name="kept")
    layout_fields(writer, report, markdown="", dashboard="")
    folder = writer.write(tmp_path / "kept.run")
    from_bundle = load_run_snapshot(folder)
    assert from_bundle.run_name == "kept"
    assert from_bundle.documents is not None
    assert from_bundle.documents.document_id == ["a", "b"]
    path = tmp_path / "prompt-v1.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    from_report = load_run_snapshot(path)
    assert from_report.run_name == "prompt-v1"
    assert from_report.fields == from_bundle.fields
    pipeline = tmp_path / "pipeline.json"
    pipeline.write_text(
        panel_report({"a": dict.fromkeys(("s1", "s2", "s3", "s4"), "correct")}).model_dump_json(),
        encoding="utf-8",
    )
    judged = load_run_snapshot(pipeline)
    assert judged.votes is not None
    assert len(judged.votes) == 4
    broken = tmp_path / "broken.json"
    broken.write_text('{"kind": "fields"}', encoding="utf-8")
    with pytest.raises(InputError, match="not a complete field comparison report"):
        load_run_snapshot(broken)
    with pytest.raises(TrackingUnavailableError):
        load_run_snapshot("some-run-name")
    with pytest.raises(InputFileNotFoundError, match="report not found"):
        load_run_snapshot(tmp_path / "typo.json")


def test_a_run_without_results_cannot_be_compared(mlflow_store, tmp_path):
    from docevals_mlflow.tracking.runs import log_bundle

    writer = BundleWriter(run_name="bare")
    writer.param("x", "1")
    logged = log_bundle(writer.write(tmp_path / "bare"))
    snapshot = load_run_snapshot(logged.run_id)
    with pytest.raises(InputError, match="no per-document or per-case results"):
        compare_runs(snapshot, snapshot)
    assert Path(tmp_path / "bare" / "run.json").is_file()
