"""Documents as MLflow traces linked to their field run, against temporary SQLite stores."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from docevals_mlflow import compare_documents
from docevals_mlflow.errors import InputError
from docevals_mlflow.tracking import trace_store
from docevals_mlflow.tracking.assembly import assemble_fields, log_assembled
from docevals_mlflow.tracking.options import RunOptions
from docevals_mlflow.tracking.runs import log_bundle
from docevals_mlflow.tracking.trace_policy import TracePolicy, parse_trace_policy
from docevals_mlflow.tracking.trace_records import (
    TRACES_FILE,
    FeedbackRecord,
    SpanRecord,
    TraceRecord,
    read_traces,
    write_traces,
)
from tests.tracking.invoices import SCHEMA
from tests.tracking.test_runs import DOCUMENTS


@pytest.fixture(autouse=True)
def _store_is_migrated(migrated_store: str) -> None:
    """The store the tests name (tmp_path/mlflow.db) is a copy of one migrated once
    per session: MLflow's migrations cost seconds per new store."""


def _uri(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path.as_posix()}/mlflow.db"


def _run_traces(uri: str, run_id: str, experiment_id: str) -> list:
    client = MlflowClient(uri)
    found = client.search_traces(
        locations=[experiment_id], filter_string=f"metadata.`mlflow.sourceRun` = '{run_id}'"
    )
    return sorted(found, key=lambda trace: trace.info.request_preview)


def _log(tmp_path: Path, traces: object = None) -> tuple[str, object]:
    report = compare_documents(DOCUMENTS, SCHEMA).to_report()
    uri = _uri(tmp_path)
    ground_truth = tmp_path / "gt.jsonl"
    ground_truth.write_text("{}\n", encoding="utf-8")
    options = RunOptions(tracking_uri=uri, ground_truth=ground_truth, traces=traces)
    return uri, log_assembled(assemble_fields(report, options))


@pytest.mark.parametrize(("policy", "count"), [("all", 2), ("errors", 1), ("1", 1), ("none", 0)])
def test_traces_per_policy(tmp_path, policy, count):
    uri, logged = _log(tmp_path, policy)
    traces = _run_traces(uri, logged.run_id, logged.experiment_id)
    assert len(traces) == count
    tags = MlflowClient(uri).get_run(logged.run_id).data.tags
    assert tags.get("docevals.traces") == (str(count) if count else None)
    if policy in {"errors", "1"}:
        # The wrong document first: "b" has a wrong number and a missing total.
        assert traces[0].info.tags["docevals.document.id"] == "b"


def test_document_trace_holds_prediction_ground_truth_and_field_feedback(tmp_path):
    uri, logged = _log(tmp_path)
    first, second = _run_traces(uri, logged.run_id, logged.experiment_id)
    assert first.data.spans[0].inputs == {
        "document_id": "a",
        "class": "Invoice",
        "source": "gt.jsonl",
    }
    assessments = {item.name: item for item in second.info.assessments}
    assert assessments["expected_fields"].value["$.number"] == "2"
    assert assessments["$.number"].value == "FD"
    assert assessments["$.number"].metadata["expected"] == "2"
    assert assessments["$.number"].metadata["actual"] == "3"
    assert assessments["$.total"].value == "FN"
    assert assessments["$.lines[].sku"].value == "TP×1 FN×1"
    assert assessments["document_f1"].value == pytest.approx(0.4)
    assert second.info.trace_metadata["mlflow.sourceRun"] == logged.run_id
    assert second.data.spans[0].outputs["$.number"] == "3"


def test_bulk_rows_read_back_as_mlflow_own_calls_write_them(tmp_path, monkeypatch):
    report = compare_documents(DOCUMENTS, SCHEMA).to_report()
    from docevals_mlflow.tracking.trace_fields import field_traces

    records = field_traces(report, parse_trace_policy("all"))
    records[0] = dataclasses.replace(records[0], spans=[_llm_span()], failed=True)
    broken = FeedbackRecord(name="judge", value=None, error="judge unreachable")
    records[1] = dataclasses.replace(records[1], feedback=[*records[1].feedback, broken])
    uri = _uri(tmp_path)
    client = MlflowClient(uri)
    experiment_id = client.create_experiment("x", artifact_location=str(tmp_path / "art"))
    fast = client.create_run(experiment_id).info.run_id
    trace_store.log_traces(client, fast, experiment_id, records)
    monkeypatch.setattr(trace_store, "_is_sql", lambda store: False)
    slow = client.create_run(experiment_id).info.run_id
    trace_store.log_traces(client, slow, experiment_id, records)

    def view(trace):
        info = trace.info
        return (
            info.request_preview,
            info.response_preview,
            info.state,
            info.token_usage,
            {k: v for k, v in info.tags.items() if k != "mlflow.artifactLocation"},
            {k: v for k, v in info.trace_metadata.items() if k != "mlflow.sourceRun"},
            sorted(_assessment_view(a) for a in info.assessments),
            [_span_view(span) for span in trace.data.spans],
        )

    bulk = [view(trace) for trace in _run_traces(uri, fast, experiment_id)]
    own = [view(trace) for trace in _run_traces(uri, slow, experiment_id)]
    assert bulk == own
    assert len(bulk) == 2


def _assessment_view(assessment) -> tuple:
    error = assessment.feedback.error if assessment.feedback else None
    metadata = {
        key: value
        for key, value in (assessment.metadata or {}).items()
        if key != "mlflow.assessment.sourceRunId"
    }
    return (
        assessment.name,
        str(assessment.value),
        assessment.rationale,
        str(metadata),
        error.to_dictionary() if error else None,
        assessment.source.source_type,
        assessment.source.source_id,
        assessment.run_id is not None,
        assessment.span_id is not None,
    )


def _span_view(span) -> tuple:
    content = dict(span.to_dict())
    attributes = {
        key: value
        for key, value in content.pop("attributes").items()
        if key != "mlflow.traceRequestId"
    }
    for key in ("trace_id", "span_id", "parent_span_id", "start_time_unix_nano"):
        content[key] = bool(content[key])
    content["end_time_unix_nano"] = span.end_time_ns - span.start_time_ns
    return (str(content), str(attributes), span.status.status_code, span.llm_cost)


def _llm_span() -> SpanRecord:
    return SpanRecord(
        name="judge",
        span_type="LLM",
        inputs={"question": "same?"},
        outputs={"verdict": "pass"},
        model="gpt-test",
        provider="openai",
        usage={"input_tokens": 12, "output_tokens": 3, "total_tokens": 15},
        cost_usd=0.002,
    )


def test_llm_spans_carry_token_usage_and_cost(tmp_path):
    uri = _uri(tmp_path)
    client = MlflowClient(uri)
    experiment_id = client.create_experiment("x", artifact_location=str(tmp_path / "art"))
    run_id = client.create_run(experiment_id).info.run_id
    record = TraceRecord(name="case c1", inputs={"case_id": "c1"}, spans=[_llm_span()])
    trace_store.log_traces(client, run_id, experiment_id, [record])
    (trace,) = _run_traces(uri, run_id, experiment_id)
    assert trace.info.token_usage == {"input_tokens": 12, "output_tokens": 3, "total_tokens": 15}
    llm = trace.data.spans[1]
    assert llm.span_type == "LLM"
    assert llm.parent_id == trace.data.spans[0].span_id
    assert llm.llm_cost == {"total_cost": 0.002}


def test_kept_bundle_logs_its_traces_later(tmp_path):
    report = compare_documents(DOCUMENTS, SCHEMA).to_report()
    run = assemble_fields(report, RunOptions(traces="all"))
    folder = run.writer.write(tmp_path / "bundle")
    write_traces(folder, run.traces)
    assert (folder / TRACES_FILE).is_file()
    assert read_traces(folder) == run.traces
    uri = _uri(tmp_path)
    logged = log_bundle(folder, tracking_uri=uri)
    assert len(_run_traces(uri, logged.run_id, logged.experiment_id)) == 2


def test_a_damaged_traces_file_is_named(tmp_path):
    (tmp_path / TRACES_FILE).write_text("{not json\n", encoding="utf-8")
    with pytest.raises(InputError, match="line 1 is not a trace record"):
        read_traces(tmp_path)


@pytest.mark.parametrize("value", ["some", "-1", "1.5", "", "١٢"])
def test_bad_policies_are_refused(value):
    with pytest.raises(InputError, match="invalid traces policy"):
        RunOptions(traces=value)


def test_limit_keeps_the_wrong_ones_first_in_report_order():
    policy = TracePolicy("limit", 3)
    items = list(range(10))
    assert policy.select(items, lambda item: item in {2, 7, 9}) == [2, 7, 9]
    assert policy.select(items, lambda item: item == 8) == [0, 1, 8]
    assert parse_trace_policy(None) == TracePolicy("limit", 1000)
    assert parse_trace_policy("0") == TracePolicy("none")
    assert str(parse_trace_policy("25")) == "25"


@pytest.mark.filterwarnings(r"ignore:.*Any type hint is inferred as AnyType:UserWarning:mlflow\..*")
@pytest.mark.parametrize(("policy", "count"), [(None, 3), ("1", 1), ("none", 0)])
def test_the_evaluator_plugin_logs_traces_into_the_callers_run(mlflow_store, policy, count):
    import mlflow

    from tests.tracking.test_plugin import evaluate, receipts

    config = {"id_col": "doc_id"} | ({"traces": policy} if policy is not None else {})
    with mlflow.start_run() as run:
        evaluate(receipts(), **config)
    traces = _run_traces(mlflow_store, run.info.run_id, run.info.experiment_id)
    assert len(traces) == count
    if count:
        ids = sorted(trace.info.tags["docevals.document.id"] for trace in traces)
        assert ids == ["r1", "r2", "r3"][:count]
        feedback = {a.name: a.value for a in traces[0].info.assessments}
        assert "document_f1" in feedback
    # The caller's run keeps its tags: no docevals.traces tag is added there.
    assert "docevals.traces" not in MlflowClient(mlflow_store).get_run(run.info.run_id).data.tags


def test_the_evaluator_plugin_refuses_a_bad_traces_policy(mlflow_store):
    import mlflow

    from tests.tracking.test_plugin import evaluate, receipts

    with mlflow.start_run(), pytest.raises(InputError, match="invalid traces policy"):
        evaluate(receipts(), id_col="doc_id", traces="some")


def test_unpriced_llm_spans_are_priced_without_a_download(tmp_path, monkeypatch):
    # MLflow prices an LLM span without a cost from a catalog it downloads first;
    # logging must not reach out (offline it stalls ~7 s a provider), so MLflow's
    # shipped catalog is used, and a catalog the user named is left alone.
    import mlflow.utils.providers as providers

    fetched: list[str] = []
    monkeypatch.setattr(
        providers, "_fetch_http_provider", lambda provider, url: fetched.append(url)
    )
    monkeypatch.setattr(providers, "_remote_cache", None)
    monkeypatch.delenv("MLFLOW_MODEL_CATALOG_URI", raising=False)
    uri = _uri(tmp_path)
    client = MlflowClient(uri)
    experiment_id = client.create_experiment("x", artifact_location=str(tmp_path / "art"))
    run_id = client.create_run(experiment_id).info.run_id
    unpriced = dataclasses.replace(_llm_span(), model="gpt-4o-mini", cost_usd=None)
    record = TraceRecord(name="case c1", inputs={"case_id": "c1"}, spans=[unpriced])
    trace_store.log_traces(client, run_id, experiment_id, [record])
    assert fetched == []
    assert "MLFLOW_MODEL_CATALOG_URI" not in os.environ
    (trace,) = _run_traces(uri, run_id, experiment_id)
    assert trace.data.spans[1].llm_cost["total_cost"] > 0  # from the shipped catalog

    monkeypatch.setenv("MLFLOW_MODEL_CATALOG_URI", "https://catalog.invalid/models")
    trace_store.log_traces(client, run_id, experiment_id, [record])
    assert fetched == ["https://catalog.invalid/models/openai.json"]
