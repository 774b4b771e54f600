"""Traces written through a real ``mlflow server`` (on PostgreSQL when its programs
are installed, else on SQLite), read back over HTTP: the same traces the SQL path
writes for the same records, several ``start_trace`` requests at a time, and a
refusal that costs neither the run nor a secret."""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import os
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from mlflow.exceptions import MlflowException
from mlflow.store.tracking.rest_store import RestStore
from mlflow.tracking import MlflowClient

from docevals_mlflow import compare_documents
from docevals_mlflow.core import secrets
from docevals_mlflow.tracking import trace_rest, trace_store
from docevals_mlflow.tracking.assembly import assemble_fields, log_assembled
from docevals_mlflow.tracking.errors import TrackingError
from docevals_mlflow.tracking.options import RunOptions
from docevals_mlflow.tracking.trace_fields import field_traces
from docevals_mlflow.tracking.trace_policy import parse_trace_policy
from docevals_mlflow.tracking.trace_records import FeedbackRecord, SpanRecord, TraceRecord
from tests.tracking.invoices import SCHEMA
from tests.tracking.servers import (
    MlflowServer,
    log_tails,
    mlflow_server,
    postgres_bin_dir,
    postgres_server,
)
from tests.tracking.test_runs import DOCUMENTS
from tests.tracking.test_traces import _assessment_view, _llm_span, _run_traces, _span_view

pytestmark = pytest.mark.server

SECRET = "sk-traces-SERVER-0123456789abcdef"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MlflowServer]:
    """One ``mlflow server`` for this module's tests (each uses its own experiment)."""
    folder = tmp_path_factory.mktemp("traces-server")
    bin_dir = postgres_bin_dir()
    with contextlib.ExitStack() as stack:
        if bin_dir is not None and importlib.util.find_spec("psycopg2") is not None:
            backend = stack.enter_context(postgres_server(bin_dir)).url
        else:  # the REST path is the same; only the server's store differs
            backend = f"sqlite:///{(folder / 'server.db').as_posix()}"
        yield stack.enter_context(mlflow_server(backend, folder / "server"))


@pytest.fixture
def server(served: MlflowServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[MlflowServer]:
    monkeypatch.delenv("DOCEVALS_NO_MLFLOW", raising=False)
    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")
    for name in ("NO_PROXY", "no_proxy"):  # a configured proxy must not take loopback calls
        monkeypatch.setenv(name, ",".join(filter(None, [os.environ.get(name), "127.0.0.1"])))
    yield served
    print(log_tails([served.log]))  # shown next to a failed assertion


@pytest.fixture
def secret() -> Iterator[str]:
    # The registry is process-wide: restore what other tests registered.
    saved = secrets.registered_secrets()
    secrets.register_secrets(SECRET)
    try:
        yield SECRET
    finally:
        secrets.REGISTRY.clear()
        secrets.register_secrets(*saved)


def _records() -> list[TraceRecord]:
    """Documents (one failed, with an LLM span; one with a feedback in error), a
    pipeline case with nested stages, and copies: more traces than one chunk."""
    report = compare_documents(DOCUMENTS, SCHEMA).to_report()
    records = field_traces(report, parse_trace_policy("all"))
    records[0] = dataclasses.replace(records[0], spans=[_llm_span()], failed=True)
    broken = FeedbackRecord(name="judge", value=None, error="judge unreachable")
    records[1] = dataclasses.replace(records[1], feedback=[*records[1].feedback, broken])
    stages = [
        SpanRecord(name="extract", inputs={"page": 1}, outputs={"text": "Rechnung Nr. 7"}),
        SpanRecord(name="classify", parent=0, outputs={"class": "Invoice"}, error="timeout"),
        dataclasses.replace(_llm_span(), parent=1),
    ]
    case = TraceRecord(
        name="case c1",
        inputs={"case_id": "c1"},
        outputs={"verdict": "fail"},
        feedback=[FeedbackRecord(name="verdict", value="fail", rationale="stage failed")],
        spans=stages,
        tags={"docevals.case.id": "c1"},
    )
    originals = [*records, case]
    return originals + [dataclasses.replace(r, name=f"{r.name} #2") for r in originals]


def _view(trace: Any) -> tuple[Any, ...]:
    info = trace.info
    return (
        info.request_preview,
        info.response_preview,
        info.state,
        info.execution_duration,
        info.token_usage,
        {k: v for k, v in info.tags.items() if k != "mlflow.artifactLocation"},
        {k: v for k, v in info.trace_metadata.items() if k != "mlflow.sourceRun"},
        sorted(map(_assessment, info.assessments)),
        [_span_view(span) for span in trace.data.spans],
    )


def _assessment(assessment: Any) -> tuple[Any, ...]:
    # Over HTTP an assessment's metadata is a protobuf map, which keeps no key order.
    view = list(_assessment_view(assessment))
    metadata = assessment.metadata or {}
    view[3] = sorted((k, v) for k, v in metadata.items() if k != "mlflow.assessment.sourceRunId")
    return tuple(view)


def _name(view: tuple[Any, ...]) -> str:
    return str(view[5]["mlflow.traceName"])


def _new_run(client: MlflowClient, name: str) -> tuple[str, str]:
    experiment_id = client.create_experiment(name)
    return client.create_run(experiment_id).info.run_id, experiment_id


def test_traces_through_a_server_read_back_as_the_sql_path_writes_them(
    server, tmp_path, monkeypatch
):
    monkeypatch.setattr(trace_rest, "CHUNK", 3)  # several log_spans requests
    threads: list[str] = []
    own_start_trace = RestStore.start_trace

    def start_trace(store: RestStore, info: Any) -> Any:
        threads.append(threading.current_thread().name)
        return own_start_trace(store, info)

    monkeypatch.setattr(RestStore, "start_trace", start_trace)
    records = _records()
    remote = MlflowClient(server.url)
    run_id, experiment_id = _new_run(remote, "same traces")
    assert trace_store.log_traces(remote, run_id, experiment_id, records) == len(records)
    local_uri = f"sqlite:///{tmp_path.as_posix()}/mlflow.db"
    local = MlflowClient(local_uri)
    local_run, local_experiment = _new_run(local, "same traces")
    trace_store.log_traces(local, local_run, local_experiment, records)

    served = _run_traces(server.url, run_id, experiment_id)
    assert len(served) == len(records)
    assert sorted(map(_view, served), key=_name) == sorted(
        map(_view, _run_traces(local_uri, local_run, local_experiment)), key=_name
    )
    for trace in served:
        assert trace.info.trace_metadata["mlflow.sourceRun"] == run_id
        assert trace.info.tags["mlflow.artifactLocation"]
        assert trace.info.tags["mlflow.traceName"] in {record.name for record in records}
        for item in trace.info.assessments:
            if item.feedback:
                assert item.run_id == item.metadata["mlflow.assessment.sourceRunId"] == run_id
    # One request per trace, none on the caller's thread.
    assert len(threads) == len(records)
    assert all(name.startswith("docevals-traces") for name in threads)


def test_a_refusal_stops_the_writing_and_says_how_many_traces_were_written(
    server, monkeypatch, secret
):
    monkeypatch.setattr(trace_rest, "CHUNK", 2)
    records = [
        TraceRecord(name=f"doc {n}", inputs={"document_id": str(n), "key": secret})
        for n in range(5)
    ]
    own_start_trace = RestStore.start_trace
    sent: list[str] = []

    def start_trace(store: RestStore, info: Any) -> Any:
        name = info.tags["mlflow.traceName"]
        sent.append(name)
        if name == "doc 3":
            raise MlflowException(f"refused, header Authorization: Bearer {secret}\nmore")
        return own_start_trace(store, info)

    monkeypatch.setattr(RestStore, "start_trace", start_trace)
    client = MlflowClient(server.url)
    run_id, experiment_id = _new_run(client, "refused")
    with pytest.raises(TrackingError) as caught:
        trace_store.log_traces(client, run_id, experiment_id, records)
    message = str(caught.value)
    assert message.startswith("2 of 5 traces written before the tracking store refused one")
    assert "MlflowException: refused" in message
    assert secret not in message
    assert "[REDACTED]" in message
    assert "\n" not in message
    # The chunk after the refusal is never sent; the complete chunk has its spans.
    assert "doc 4" not in sent
    assert "doc 2" in sent
    found = _run_traces(server.url, run_id, experiment_id)
    names = {trace.info.tags["mlflow.traceName"]: trace.info.trace_id for trace in found}
    # "doc 2", of the chunk that failed, had no spans yet: it is deleted.
    assert sorted(names) == ["doc 0", "doc 1"]
    for name in ("doc 0", "doc 1"):
        trace = client.get_trace(names[name])
        assert secret not in trace.info.request_preview
        assert trace.data.spans[0].inputs["key"] == "[REDACTED]"


def test_a_run_logged_to_a_server_gets_its_traces_or_the_warning(server, tmp_path, monkeypatch):
    report = compare_documents(DOCUMENTS, SCHEMA).to_report()
    ground_truth = tmp_path / "gt.jsonl"
    ground_truth.write_text("{}\n", encoding="utf-8")

    def log(experiment: str) -> Any:
        options = RunOptions(
            tracking_uri=server.url, experiment=experiment, ground_truth=ground_truth, traces="all"
        )
        return log_assembled(assemble_fields(report, options))

    logged = log("run with traces")
    client = MlflowClient(server.url)
    assert client.get_run(logged.run_id).data.tags["docevals.traces"] == "2"
    assert len(_run_traces(server.url, logged.run_id, logged.experiment_id)) == 2

    def refuse(store: RestStore, info: Any) -> Any:
        raise MlflowException("the store is read-only")

    monkeypatch.setattr(RestStore, "start_trace", refuse)
    refused = log("run without traces")
    tags = client.get_run(refused.run_id).data.tags
    assert client.get_run(refused.run_id).info.status == "FINISHED"
    assert "docevals.traces" not in tags
    assert tags["docevals.warning.traces"] == (
        "traces not logged (TrackingError: 0 of 2 traces written before the tracking store "
        "refused one (MlflowException: the store is read-only))"
    )
