"""The SQL rows of new traces, as MLflow 3's SQL store writes them.

:func:`trace_rows` gives, for trace records, the rows ``SqlAlchemyStore.start_trace``
followed by ``log_spans`` would store for traces that did not exist: the
``trace_info`` row (with the token and cost columns), its tags (the artifact location
and the spans location included), its metadata (marked finalized), its assessments
and its spans. They are built straight from the records, as value tuples, without an
MLflow entity or ORM object per trace (most of the time of a large batch otherwise),
and inserted in bulk by :mod:`~docevals_mlflow.tracking.trace_store` (or
:mod:`~docevals_mlflow.tracking.direct_store`); the tests compare what MLflow reads
back with what its own calls write.

Building the rows imports no mlflow (MLflow's small value rules are in
:mod:`~docevals_mlflow.tracking.direct_values`), except for a span MLflow's storage
translation would change (:func:`may_be_plain`, :class:`NotPlainSpan`), which goes
through that translation.
"""

from __future__ import annotations

import base64
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from docevals_mlflow.tracking.direct_values import (
    PROMOTED_METADATA_KEYS,
    analytics_columns,
    assessment_aggregate,
    bounded_model_dimension,
    finite_float_or_none,
)
from docevals_mlflow.tracking.trace_entities import GROUND_TRUTH, SOURCE_ID
from docevals_mlflow.tracking.trace_records import TraceRecord
from docevals_mlflow.tracking.trace_spans import (
    RandomBytes,
    TraceIds,
    dumps,
    duration_ms,
    previews,
    random_size,
    span_dicts,
    trace_metadata,
    trace_tags,
)

_ANALYTICS = (
    "session_id",
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "cache_creation_input_tokens_above_1hr",
    "input_cost",
    "output_cost",
    "total_cost",
)
SENTINEL = "tr-" + "0" * 32
"""The trace id in the artifact location template :func:`trace_rows` is given."""
TABLE_NAMES = ("trace_info", "trace_tags", "trace_request_metadata", "assessments", "spans")
"""The tables of :meth:`TraceRows.tables`, in the same order."""
ARTIFACT_LOCATION_TAG = "mlflow.artifactLocation"
_TRACE_NAME = "mlflow.traceName"
_SPANS_LOCATION = "mlflow.trace.spansLocation"
_FINALIZED = "mlflow.trace.infoFinalized"
_SPAN_TYPE = "mlflow.spanType"
_LLM_COST = "mlflow.llm.cost"
_MODEL = "mlflow.llm.model"
_MODEL_PROVIDER = "mlflow.llm.provider"
INFO_COLUMNS = (
    "request_id",
    "experiment_id",
    "timestamp_ms",
    "execution_time_ms",
    "status",
    "client_request_id",
    "request_preview",
    "response_preview",
    "trace_name",
    *_ANALYTICS,
)
KEY_VALUE_COLUMNS = ("request_id", "key", "value")
ASSESSMENT_COLUMNS = (
    "assessment_id",
    "trace_id",
    "name",
    "assessment_type",
    "value",
    "error",
    "created_timestamp",
    "last_updated_timestamp",
    "experiment_id",
    "trace_timestamp_ms",
    "aggregate_value",
    "is_numeric_value",
    "source_type",
    "source_id",
    "run_id",
    "span_id",
    "rationale",
    "overrides",
    "valid",
    "assessment_metadata",
)
SPAN_COLUMNS = (
    "trace_id",
    "experiment_id",
    "span_id",
    "parent_span_id",
    "name",
    "type",
    "status",
    "start_time_unix_nano",
    "end_time_unix_nano",
    "content",
    "input_cost",
    "output_cost",
    "total_cost",
    "model_name",
    "model_provider",
)


@dataclass
class TraceRows:
    """Value tuples per table (in the column order of ``*_COLUMNS``), and the day
    partitions whose rollups MLflow rebuilds."""

    experiment_id: int
    timestamps: set[int] = field(default_factory=set)
    info: list[tuple[Any, ...]] = field(default_factory=list)
    tags: list[tuple[Any, ...]] = field(default_factory=list)
    metadata: list[tuple[Any, ...]] = field(default_factory=list)
    assessments: list[tuple[Any, ...]] = field(default_factory=list)
    spans: list[tuple[Any, ...]] = field(default_factory=list)

    def tables(self) -> Iterator[tuple[Any, tuple[str, ...], list[tuple[Any, ...]]]]:
        """``(table, columns, rows)`` in foreign-key order."""
        from mlflow.store.tracking.dbmodels.models import (
            SqlAssessments,
            SqlSpan,
            SqlTraceInfo,
            SqlTraceMetadata,
            SqlTraceTag,
        )

        yield SqlTraceInfo.__table__, INFO_COLUMNS, self.info
        yield SqlTraceTag.__table__, KEY_VALUE_COLUMNS, self.tags
        yield SqlTraceMetadata.__table__, KEY_VALUE_COLUMNS, self.metadata
        yield SqlAssessments.__table__, ASSESSMENT_COLUMNS, self.assessments
        yield SqlSpan.__table__, SPAN_COLUMNS, self.spans

    def named_tables(self) -> Iterator[tuple[str, tuple[str, ...], list[tuple[Any, ...]]]]:
        """``(table name, columns, rows)`` in foreign-key order, imports no mlflow."""
        values = (self.info, self.tags, self.metadata, self.assessments, self.spans)
        columns = (
            INFO_COLUMNS,
            KEY_VALUE_COLUMNS,
            KEY_VALUE_COLUMNS,
            ASSESSMENT_COLUMNS,
            SPAN_COLUMNS,
        )
        yield from zip(TABLE_NAMES, columns, values, strict=True)

    def enqueue_rollups(self, session: Any) -> None:
        """Mark the days these traces fall on for MLflow's metric rollups."""
        from mlflow.store.tracking.utils.sql_trace_rollups import (
            RollupFamily,
            enqueue_rollup_rebuild_partitions,
        )

        families = (RollupFamily.TRACE_METRIC, RollupFamily.ASSESSMENT, RollupFamily.SPAN_COST)
        enqueue_rollup_rebuild_partitions(
            session,
            [(family, self.experiment_id, sorted(self.timestamps)) for family in families],
        )


def trace_rows(
    location: str,
    run_id: str,
    experiment_id: str,
    records: list[TraceRecord],
    now: int,
    *,
    plain_only: bool = False,
) -> TraceRows:
    """The rows of ``records``, linked to the run ``run_id``. ``location`` is the
    artifact location tag MLflow gives a trace of the experiment, for the trace id
    :data:`SENTINEL`.

    Raises:
        NotPlainSpan: ``plain_only`` and a span is one MLflow's storage translation
            would change (the rows are then MLflow's to write).
    """
    rows = TraceRows(int(experiment_id), {now})
    random = RandomBytes()
    for record in records:
        spans = len(record.spans) + 1
        ids = TraceIds.from_random(random.take(random_size(spans)), spans)
        _add_trace(rows, record, ids, location, run_id, now)
        root_span_id = format(ids.span_ids[0], "016x")
        rows.assessments.extend(
            _assessment_rows(record, ids.trace_id, root_span_id, run_id, rows, now, random)
        )
        rows.spans.extend(
            _span_row(entry, ids.trace_id, rows.experiment_id, plain_only)
            for entry in span_dicts(record, ids, now)
        )
    return rows


def _add_trace(
    rows: TraceRows, record: TraceRecord, ids: TraceIds, location: str, run_id: str, now: int
) -> None:
    """The trace's ``trace_info`` row, its tags and its metadata."""
    trace_id = ids.trace_id
    metadata = trace_metadata(record, run_id)
    analytics = analytics_columns(metadata)
    request, response = previews(record)
    tags = trace_tags(record)
    rows.info.append(
        (
            trace_id,
            rows.experiment_id,
            now,
            duration_ms(record),
            "ERROR" if record.failed else "OK",
            None,
            request,
            response,
            tags.pop(_TRACE_NAME),
            *(analytics.get(name) for name in _ANALYTICS),
        )
    )
    tags[ARTIFACT_LOCATION_TAG] = location.replace(SENTINEL, trace_id)
    tags[_SPANS_LOCATION] = "TRACKING_STORE"
    rows.tags.extend((trace_id, key, value) for key, value in tags.items())
    kept = {key: value for key, value in metadata.items() if key not in PROMOTED_METADATA_KEYS}
    kept[_FINALIZED] = "true"
    rows.metadata.extend((trace_id, key, value) for key, value in sorted(kept.items()))


class NotPlainSpan(Exception):
    """A span whose row MLflow's storage translation would change (so it needs mlflow)."""


def may_be_plain(records: list[TraceRecord]) -> bool:
    """``False`` when a span of ``records`` is certainly one MLflow's storage
    translation changes (a provider call: its type, model, usage, cost or attributes
    of its own). A quick look that encodes no input or output: the spans' texts are
    checked as their rows are built (:class:`NotPlainSpan`)."""
    for record in records:
        for span in record.spans:
            kind = dumps(span.attributes.get("mlflow.spanType", span.span_type))
            if (
                span.attributes.keys() - _PLAIN_KEYS
                or span.usage
                or span.model
                or span.provider
                or span.cost_usd is not None
                or kind in _TRANSLATED_TYPES
            ):
                return False
    return True


def _assessment_rows(
    record: TraceRecord,
    trace_id: str,
    span_id: str,
    run_id: str,
    rows: TraceRows,
    now: int,
    random: RandomBytes,
) -> Iterator[tuple[Any, ...]]:
    # The columns SqlAssessments.from_mlflow_entity fills for the Expectation and
    # Feedback objects trace_entities builds.
    created = int(time.time() * 1000)
    common = (rows.experiment_id, now)
    for name, value in record.expectations.items():
        if value is not None:
            yield (
                "a-" + random.take(16).hex(), trace_id, name, "expectation", json.dumps(value),
                None, created, created, *common, *assessment_aggregate(value), "HUMAN",
                GROUND_TRUTH, None, span_id, None, None, True, None,
            )  # fmt: skip
    for item in record.feedback:
        error = None
        if item.error is not None:
            error = {
                "error_code": "ASSESSMENT_ERROR",
                "error_message": item.error,
                "stack_trace": None,
            }
        metadata = {**item.metadata, "mlflow.assessment.sourceRunId": run_id}
        yield (
            "a-" + random.take(16).hex(), trace_id, item.name, "feedback", json.dumps(item.value),
            json.dumps(error) if error else None, created, created, *common,
            *assessment_aggregate(item.value), "CODE", SOURCE_ID, run_id, span_id,
            item.rationale, None, True, json.dumps(metadata),
        )  # fmt: skip


MODEL_CATALOG_VARIABLE = "MLFLOW_MODEL_CATALOG_URI"


@contextmanager
def bundled_model_catalog() -> Iterator[None]:
    """MLflow's own model catalog for pricing LLM spans, not a download.

    Storing a span with a model and token usage but no cost, MLflow prices it from a
    catalog it first fetches from GitHub (``MLFLOW_MODEL_CATALOG_URI``); offline that
    stalls about 7 s per provider before MLflow falls back to the copy it ships. Logging
    an evaluation must work offline and never reach out unasked, so the shipped copy is
    used, unless the user named a catalog themselves.
    """
    if MODEL_CATALOG_VARIABLE in os.environ:
        yield
        return
    os.environ[MODEL_CATALOG_VARIABLE] = ""
    try:
        yield
    finally:
        os.environ.pop(MODEL_CATALOG_VARIABLE, None)


def _span_row(
    entry: dict[str, Any], trace_id: str, experiment_id: int, plain_only: bool
) -> tuple[Any, ...]:
    # MLflow's translation applied to the dictionary MLflow's own Span would give
    # (a plain span of docevals' own comes out of it unchanged, and holds only JSON
    # values, which MLflow's encoder writes as json does).
    span_dict = entry
    if _plain(entry):
        content = json.dumps(span_dict, ensure_ascii=False)
    elif plain_only:
        raise NotPlainSpan(entry["name"])
    else:
        from mlflow.tracing.otel.translation import translate_span_when_storing
        from mlflow.tracing.utils import TraceJSONEncoder

        with bundled_model_catalog():
            span_dict = translate_span_when_storing(_AsDict(entry))  # type: ignore[arg-type]
        content = json.dumps(span_dict, cls=TraceJSONEncoder, ensure_ascii=False)
    attributes = span_dict.get("attributes", {})
    cost = {}
    if raw_cost := attributes.get(_LLM_COST):
        try:
            cost = json.loads(raw_cost)
        except (TypeError, ValueError):
            cost = {}
    parent = entry["parent_span_id"]
    return (
        trace_id,
        experiment_id,
        _hex(entry["span_id"]),
        _hex(parent) if parent else None,
        entry["name"],
        _parsed(attributes.get(_SPAN_TYPE)),
        "ERROR" if entry["status"]["code"] == "STATUS_CODE_ERROR" else "OK",
        entry["start_time_unix_nano"],
        entry["end_time_unix_nano"],
        content,
        finite_float_or_none(cost.get("input_cost")),
        finite_float_or_none(cost.get("output_cost")),
        finite_float_or_none(cost.get("total_cost")),
        bounded_model_dimension(_parsed(attributes.get(_MODEL))),
        bounded_model_dimension(_parsed(attributes.get(_MODEL_PROVIDER))),
    )


_PLAIN_KEYS = {
    "mlflow.traceRequestId",
    "mlflow.spanType",
    "mlflow.spanInputs",
    "mlflow.spanOutputs",
}
_TRANSLATED_TYPES = {'"LLM"', '"CHAT_MODEL"', '"UNKNOWN"'}


def _plain(entry: dict[str, Any]) -> bool:
    """Whether MLflow's span translation leaves ``entry`` as it is: only docevals'
    four attributes, a known span type other than LLM, and inputs and outputs that
    are neither text (which the translation may decode once more) nor hold a
    ``model`` (which it would take for the model's name)."""
    attributes = entry["attributes"]
    if attributes.keys() != _PLAIN_KEYS or attributes["mlflow.spanType"] in _TRANSLATED_TYPES:
        return False
    for key in ("mlflow.spanInputs", "mlflow.spanOutputs"):
        text = attributes[key]
        if text.startswith('"') or '"model"' in text:
            return False
    return True


class _AsDict:
    """What ``translate_span_when_storing`` reads of a span: ``to_dict()``."""

    def __init__(self, entry: dict[str, Any]) -> None:
        self._entry = entry

    def to_dict(self) -> dict[str, Any]:
        return {**self._entry, "attributes": dict(self._entry["attributes"])}


def _hex(encoded: str) -> str:
    return base64.b64decode(encoded).hex()


def _parsed(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


__all__ = [
    "ARTIFACT_LOCATION_TAG",
    "ASSESSMENT_COLUMNS",
    "INFO_COLUMNS",
    "KEY_VALUE_COLUMNS",
    "SENTINEL",
    "SPAN_COLUMNS",
    "TABLE_NAMES",
    "NotPlainSpan",
    "TraceRows",
    "may_be_plain",
    "trace_rows",
]
