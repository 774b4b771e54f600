"""The traces of a field comparison: one per document (see :func:`field_traces`).

Inputs ``{"document_id", "class", "source"}`` are the same for the same document in
every run, which is how MLflow's evaluation-run comparison pairs the documents of two
prompt versions. This module does not import mlflow.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from docevals_mlflow.tracking.trace_policy import TracePolicy
from docevals_mlflow.tracking.trace_records import FeedbackRecord, TraceRecord

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
    return [
        document_trace(document, source=source)
        for document in policy.select(documents, _wrong)
        if isinstance(document, Mapping)
    ]


def document_trace(document: Mapping[str, Any], *, source: str | None = None) -> TraceRecord:
    """One document's trace: its prediction, ground truth and per-field feedback."""
    document_id = str(document.get("id"))
    document_class = document.get("class", document.get("document_class"))
    inputs: dict[str, Any] = {"document_id": document_id, "class": document_class}
    if source is not None:
        inputs["source"] = source
    rows = document.get("rows")
    by_field: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows or []:
        by_field.setdefault(str(row.get("template")), []).append(row)
    feedback = [_field_feedback(template, entries) for template, entries in by_field.items()]
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
        tags=tags,
    )


def _field_feedback(template: str, rows: list[Mapping[str, Any]]) -> FeedbackRecord:
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
    if first.get("threshold") is not None:
        metadata["threshold"] = str(first.get("threshold"))
    scores = [float(row["score"]) for row in rows if row.get("score") is not None]
    if scores:
        metadata["score"] = str(min(scores))
    if len(rows) == 1:
        metadata["path"] = str(first.get("path"))
        metadata["expected"] = _text(first.get("expected"))
        metadata["actual"] = _text(first.get("actual"))
    else:
        metadata["comparisons"] = str(len(rows))
        metadata["expected"] = _text({str(row.get("path")): row.get("expected") for row in rows})
        metadata["actual"] = _text({str(row.get("path")): row.get("actual") for row in rows})
    return FeedbackRecord(
        name=template[:250], value=value, rationale="; ".join(reasons) or None, metadata=metadata
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
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= _MAX_VALUE_TEXT else text[: _MAX_VALUE_TEXT - 1] + "…"


__all__ = ["DOCUMENT_F1", "EXPECTATION", "document_trace", "field_traces"]
