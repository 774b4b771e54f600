"""Every key, name and value MLflow accepts, from any input, through a real store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mlflow.tracking import MlflowClient
from mlflow.utils.validation import (
    _validate_experiment_name,
    _validate_metric_name,
    _validate_param,
    _validate_tag,
)

from docevals_mlflow import (
    EvaluationCase,
    ExactStructuredMetric,
    PipelineCase,
    PipelineEvaluator,
    artifact_from_value,
    compare_documents,
)
from docevals_mlflow.tracking.bundle import (
    ARTIFACTS,
    MANIFEST,
    METRICS_INDEX,
    BundleWriter,
    RunBundle,
)
from docevals_mlflow.tracking.bundle_folders import read_bundle
from docevals_mlflow.tracking.keys import (
    MAX_EXPERIMENT_NAME_LENGTH,
    MAX_KEY_LENGTH,
    MAX_RUN_NAME_LENGTH,
    MAX_SEGMENT_LENGTH,
    KeyMap,
    KeyNames,
    legal_experiment_name,
    legal_key,
    legal_run_name,
    legal_tag_value,
)
from docevals_mlflow.tracking.layout import layout_evaluation, layout_fields
from docevals_mlflow.tracking.runs import TrackingError, log_bundle

# Any text at all, lone surrogates and NUL included: what a key, name or value is made
# from comes from user files (JSON may hold "\ud800").
ANY_CHARACTER = st.characters(exclude_categories=())
ANY_TEXT = st.text(ANY_CHARACTER, min_size=1, max_size=300)
# Names that also go into Parquet tables and reports: any Unicode string (NUL and
# control characters included), but no lone surrogates, which Parquet cannot store.
NAME = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=300)
LONG_NAME = st.one_of(NAME, st.text(min_size=240, max_size=400))


def index_of(client: MlflowClient, run_id: str, folder: Path) -> dict[str, dict[str, str]]:
    path = client.download_artifacts(run_id, METRICS_INDEX, str(folder))
    index: dict[str, dict[str, str]] = json.loads(Path(path).read_text(encoding="utf-8"))
    return index


def assert_index_names_the_logged_keys(
    index: dict[str, dict[str, str]], metrics: dict[str, float]
) -> None:
    # The namespaces whose segment is the second part of every key they make.
    for namespace in ("field", "class", "list"):
        logged = {key.split("/")[1] for key in metrics if key.startswith(f"{namespace}/")}
        indexed = set(index.get(namespace, {}))
        if namespace == "field":
            # A list template is a field too; its own cells are under list/.
            indexed -= set(index.get("list", {})) - logged
        assert logged == indexed, namespace


def fields_run(
    folder: Path, fields: dict[str, str], class_name: str, document: str, params: dict[str, str]
) -> tuple[BundleWriter, Path]:
    predicted = {
        name: value + "x" if i % 2 else value for i, (name, value) in enumerate(fields.items())
    }
    report = compare_documents(
        [{"id": document, "class": class_name, "expected": fields, "predicted": predicted}]
    ).to_report()
    writer = BundleWriter(run_name=document)
    layout_fields(writer, report, markdown="# r\n", dashboard="<html></html>")
    writer.extras(params=params, tags=params)
    return writer, writer.write(folder)


def case_run(folder: Path, case_id: str, params: dict[str, str]) -> tuple[BundleWriter, Path]:
    stage = EvaluationCase(
        case_id=case_id,
        stage_id="extract",
        operation="extract",
        prediction={"total": 3},
        references=[artifact_from_value({"total": 4}, authority="ground_truth", artifact_id="gt")],
    )
    report = PipelineEvaluator(operation_metrics={"extract": [ExactStructuredMetric()]}).evaluate(
        PipelineCase(pipeline_id=case_id, stages=[stage])
    )
    writer = BundleWriter(run_name=case_id)
    layout_evaluation(writer, report.stage_reports[0], markdown="", dashboard="")
    writer.extras(params=params)
    return writer, writer.write(folder)


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    fields=st.dictionaries(LONG_NAME, st.text(max_size=20), min_size=1, max_size=4),
    class_name=LONG_NAME,
    document=NAME,
    case_id=st.one_of(NAME, st.just("c" * 10_000)),
    params=st.dictionaries(ANY_TEXT, st.text(ANY_CHARACTER, max_size=7000), max_size=3),
)
def test_any_input_is_logged_and_indexed_exactly(
    mlflow_store, tmp_path_factory, fields, class_name, document, case_id, params
):
    client = MlflowClient(mlflow_store)
    folder = tmp_path_factory.mktemp("legal")
    for made, kind in (
        (fields_run(folder / "fields", fields, class_name, document, params), "fields"),
        (case_run(folder / "case", case_id, params), "case"),
    ):
        writer, bundle = made
        logged = log_bundle(bundle, experiment="legal names")
        run = client.get_run(logged.run_id)
        assert run.info.status == "FINISHED"
        # run.json holds exactly what was logged: nothing renamed or dropped on the way.
        assert run.data.metrics == writer.bundle.metrics
        assert run.data.params == writer.bundle.params
        for key, value in writer.bundle.tags.items():
            assert run.data.tags[key] == value
        assert len(run.info.run_name) <= MAX_RUN_NAME_LENGTH
        index = index_of(client, logged.run_id, folder / f"{kind}-download")
        if kind == "fields":
            assert_index_names_the_logged_keys(index, run.data.metrics)
            assert set(index["class"].values()) == {class_name}
        for key in run.data.metrics:
            assert "~" not in key


@given(ANY_TEXT)
def test_every_key_passes_mlflow_validation(text):
    key = legal_key(text)
    _validate_metric_name(key)
    _validate_param(key, "v")
    _validate_tag(key, "v")
    assert len(key) <= MAX_KEY_LENGTH
    assert legal_key(key) == key
    assert "~" not in key


@given(st.lists(ANY_TEXT, min_size=1, max_size=6))
def test_key_map_segments_are_short_legal_and_distinct(names):
    keys = KeyMap()
    segments = [keys.named("class", name) for name in names]
    assert len(set(segments)) == len(set(names))
    for segment in segments:
        assert len(segment) <= MAX_SEGMENT_LENGTH
        assert "/" not in segment
        # Two segments with the longest layout prefix still make a whole key.
        key = f"compare/{segment}/field/{segment}/p_adjusted"
        assert legal_key(key) == key


@given(st.lists(ANY_TEXT, min_size=1, max_size=6))
def test_key_names_never_merge_two_sources(sources):
    names = KeyNames()
    keys = [names.key(source) for source in sources]
    assert len(set(keys)) == len(set(sources))
    for key in keys:
        _validate_metric_name(key)
        assert len(key) <= MAX_KEY_LENGTH


@given(ANY_TEXT)
def test_names_and_values_pass_mlflow_validation(text):
    name = legal_run_name(text)
    assert name is not None
    assert len(name) <= MAX_RUN_NAME_LENGTH
    experiment = legal_experiment_name(text)
    _validate_experiment_name(experiment)
    assert len(experiment) <= MAX_EXPERIMENT_NAME_LENGTH
    value = legal_tag_value(text * 40)
    _validate_tag("t", value)
    assert len(value) <= 8000
    value.encode("utf-8")


def test_a_long_field_name_is_logged_and_its_index_names_the_key(mlflow_store, tmp_path):
    # The finding: a ~240-character field name made MLflow refuse the whole run.
    name = "Betrag inklusive Mehrwertsteuer " * 8
    _, bundle = fields_run(tmp_path / "b", {name: "1", "total": "2"}, "Invoice", "d", {})
    logged = log_bundle(bundle)
    client = MlflowClient(mlflow_store)
    run = client.get_run(logged.run_id)
    index = index_of(client, logged.run_id, tmp_path / "d")
    (segment,) = (key for key, source in index["field"].items() if source != "$.total")
    assert segment.startswith("Betrag inklusive")
    assert "_h" in segment
    assert f"field/{segment}/f1" in run.data.metrics
    assert_index_names_the_logged_keys(index, run.data.metrics)


def test_colliding_fields_get_legal_suffixes_in_keys_and_index(mlflow_store, tmp_path):
    _, bundle = fields_run(tmp_path / "b", {"a:b": "1", "a_b": "2"}, "K", "d", {})
    logged = log_bundle(bundle)
    client = MlflowClient(mlflow_store)
    index = index_of(client, logged.run_id, tmp_path / "d")
    assert sorted(index["field"]) == ["a_b", "a_b_2"]
    metrics = client.get_run(logged.run_id).data.metrics
    assert "field/a_b_2/f1" in metrics


def test_a_ten_thousand_character_case_id_is_logged(mlflow_store, tmp_path):
    case_id = "case-" + "x" * 10_000
    _, bundle = case_run(tmp_path / "b", case_id, {})
    run = MlflowClient(mlflow_store).get_run(log_bundle(bundle).run_id)
    assert run.info.status == "FINISHED"
    assert run.info.run_name.startswith("case-xxx")
    assert len(run.info.run_name) <= 250
    # The full id is kept: too long for a param, it is an artifact with its hash.
    assert run.data.params["case.id"].startswith("sha256:")
    (dataset,) = run.inputs.dataset_inputs
    assert len(dataset.dataset.name) <= 500


def old_bundle(folder: Path) -> Path:
    """A bundle as the previous version kept it: keys with ``~``, an index with ``~2``."""
    bundle = RunBundle(
        run_name="old",
        params={"docevals.version": "0.9", "x" * 10: "1"},
        metrics={
            "field/a.b/tp": 1.0,
            "field/a.b~2/tp": 2.0,
            "field/" + "y" * 237 + "~0123456789ab": 3,
        },
        tags={"docevals.kind": "evaluation", "t~ag": "v" * 9000},
    )
    (folder / ARTIFACTS).mkdir(parents=True)
    (folder / MANIFEST).write_text(bundle.model_dump_json(), encoding="utf-8")
    index = {"field": {"a.b": "$.a.b", "a.b~2": "$['a.b']"}}
    (folder / ARTIFACTS / METRICS_INDEX).write_text(json.dumps(index), encoding="utf-8")
    return folder


def test_a_bundle_kept_by_the_previous_version_is_logged(mlflow_store, tmp_path):
    logged = log_bundle(old_bundle(tmp_path / "old.run"))
    client = MlflowClient(mlflow_store)
    run = client.get_run(logged.run_id)
    assert run.info.status == "FINISHED"
    assert run.data.metrics["field/a.b_2/tp"] == 2.0
    assert all("~" not in key for key in run.data.metrics)
    assert len(run.data.tags["t_ag"]) <= 8000
    # The index is rewritten to name the keys as logged.
    assert index_of(client, logged.run_id, tmp_path / "d") == {
        "field": {"a.b": "$.a.b", "a.b_2": "$['a.b']"}
    }


def test_a_refused_run_is_marked_failed_and_deleted_and_the_bundle_stays(
    mlflow_store, tmp_path, monkeypatch
):
    from mlflow.exceptions import MlflowException

    _, bundle = fields_run(tmp_path / "b", {"total": "1"}, "K", "d", {})
    before = sorted(path.relative_to(bundle) for path in bundle.rglob("*"))

    def refuse(*args, **kwargs):
        raise MlflowException("the store refused the metrics")

    monkeypatch.setattr(MlflowClient, "log_batch", refuse)
    monkeypatch.setenv("DOCEVALS_DIRECT_STORE", "0")  # MLflow's path (its refusals)
    with pytest.raises(TrackingError, match="marked FAILED and deleted"):
        log_bundle(bundle, experiment="refused")
    client = MlflowClient(mlflow_store)
    experiment = client.get_experiment_by_name("refused")
    from mlflow.entities import ViewType

    runs = client.search_runs([experiment.experiment_id], run_view_type=ViewType.ALL)
    assert [(run.info.status, run.info.lifecycle_stage) for run in runs] == [("FAILED", "deleted")]
    assert sorted(path.relative_to(bundle) for path in bundle.rglob("*")) == before
    read_bundle(bundle)


def test_a_continued_run_that_fails_is_marked_failed_not_deleted(
    mlflow_store, tmp_path, monkeypatch
):
    from mlflow.exceptions import MlflowException

    client = MlflowClient(mlflow_store)
    experiment_id = client.create_experiment("continued")
    run_id = client.create_run(experiment_id).info.run_id
    _, bundle = fields_run(tmp_path / "b", {"total": "1"}, "K", "d", {})

    def refuse(*args, **kwargs):
        raise MlflowException("no artifacts today")

    monkeypatch.setattr(MlflowClient, "log_artifacts", refuse)
    with pytest.raises(TrackingError, match=f"run {run_id} was marked FAILED"):
        log_bundle(bundle, run_id=run_id)
    run = client.get_run(run_id)
    assert (run.info.status, run.info.lifecycle_stage) == ("FAILED", "active")
