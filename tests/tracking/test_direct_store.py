"""The direct SQLite path writes what MLflow's client writes: the same bundles logged
both ways into two fresh stores give equal tables, artifacts and MLflow reads."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from docevals_mlflow import compare_documents
from docevals_mlflow.tracking import direct_store, direct_values, store_schema
from docevals_mlflow.tracking.assembly import assemble_fields
from docevals_mlflow.tracking.direct_schema import VERIFIED_REVISION, VERIFIED_TABLES
from docevals_mlflow.tracking.errors import TrackingError
from docevals_mlflow.tracking.options import RunOptions
from docevals_mlflow.tracking.runs import log_bundle
from docevals_mlflow.tracking.store import open_client
from docevals_mlflow.tracking.trace_records import (
    FeedbackRecord,
    SpanRecord,
    TraceRecord,
    write_traces,
)
from tests.tracking.invoices import SCHEMA
from tests.tracking.test_runs import DOCUMENTS

# Columns that differ between two loggings of the same bundle: ids and times.
_VOLATILE = {
    "run_uuid", "request_id", "trace_id", "assessment_id", "span_id", "parent_span_id",
    "dataset_uuid", "input_uuid", "source_id", "destination_id", "run_id", "artifact_uri",
    "timestamp", "timestamp_ms", "start_time", "end_time", "creation_time", "last_update_time",
    "created_timestamp", "last_updated_timestamp", "trace_timestamp_ms",
    "start_time_unix_nano", "end_time_unix_nano", "content", "assessment_metadata", "value",
}  # fmt: skip


def _bundle(tmp_path: Path, name: str, *, hand_edits: bool = False) -> Path:
    report = compare_documents(DOCUMENTS, SCHEMA).to_report()
    ground_truth = tmp_path / "gt.jsonl"
    ground_truth.write_text("{}\n", encoding="utf-8")
    run = assemble_fields(report, RunOptions(ground_truth=ground_truth, traces="all"))
    folder = run.writer.write(tmp_path / "bundles" / name)
    write_traces(folder, run.traces or [])
    if hand_edits:  # as an older version or a person wrote it
        manifest = json.loads((folder / "run.json").read_text(encoding="utf-8"))
        manifest["params"]["notes"] = "é" * 7000
        manifest["metrics"]["odd~2"] = 2.0
        (folder / "run.json").write_text(json.dumps(manifest), encoding="utf-8")
    return folder


def _pipeline_bundle(tmp_path: Path) -> Path:
    folder = _bundle(tmp_path, "pipeline")
    stages = [
        SpanRecord("extract", "PARSER", {"pages": 1}, {"total": 3}),
        SpanRecord("total", "CHAIN", {"total": 3}, {"ok": False}, parent=0, error="mismatch"),
    ]
    records = [
        TraceRecord(
            "pipeline p1",
            {"case": "p1"},
            {"verdict": "fail"},
            expectations={"total": 4},
            feedback=[FeedbackRecord("verdict", "no", "stage total failed", {"stage": "total"})],
            spans=stages,
            tags={"docevals.case.id": "p1"},
            failed=True,
        )
    ]
    write_traces(folder, records)
    return folder


def _log(folder: Path, uri: str, experiment: str, run_name: str, monkeypatch, *, direct: bool):
    monkeypatch.setenv(direct_store.SWITCH_VARIABLE, "1" if direct else "0")
    copy = folder.parent / f"{folder.name}-{'d' if direct else 'm'}-{experiment}"
    shutil.copytree(folder, copy)
    return log_bundle(copy, tracking_uri=uri, experiment=experiment, run_name=run_name)


def _store(tmp_path: Path, name: str) -> tuple[str, Path]:
    path = tmp_path / name / "mlflow.db"
    uri = f"sqlite:///{path.as_posix()}"
    open_client(uri)  # MLflow creates the store; the direct path writes existing ones
    MlflowClient(uri).create_experiment(
        "existing", artifact_location=(path.parent / "art" / "existing").as_uri()
    )
    return uri, path


def _tables(path: Path) -> dict[str, list[tuple[object, ...]]]:
    found: dict[str, list[tuple[object, ...]]] = {}
    with sqlite3.connect(path) as connection:
        names = [
            row[0]
            for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")
        ]
        for table in sorted(names):
            cursor = connection.execute(f"SELECT * FROM {table}")
            columns = [column[0] for column in cursor.description]
            rows = [
                tuple(
                    (name, _normal(name, value))
                    for name, value in zip(columns, row, strict=True)
                    if name not in _VOLATILE or table in {"params", "tags", "experiment_tags"}
                )
                for row in cursor.fetchall()
            ]
            found[table] = sorted(rows, key=repr)
    return found


def _normal(name: str, value: object) -> object:
    if isinstance(value, str):
        for store in ("/through-mlflow/", "/direct/"):
            value = value.replace(store, "/<store>/")
    if isinstance(value, str) and len(value) == 32 and all(c in "0123456789abcdef" for c in value):
        return "<id>"
    if name == "value" and isinstance(value, str) and '"createdAt"' in value:
        view = json.loads(value)
        return {**view, "createdAt": 0, "updatedAt": 0}
    return value


def _artifacts(root: Path) -> dict[str, bytes]:
    files = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            parts = path.relative_to(root).parts
            # The run's folder is its id.
            files["/".join(p if len(p) != 32 else "<run>" for p in parts)] = path.read_bytes()
    return files


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    # Built once for the module (logging six bundles into two new stores takes
    # seconds): the tests that use it only read the two stores.
    tmp_path = tmp_path_factory.mktemp("stores")
    with pytest.MonkeyPatch.context() as monkeypatch:
        # Module fixtures start before the suite's per-test environment: set it here.
        monkeypatch.setenv("DOCEVALS_NO_MLFLOW", "1")
        for name in (
            "MLFLOW_TRACKING_URI",
            "MLFLOW_RUN_ID",
            "MLFLOW_EXPERIMENT_NAME",
            "MLFLOW_EXPERIMENT_ID",
        ):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.chdir(tmp_path)
        mlflow_uri, mlflow_path = _store(tmp_path, "through-mlflow")
        direct_uri, direct_path = _store(tmp_path, "direct")
        bundles = [
            (_bundle(tmp_path, "fields"), "new-experiment", "fields receipts"),
            (_pipeline_bundle(tmp_path), "existing", "pipeline p1"),
            (_bundle(tmp_path, "edited", hand_edits=True), "new-experiment", "edited"),
        ]
        logged = []
        for folder, experiment, name in bundles:
            through = _log(folder, mlflow_uri, experiment, name, monkeypatch, direct=False)
            direct = _log(folder, direct_uri, experiment, name, monkeypatch, direct=True)
            logged.append((through, direct))
    return (mlflow_uri, mlflow_path), (direct_uri, direct_path), logged


def test_every_table_holds_the_same_rows(stores):
    (_, mlflow_path), (_, direct_path), _ = stores
    through, direct = _tables(mlflow_path), _tables(direct_path)
    assert through.keys() == direct.keys()
    for table in through:
        assert direct[table] == through[table], table
    assert through["trace_info"]
    assert through["inputs"]
    assert through["experiment_tags"]


def test_the_artifact_trees_are_equal(stores):
    (_, mlflow_path), (_, direct_path), _ = stores
    through = _artifacts(mlflow_path.parent / "mlruns") | _artifacts(mlflow_path.parent / "art")
    direct = _artifacts(direct_path.parent / "mlruns") | _artifacts(direct_path.parent / "art")
    assert through == direct
    assert any(name.endswith("params/notes.txt") for name in direct) or len(direct) > 5


def test_mlflow_reads_both_the_same(stores):
    (mlflow_uri, _), (direct_uri, _), logged = stores
    for through, direct in logged:
        a = MlflowClient(mlflow_uri).get_run(through.run_id)
        b = MlflowClient(direct_uri).get_run(direct.run_id)
        assert a.data.params == b.data.params
        assert a.data.metrics.keys() == b.data.metrics.keys()
        assert dict(a.data.tags.items()) == dict(b.data.tags.items())
        assert (a.info.status, a.info.run_name) == (b.info.status, b.info.run_name)
        assert [d.dataset.digest for d in a.inputs.dataset_inputs] == [
            d.dataset.digest for d in b.inputs.dataset_inputs
        ]
        traces = [
            MlflowClient(uri).search_traces(
                locations=[run.experiment_id],
                filter_string=f"metadata.`mlflow.sourceRun` = '{run.run_id}'",
            )
            for uri, run in ((mlflow_uri, through), (direct_uri, direct))
        ]
        assert len(traces[0]) == len(traces[1]) > 0
        shape = [
            sorted((x.name, str(x.value)) for x in trace.info.assessments)
            for trace in sorted(traces[1], key=lambda t: t.info.request_preview)
        ]
        assert shape == [
            sorted((x.name, str(x.value)) for x in trace.info.assessments)
            for trace in sorted(traces[0], key=lambda t: t.info.request_preview)
        ]
        assert [len(t.data.spans) for t in traces[0]] == [len(t.data.spans) for t in traces[1]]
    for uri in (mlflow_uri, direct_uri):
        experiment = MlflowClient(uri).get_experiment_by_name("new-experiment")
        assert "mlflow.sharedViewState.docevals-headline" in experiment.tags
        runs = MlflowClient(uri).search_runs([experiment.experiment_id], "metrics.`Summary/f1` > 0")
        assert len(runs) == 2


def test_the_verified_revision_is_the_installed_mlflow_s(monkeypatch):
    assert store_schema.migration_revisions()[0] == VERIFIED_REVISION
    assert store_schema._loaded_revisions()[0] == VERIFIED_REVISION
    assert store_schema.expected_tables() == VERIFIED_TABLES


def test_the_value_rules_are_mlflow_s():
    from mlflow.store.tracking.utils import trace_analytics as mlflow_rules

    values = [0, 1, 2.5, True, False, "yes", " No ", "x", None, float("inf"), 10**400, [1]]
    for value in values:
        assert direct_values.assessment_aggregate(value) == mlflow_rules.assessment_aggregate(value)
        assert direct_values.finite_float_or_none(value) == mlflow_rules.finite_float_or_none(value)
        assert direct_values.token_count_or_none(value) == mlflow_rules.token_count_or_none(value)
        assert direct_values.bounded_model_dimension(value) == (
            mlflow_rules.bounded_model_dimension(value)
        )
    metadata = {
        "mlflow.trace.tokenUsage": json.dumps({"input_tokens": 3, "total_tokens": 5.0}),
        "mlflow.trace.cost": json.dumps({"total_cost": 0.25, "input_cost": "x"}),
        "mlflow.trace.session": "s1",
    }
    assert direct_values.analytics_columns(metadata) == (
        mlflow_rules.analytics_columns_from_metadata(metadata)
    )
    assert direct_values.PROMOTED_METADATA_KEYS == mlflow_rules.PROMOTED_TRACE_METADATA_KEYS
    from mlflow.utils.uri import append_to_uri_path

    for location in ("file:///tmp/a b/mlruns/x", "/tmp/mlruns/1"):
        assert direct_values.local_artifact_folder(location) is not None
        assert direct_values.append_to_location(location, "r", "artifacts") == (
            append_to_uri_path(location, "r", "artifacts")
        )
    for location in ("s3://bucket/x", "file:///tmp/x/", "file:///tmp/%20", "file:///a/../b"):
        assert direct_values.local_artifact_folder(location) is None


def _runs(path: Path) -> int:
    with sqlite3.connect(path) as connection:
        return int(connection.execute("SELECT count(*) FROM runs").fetchone()[0])


def test_a_failure_mid_write_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    uri, path = _store(tmp_path, "failing")
    folder = _bundle(tmp_path, "fields")
    shutil.copytree(folder, tmp_path / "first")
    log_bundle(tmp_path / "first", tracking_uri=uri, experiment="existing", run_name="ok")
    before, files = _tables(path), _artifacts(path.parent / "art")

    def broken(*args, **kwargs):
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(direct_store, "insert_inputs", broken)
    with pytest.raises(TrackingError, match=r"disk I/O error.*nothing was logged"):
        log_bundle(folder, tracking_uri=uri, experiment="new-one", run_name="r")
    assert _tables(path) == before
    assert not (path.parent / "mlruns").exists()
    with pytest.raises(TrackingError, match=r"disk I/O error.*nothing was logged"):
        log_bundle(folder, tracking_uri=uri, experiment="existing", run_name="r")
    assert _tables(path) == before
    assert _artifacts(path.parent / "art") == files
    assert not (folder / "logged.json").exists()


def _older() -> str:
    head, known = store_schema.migration_revisions()
    return sorted(known - {head})[0]


def test_other_stores_take_mlflow_s_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    uri, path = _store(tmp_path, "other")
    folder = _bundle(tmp_path, "fields")
    written = []
    real = direct_store.write_direct

    def spy(*args, **kwargs):
        result = real(*args, **kwargs)
        written.append(result)
        return result

    monkeypatch.setattr(direct_store, "write_direct", spy)
    # An experiment whose artifact location is not one the direct path copes with.
    odd = (tmp_path / "odd").as_uri() + "/"
    MlflowClient(uri).create_experiment("odd", artifact_location=odd)
    logged = log_bundle(folder, tracking_uri=uri, experiment="odd", run_name="r")
    assert written == [None]
    assert MlflowClient(uri).get_run(logged.run_id).info.status == "FINISHED"
    # A store at another revision: left to MLflow, which refuses it as before.
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE alembic_version SET version_num = ?", (_older(),))
    with pytest.raises(TrackingError, match="older than this MLflow"):
        log_bundle(folder, tracking_uri=uri, experiment="new", run_name="r")
    assert written == [None, None]


def test_a_failed_direct_write_keeps_the_bundle_like_mlflow_s_path(tmp_path, monkeypatch):
    from docevals_mlflow.tracking.runs import kept_bundle, log_writer

    monkeypatch.chdir(tmp_path)
    uri, _ = _store(tmp_path, "kept")
    report = compare_documents(DOCUMENTS, SCHEMA).to_report()
    run = assemble_fields(report, RunOptions(run_name="kept"))

    def broken(*args, **kwargs):
        raise sqlite3.OperationalError("database disk image is malformed")

    monkeypatch.setattr(direct_store, "finish_run", broken)
    with pytest.raises(TrackingError) as caught:
        log_writer(run.writer, tracking_uri=uri, experiment="e", keep_bundle_at=tmp_path / "kept")
    assert "\n" not in caught.value.message
    kept = kept_bundle(caught.value)
    assert kept is not None
    assert (kept / "run.json").is_file()
