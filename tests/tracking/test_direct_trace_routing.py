"""Which traces the direct SQLite path writes itself, and the ids it draws for them.

A span MLflow's storage translation would change is MLflow's to store: a provider
call is seen before anything is written, a text input or output only while the rows
are built, which rolls the direct write back (nothing of it is left) and sends the
run through MLflow's client."""

from __future__ import annotations

import re

from mlflow.tracking import MlflowClient

from docevals_mlflow.tracking import direct_store
from docevals_mlflow.tracking.runs import log_bundle
from docevals_mlflow.tracking.trace_records import (
    FeedbackRecord,
    SpanRecord,
    TraceRecord,
    write_traces,
)
from docevals_mlflow.tracking.trace_rows import NotPlainSpan, may_be_plain, trace_rows
from docevals_mlflow.tracking.trace_spans import RandomBytes, TraceIds, random_size
from tests.tracking.test_direct_store import _bundle, _runs, _store

_LOCATION = "file:///tmp/mlruns/1/traces/tr-" + "0" * 32 + "/artifacts"


def _record(outputs: object, spans: list[SpanRecord] | None = None) -> TraceRecord:
    return TraceRecord(
        "document d1",
        {"document_id": "d1"},
        outputs,
        feedback=[FeedbackRecord("total", "TP")],
        spans=spans or [],
    )


def test_a_provider_call_is_seen_before_anything_is_written():
    llm = SpanRecord("LLM · total", "LLM", {"prompt": "p"}, {"text": "t"}, model="m")
    parser = SpanRecord("extract", "PARSER", {"pages": 1}, {"total": 3})
    assert not may_be_plain([_record({"total": 3}, [parser]), _record({"total": 3}, [llm])])
    assert may_be_plain([_record({"total": 3}, [parser])])
    # An attribute of its own makes a span MLflow's too.
    tagged = SpanRecord("extract", "PARSER", attributes={"docevals.method": "LLM"})
    assert not may_be_plain([_record({"total": 3}, [tagged])])


def test_a_text_output_is_found_while_the_rows_are_built():
    records = [_record("a text answer")]
    assert may_be_plain(records)
    try:
        trace_rows(_LOCATION, "r" * 32, "1", records, 0, plain_only=True)
    except NotPlainSpan:
        pass
    else:
        raise AssertionError("a text output was taken for a plain span")
    rows = trace_rows(_LOCATION, "r" * 32, "1", [_record({"total": 3})], 0, plain_only=True)
    assert len(rows.spans) == len(rows.info) == 1


def test_a_run_with_a_text_output_goes_through_mlflow_and_leaves_no_direct_write(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    uri, path = _store(tmp_path, "text")
    folder = _bundle(tmp_path, "fields")
    write_traces(folder, [_record("a text answer")])
    written = []
    real = direct_store.write_direct

    def spy(*args, **kwargs):
        result = real(*args, **kwargs)
        written.append(result)
        return result

    monkeypatch.setattr(direct_store, "write_direct", spy)
    logged = log_bundle(folder, tracking_uri=uri, experiment="new-one", run_name="r")
    assert written == [None]
    assert _runs(path) == 1
    traces = MlflowClient(uri).search_traces(locations=[logged.experiment_id])
    assert [trace.data.spans[0].outputs for trace in traces] == ["a text answer"]
    run_folders = [
        found.name
        for found in (path.parent / "mlruns").rglob("*")
        if found.is_dir() and re.fullmatch("[0-9a-f]{32}", found.name)
    ]
    assert run_folders == [logged.run_id]


def test_ids_come_from_the_bytes_drawn():
    data = bytes(range(1, 17)) + bytes(8) + b"\xff" * 8
    ids = TraceIds.from_random(data, 2)
    assert ids.trace_id == "tr-" + bytes(range(1, 17)).hex()
    assert ids.span_ids == [1, 2**64 - 1]  # an all-zero id is never used
    pool = RandomBytes()
    drawn = [pool.take(random_size(3)) for _ in range(5000)]
    assert all(len(part) == random_size(3) for part in drawn)
    assert len(set(drawn)) == len(drawn)  # consecutive slices, across refills
    assert len({TraceIds.new(1).trace_id for _ in range(100)}) == 100
