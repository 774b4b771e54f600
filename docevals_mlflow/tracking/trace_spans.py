"""The parts of an MLflow trace that do not need mlflow: ids, span dictionaries and
the trace's metadata, shared by :mod:`~docevals_mlflow.tracking.trace_rows` (the SQL
rows written in bulk) and :mod:`~docevals_mlflow.tracking.trace_entities` (MLflow
objects, for any other store).

A span dictionary is what ``mlflow.entities.Span.to_dict`` gives for the span (its
ids base64-encoded, its attributes JSON-encoded), so that both paths store the same.
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass
from typing import Any

from docevals_mlflow.tracking.trace_records import SpanRecord, TraceRecord

PREVIEW = 1000
"""Characters of a trace's request and response previews."""
SPAN_MS = 1
"""How long a span lasts, in milliseconds, when its record gives no duration (reports
keep no per-step timing; provider calls keep their latency)."""


@dataclass(frozen=True)
class TraceIds:
    """A new trace's ids: MLflow's ``tr-…`` id, the OpenTelemetry trace id and one span
    id per span (the root's first)."""

    trace_id: str
    otel_id: int
    span_ids: list[int]

    @classmethod
    def new(cls, spans: int) -> TraceIds:
        """Fresh random ids for a trace of ``spans`` spans (its root included)."""
        return cls.from_random(os.urandom(random_size(spans)), spans)

    @classmethod
    def from_random(cls, data: bytes, spans: int) -> TraceIds:
        """The ids ``data`` (:func:`random_size` random bytes) make: what
        ``secrets.randbits`` would give, drawn by the caller in one system call for
        many traces (``secrets`` makes one per id)."""
        otel_id = int.from_bytes(data[:16], "big") or 1
        span_ids = [
            int.from_bytes(data[start : start + 8], "big") or 1
            for start in range(16, 16 + 8 * spans, 8)
        ]
        return cls("tr-" + format(otel_id, "032x"), otel_id, span_ids)


class RandomBytes:
    """The random bytes of a batch's ids, drawn from ``os.urandom`` in blocks: one
    system call for thousands of ids (``secrets`` makes one for each, a tenth of
    building the rows). Make one per batch, never a module-wide one: processes
    forked from this one would share its bytes."""

    _BLOCK = 1 << 16

    def __init__(self) -> None:
        self._data = b""
        self._at = 0

    def take(self, size: int) -> bytes:
        """The next ``size`` random bytes."""
        if self._at + size > len(self._data):
            self._data = os.urandom(max(self._BLOCK, size))
            self._at = 0
        start = self._at
        self._at += size
        return self._data[start : self._at]


def random_size(spans: int) -> int:
    """The random bytes :meth:`TraceIds.from_random` takes for ``spans`` spans."""
    return 16 + 8 * spans


# json.dumps with any option builds a new encoder for every call: for the tens of
# thousands of small values of a large batch, one shared encoder (encode is
# stateless) does the same work at a fraction of the cost.
_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)


def dumps(value: Any) -> str:
    """JSON text as MLflow stores attribute values and previews:
    ``json.dumps(value, ensure_ascii=False, default=str)``."""
    return _ENCODER.encode(value)


def _b64(number: int, size: int) -> str:
    return base64.b64encode(number.to_bytes(size, "big")).decode("ascii")


def root_span(record: TraceRecord) -> SpanRecord:
    """The root span: the trace's inputs and outputs, failed when the trace is."""
    return SpanRecord(
        name=record.name,
        inputs=record.inputs,
        outputs=record.outputs,
        error="failed" if record.failed else None,
    )


def span_dicts(record: TraceRecord, ids: TraceIds, now_ms: int) -> list[dict[str, Any]]:
    """The trace's spans as ``Span.to_dict`` gives them, the root first."""
    start = now_ms * 1_000_000
    dicts = [_span_dict(root_span(record), ids, 0, None, start)]
    for index, span in enumerate(record.spans, start=1):
        parent = 0 if span.parent is None else span.parent + 1
        dicts.append(_span_dict(span, ids, index, parent, start))
    # The root span lasts as long as its children together.
    dicts[0]["end_time_unix_nano"] = start + duration_ms(record) * 1_000_000
    return dicts


def duration_ms(record: TraceRecord) -> int:
    """The trace's execution time: its spans' durations together."""
    return max(1, sum(_span_ms(span) for span in record.spans))


def _span_ms(span: SpanRecord) -> int:
    return span.duration_ms if span.duration_ms is not None else SPAN_MS


def _span_dict(
    record: SpanRecord, ids: TraceIds, index: int, parent: int | None, start: int
) -> dict[str, Any]:
    attributes = {
        "mlflow.traceRequestId": dumps(ids.trace_id),
        "mlflow.spanType": dumps(record.span_type),
        "mlflow.spanInputs": dumps(record.inputs),
        "mlflow.spanOutputs": dumps(record.outputs),
    }
    attributes.update({key: dumps(value) for key, value in record.attributes.items()})
    if record.usage:
        attributes["mlflow.chat.tokenUsage"] = dumps(record.usage)
    if record.model:
        attributes["mlflow.llm.model"] = dumps(record.model)
    if record.provider:
        attributes["mlflow.llm.provider"] = dumps(record.provider)
    if record.cost_usd is not None:
        attributes["mlflow.llm.cost"] = dumps({"total_cost": record.cost_usd})
    return {
        "trace_id": _b64(ids.otel_id, 16),
        "span_id": _b64(ids.span_ids[index], 8),
        "parent_span_id": _b64(ids.span_ids[parent], 8) if parent is not None else None,
        "name": record.name,
        "start_time_unix_nano": start,
        "end_time_unix_nano": start + _span_ms(record) * 1_000_000,
        "events": [],
        "status": {
            "code": "STATUS_CODE_ERROR" if record.error else "STATUS_CODE_OK",
            "message": record.error or "",
        },
        "attributes": attributes,
        "links": [],
    }


def trace_metadata(record: TraceRecord, run_id: str) -> dict[str, str]:
    """The trace's metadata: its run, schema version, and its LLM spans' token usage and
    cost summed."""
    metadata = {"mlflow.sourceRun": run_id, "mlflow.trace_schema.version": "3"}
    tokens: dict[str, int] = {}
    cost = 0.0
    priced = False
    for span in record.spans:
        for key, value in (span.usage or {}).items():
            tokens[key] = tokens.get(key, 0) + int(value)
        if span.cost_usd is not None:
            cost += span.cost_usd
            priced = True
    if tokens:
        metadata["mlflow.trace.tokenUsage"] = dumps(tokens)
    if priced:
        metadata["mlflow.trace.cost"] = dumps({"total_cost": cost})
    return metadata


def trace_tags(record: TraceRecord) -> dict[str, str]:
    """The trace's tags, its name (``mlflow.traceName``) first."""
    return {"mlflow.traceName": record.name[:250], **record.tags}


def previews(record: TraceRecord) -> tuple[str, str]:
    """The trace's request and response previews."""
    return dumps(record.inputs)[:PREVIEW], dumps(record.outputs)[:PREVIEW]


__all__ = [
    "PREVIEW",
    "SPAN_MS",
    "RandomBytes",
    "TraceIds",
    "dumps",
    "duration_ms",
    "previews",
    "random_size",
    "root_span",
    "span_dicts",
    "trace_metadata",
    "trace_tags",
]
