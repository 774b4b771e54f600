"""What runs on Spark's executors: Arrow batches of documents in, result rows out.

Runs in Spark's Python workers; it imports the comparison engine and pyarrow, never
pyspark. Each worker compiles the schema once and compares documents ``chunk_size``
at a time (list pairing vectorised across the chunk, as on one machine). A document
that cannot be read or compared becomes a row with ``_error`` set instead of failing
the Spark job, so that the driver can raise the first error in input order, as the
single-machine path does.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from docevals_mlflow.core.datafiles import parse_json
from docevals_mlflow.core.gc import gc_paused
from docevals_mlflow.errors import DocEvalsError, InputError
from docevals_mlflow.fields.compare import DocumentComparison, FieldComparer, FieldInfo
from docevals_mlflow.fields.leaves import expand_row
from docevals_mlflow.fields.processes import ComparerKey, cached_comparer
from docevals_mlflow.fields.schema import DocumentSchema
from docevals_mlflow.fields.shapes import invalid_example
from docevals_mlflow.fields.state import ROW_FIELDS, Row
from docevals_mlflow.spark.columns import CELLS, ITEMS, METRICS, result_schema


@dataclass(frozen=True)
class ExecutorSettings:
    """What every executor needs (pickled with the function Spark ships)."""

    schema: DocumentSchema
    key: ComparerKey
    """The driver's :attr:`FieldComparer.key`: schema fingerprint, rows kept, and the
    comparison settings (``list_pairing``, ``discovered``, ``shape_mismatch``)."""
    chunk_size: int
    columns: dict[str, str]
    """Input column role (``expected``, ``confidence``...) → the caller's name, for
    error messages."""


def compare_batches(batches: Iterator[Any], settings: ExecutorSettings) -> Iterator[Any]:
    """``mapInArrow`` function: compare the documents of each Arrow batch."""
    import pyarrow as pa

    schema = result_schema()
    comparer = cached_comparer(settings.key, lambda: settings.schema)
    for batch in batches:
        # Parsing, comparing and the result rows allocate many small acyclic objects
        # that live until the batch is sent: the collector would rescan them all.
        with gc_paused():
            columns = batch.to_pydict()
            records = list(zip(*(columns[name] for name in columns), strict=True))
            out: list[dict[str, Any]] = []
            for start in range(0, len(records), settings.chunk_size):
                out.extend(
                    _compare_chunk(comparer, records[start : start + settings.chunk_size], settings)
                )
            result = pa.RecordBatch.from_pylist(out, schema=schema)
        yield result


Record = tuple[int, Any, Any, str | None, str | None, str | None, str | None]
"""``(_order, id, class, expected, predicted, confidence, explainability)``."""


def _compare_chunk(
    comparer: FieldComparer, records: list[Record], settings: ExecutorSettings
) -> list[dict[str, Any]]:
    results: dict[int, dict[str, Any]] = {}
    ready: list[tuple[int, tuple[Any, Any, dict[str, Any]]]] = []
    for index, record in enumerate(records):
        try:
            ready.append((index, _document_input(record, settings)))
        except DocEvalsError as exc:
            results[index] = _error_row(record, exc)
    with gc_paused():
        try:
            compared = comparer.compare_many([item for _, item in ready])
        except DocEvalsError:
            # One bad document fails its chunk; compare each alone to find which.
            compared = []
            for index, item in ready:
                try:
                    compared.extend(comparer.compare_many([item]))
                except DocEvalsError as exc:
                    results[index] = _error_row(records[index], exc)
            ready = [(index, item) for index, item in ready if index not in results]
        for (index, _), document in zip(ready, compared, strict=True):
            results[index] = _result_row(records[index][0], document)
    return [results[index] for index in range(len(records))]


def _document_input(record: Record, settings: ExecutorSettings) -> tuple[Any, Any, dict[str, Any]]:
    order, doc_id, document_class, expected, predicted, confidence, explainability = record
    names = settings.columns
    if doc_id is None:
        raise InputError(
            f"a document has no id (row {order} of the input)",
            source=f"column {names['id']!r}",
            expected="an id in every row",
        )
    doc_id = str(doc_id)

    def parse(text: str | None, role: str) -> Any:
        if text is None:
            return None
        return parse_json(text, source=f"column {names[role]!r}", record=doc_id)

    confidence_value = parse(confidence, "confidence")
    if confidence_value is not None and not isinstance(confidence_value, dict):
        raise InputError(
            f"invalid confidence {confidence_value!r}",
            source=f"column {names['confidence']!r}",
            record=doc_id,
            expected="an object mapping field paths to numbers",
        )
    return (
        parse(expected, "expected"),
        parse(predicted, "predicted"),
        {
            "document_id": doc_id,
            "document_class": None if document_class is None else str(document_class),
            "confidence": confidence_value,
            "explainability_info": parse(explainability, "explainability"),
        },
    )


def _empty_row(order: int, doc_id: Any) -> dict[str, Any]:
    return {"_order": order, "id": None if doc_id is None else str(doc_id)}


def _error_row(record: Record, error: DocEvalsError) -> dict[str, Any]:
    row = _empty_row(record[0], record[1])
    row["_error"] = json.dumps(error.context(), ensure_ascii=False)
    return row


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _result_row(order: int, document: DocumentComparison) -> dict[str, Any]:
    # The document's figures: discovered fields left out of them are not counted.
    counts = document.counts
    tp, fp, fn = counts.tp, counts.fa + counts.fd, counts.fn
    row: dict[str, Any] = {
        "_order": order,
        "id": document.id,
        "class": document.document_class,
        "configured": document.configured,
        **counts.as_dict(),
        "undecided": sum(document.undecided.values()),
        **counts.metrics(),
        "_f1_num": 2 * tp,
        "_f1_den": 2 * tp + fp + fn,
        "_cells": _cells(document),
        "_items": _items(document),
        "_reasons": list(document.undecided_reasons),
    }
    if document.invalid:
        # Not scored (its cells are empty): the aggregation counts it apart. Where
        # it sits in its input is filled in on the driver, for the few it reports.
        row["_invalid"] = _json(invalid_example(document))
    if document.rows is not None:
        row["rows"] = _rows(document.rows)
    return row


def _template(position: int, template: str, info: FieldInfo) -> dict[str, Any]:
    """The leading columns of a cell or item row: the template and how it is compared."""
    return {
        "position": position,
        "template": template,
        "label": info.label,
        "method": info.method,
        "threshold": info.threshold,
        "discovered": info.discovered,
        "kind": info.kind,
    }


def _cells(document: DocumentComparison) -> list[dict[str, Any]]:
    """The document's cells per field template, with how each is compared."""
    infos, included = document.fields, document.include_discovered
    return [
        {
            **_template(position, template, infos[template]),
            "apart": infos[template].discovered and not included,
            **dict(zip(CELLS, cells, strict=True)),
            "undecided": document.undecided.get(template, 0),
            "unparsed": document.unparsed.get(template, 0),
        }
        for position, (template, cells) in enumerate(document.cells.items())
    ]


def _items(document: DocumentComparison) -> list[dict[str, Any]]:
    """The document's item counts per list template, with how each is compared."""
    infos = document.fields
    return [
        {
            **_template(position, template, infos[template]),
            **dict(zip(ITEMS, item_counts, strict=True)),
        }
        for position, (template, item_counts) in enumerate(document.items.items())
    ]


def _rows(compact_rows: list[Row]) -> list[dict[str, Any]]:
    """The document's report rows, values as JSON text."""
    rows = []
    for compact in compact_rows:
        record = dict(zip(ROW_FIELDS, expand_row(compact), strict=True))
        record["expected"] = _json(record["expected"])
        record["actual"] = _json(record["actual"])
        record["matched"] = record["outcome"] in ("TP", "TN")
        rows.append(record)
    return rows


__all__ = ["METRICS", "ExecutorSettings", "compare_batches"]
