"""The traces of a field comparison: one per document (see :func:`field_traces`).

Inputs ``{"document_id", "class", "source"}`` are the same for the same document in
every run, which is how MLflow's evaluation-run comparison pairs the documents of two
prompt versions. Each provider call a SEMANTIC or LLM field made for the document
(the report's ``field_method_calls``) is a span under the root: ``LLM`` or
``EMBEDDING``, with its model, token usage, cost and latency; a call that served
several documents gives each of them its share (see ``docs/mlflow-runs.md``). This
module does not import mlflow.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from docevals_mlflow.tracking.trace_policy import TracePolicy
from docevals_mlflow.tracking.trace_records import FeedbackRecord, SpanRecord, TraceRecord
from docevals_mlflow.tracking.trace_spans import dumps

DOCUMENT_F1 = "document_f1"
"""The name of the document-level F1 feedback."""
EXPECTATION = "expected_fields"
"""The name of the ground-truth expectation (field path → expected value)."""
_MAX_VALUE_TEXT = 1000


def _wrong(document: Mapping[str, Any]) -> bool:
    counts = document.get("counts") or {}
    return bool(counts.get("fa") or counts.get("fd") or counts.get("fn"))


def field_traces(
    report: Mapping[str, Any], policy: TracePolicy, *, source: str | None = None
) -> list[TraceRecord]:
    """The traces of a field comparison report's documents that ``policy`` selects.

    A document whose rows were not kept (``--no-rows``, or a batch too large to keep
    them) still gets its trace, with its F1 and cells but no per-field feedback.
    """
    documents = report.get("documents") or []
    calls: dict[str, list[Mapping[str, Any]]] = {}
    models: dict[str, str] = {}
    for entry in report.get("field_method_calls") or []:
        if entry.get("document") is not None:
            calls.setdefault(str(entry["document"]), []).append(entry)
        for template in entry.get("fields") or []:
            if entry.get("model"):
                models.setdefault(str(template), str(entry["model"]))
    return [
        document_trace(
            document, source=source, calls=calls.get(str(document.get("id")), []), models=models
        )
        for document in policy.select(documents, _wrong)
        if isinstance(document, Mapping)
    ]


def document_trace(
    document: Mapping[str, Any],
    *,
    source: str | None = None,
    calls: list[Mapping[str, Any]] | None = None,
    models: Mapping[str, str] | None = None,
) -> TraceRecord:
    """One document's trace: its prediction, ground truth and per-field feedback, and
    a span per provider call made for it (``calls``: its entries of the report's
    ``field_method_calls``). ``models``: the model that decided each field template
    whose method has one, named in that field's feedback."""
    document_id = str(document.get("id"))
    document_class = document.get("class", document.get("document_class"))
    inputs: dict[str, Any] = {"document_id": document_id, "class": document_class}
    if source is not None:
        inputs["source"] = source
    rows = document.get("rows")
    by_field: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows or []:
        by_field.setdefault(str(row.get("template")), []).append(row)
    feedback = [
        _field_feedback(template, entries, (models or {}).get(template))
        for template, entries in by_field.items()
    ]
    feedback.append(_document_f1(document, kept_rows=rows is not None))
    predicted = {str(row.get("path")): row.get("actual") for row in rows or []}
    expected = {str(row.get("path")): row.get("expected") for row in rows or []}
    tags = {"docevals.document.id": document_id[:250]}
    if document_class is not None:
        tags["docevals.document.class"] = str(document_class)[:250]
    return TraceRecord(
        name=f"document {document_id}",
        inputs=inputs,
        outputs=predicted if rows is not None else {"rows": "not kept"},
        expectations={EXPECTATION: expected} if expected else {},
        feedback=feedback,
        spans=[call_span(entry) for entry in calls or []],
        tags=tags,
    )


def call_span(entry: Mapping[str, Any]) -> SpanRecord:
    """The span of one provider call (or a document's share of one): ``LLM`` for an
    LLM field's request, ``EMBEDDING`` for an embeddings request; a call answered from
    the judge cache is marked ``docevals.cache_hit`` and used no tokens."""
    method = str(entry.get("method"))
    fields = [str(name) for name in entry.get("fields") or []]
    usage = entry.get("usage") or {}
    tokens = {
        name: int(usage[name])
        for name in ("input_tokens", "output_tokens", "total_tokens")
        if name in usage
    }
    if usage.get("cached_input_tokens"):
        tokens["cache_read_input_tokens"] = int(usage["cached_input_tokens"])
    # A share of a call may hold tokens but none of its (whole) requests.
    spent = any(usage.get(name) for name in ("requests", *tokens))
    cost = usage.get("cost_usd")
    attributes: dict[str, Any] = {
        "docevals.method": method,
        "docevals.fields": fields,
        "docevals.call": entry.get("call"),
        "docevals.requests": int(usage.get("requests", 0)),
        "docevals.latency_ms": entry.get("latency_ms"),
        "docevals.cache_hit": bool(entry.get("cached")),
        "docevals.cache_hits": int(entry.get("cache_hits") or 0),
    }
    if entry.get("share"):
        attributes["docevals.call.share"] = entry["share"]
    name = f"{method} · {', '.join(fields) or 'list pairing'}"
    latency = entry.get("latency_ms")
    return SpanRecord(
        name=(name if len(name) <= 200 else name[:199] + "…")
        + (" (cache)" if entry.get("cached") else ""),
        span_type="LLM" if method == "LLM" else "EMBEDDING",
        inputs=entry.get("inputs"),
        outputs=entry.get("outputs"),
        attributes=attributes,
        error=entry.get("error"),
        model=str(entry["model"]) if entry.get("model") else None,
        provider=str(entry["provider"]) if entry.get("provider") else None,
        usage=tokens if spent and tokens else None,
        cost_usd=float(cost) if spent and cost is not None else None,
        duration_ms=max(1, round(float(latency))) if latency is not None else None,
    )


def field_call_usage(report: Mapping[str, Any]) -> dict[str, float]:
    """What the report's provider calls used together (``requests``, tokens,
    ``cost_usd`` when any call was priced, ``cache_hits``), for the run's ``usage/``
    metrics; empty when no SEMANTIC or LLM field made a call."""
    entries = report.get("field_method_calls") or []
    if not entries:
        return {}
    names = ("requests", "input_tokens", "cached_input_tokens", "output_tokens", "total_tokens")
    totals = dict.fromkeys(names, 0.0)
    cost: float | None = None
    for entry in entries:
        usage = entry.get("usage") or {}
        for name in names:
            totals[name] += float(usage.get(name, 0.0))
        if usage.get("cost_usd") is not None:
            cost = (cost or 0.0) + float(usage["cost_usd"])
    if cost is not None:
        totals["cost_usd"] = cost
    totals["cache_hits"] = float(sum(int(entry.get("cache_hits") or 0) for entry in entries))
    return totals


def _field_feedback(
    template: str, rows: list[Mapping[str, Any]], model: str | None = None
) -> FeedbackRecord:
    """A field's feedback: its outcome, method, score, expected and actual values (the
    outcomes counted when the document compared it several times, in a list)."""
    if len(rows) == 1:
        return _one_value_feedback(template, rows[0], model)
    outcomes = [str(row.get("outcome")) for row in rows]
    if len(set(outcomes)) == 1:
        value = outcomes[0]
    else:
        value = " ".join(f"{name}×{outcomes.count(name)}" for name in dict.fromkeys(outcomes))
    first = rows[0]
    reasons = list(dict.fromkeys(str(row.get("reason")) for row in rows if row.get("reason")))
    metadata = {
        "method": str(first.get("method")),
        "outcome": value,
        "matched": str(all(bool(row.get("matched")) for row in rows)).lower(),
    }
    if model is not None:
        metadata["model"] = model
    if first.get("threshold") is not None:
        metadata["threshold"] = str(first.get("threshold"))
    scores = [float(row["score"]) for row in rows if row.get("score") is not None]
    if scores:
        metadata["score"] = str(min(scores))
    metadata["comparisons"] = str(len(rows))
    metadata["expected"] = _text({str(row.get("path")): row.get("expected") for row in rows})
    metadata["actual"] = _text({str(row.get("path")): row.get("actual") for row in rows})
    return FeedbackRecord(
        name=template[:250], value=value, rationale="; ".join(reasons) or None, metadata=metadata
    )


def _one_value_feedback(template: str, row: Mapping[str, Any], model: str | None) -> FeedbackRecord:
    """:func:`_field_feedback` of a field compared once in the document (the common
    case: ten thousand of them for a thousand documents), without its lists."""
    value = str(row.get("outcome"))
    metadata = {
        "method": str(row.get("method")),
        "outcome": value,
        "matched": "true" if row.get("matched") else "false",
    }
    if model is not None:
        metadata["model"] = model
    if row.get("threshold") is not None:
        metadata["threshold"] = str(row.get("threshold"))
    if row.get("score") is not None:
        metadata["score"] = str(float(row["score"]))
    metadata["path"] = str(row.get("path"))
    metadata["expected"] = _text(row.get("expected"))
    metadata["actual"] = _text(row.get("actual"))
    reason = row.get("reason")
    return FeedbackRecord(
        name=template[:250],
        value=value,
        rationale=(str(reason) or None) if reason else None,
        metadata=metadata,
    )


def _document_f1(document: Mapping[str, Any], *, kept_rows: bool) -> FeedbackRecord:
    metrics = document.get("metrics") or {}
    counts = document.get("counts") or {}
    f1 = metrics.get("f1")
    metadata = {
        name: str(counts[name]) for name in ("tp", "fa", "fd", "fn", "tn") if name in counts
    }
    for name in ("precision", "recall", "accuracy"):
        if metrics.get(name) is not None:
            metadata[name] = str(metrics[name])
    if not kept_rows:
        metadata["rows"] = "not kept"
    if f1 is None:
        return FeedbackRecord(
            name=DOCUMENT_F1,
            value=None,
            metadata=metadata,
            error="F1 undefined: no field was expected or predicted",
        )
    return FeedbackRecord(name=DOCUMENT_F1, value=float(f1), metadata=metadata)


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else dumps(value)
    return text if len(text) <= _MAX_VALUE_TEXT else text[: _MAX_VALUE_TEXT - 1] + "…"


__all__ = [
    "DOCUMENT_F1",
    "EXPECTATION",
    "call_span",
    "document_trace",
    "field_call_usage",
    "field_traces",
]
