"""The JSON report of a field comparison, with stable keys.

Built as plain dicts (a batch can hold millions of rows, and a pydantic object per
row would cost more than the comparison itself); :class:`FieldsReport` validates a
report read back from disk (:mod:`~docevals_mlflow.fields.report_models`).

Layout::

    {"kind": "fields", "package_version",
     "schema": {"id", "version", "sha256", "methods"},  # methods: plugins only, when any
     "settings": {"list_pairing", "discovered", "shape_mismatch"},
     "overall": {"documents", "counts": {tp, fa, fd, fn, tn}, "metrics": {...}, "macro_f1",
                 "undecided", "undecided_reasons": [...], "unparsed"},
     "classes": {"<name>": {"configured", "documents", "counts", "metrics", "macro_f1",
                            "undecided", "unparsed", "fields": [...]}},
     "fields": [{"template", "method", "method_name", "threshold", "discovered",
                 "counts", "metrics", "undecided", "unparsed"}],
     "discovered": {"included", "counts", "metrics", "fields": [...]},  # when any
     "lists": [{"template", "method", "pairing", "discovered", "matched", "weak",
                "missed", "extra", "empty", "invented", "counts", "metrics"}],
     "documents": [{"id", "class", "counts", "metrics", "undecided", "rows": [...]}],
     "invalid_expected": {"documents", "examples": [...]},  # when any
     "unpaired": {"expected_only": [...], "predicted_only": [...]},
     "calibration": {...}}   # only when rows carry extraction confidence

``schema.methods`` names the plugin methods (not built in) that decided comparisons:
``{"NAME": {"package", "version", "explanation"}}``. It is absent when every method is
built in, and it makes the report explain its methods on its own (the Markdown
rendering reads the explanations there).

``undecided`` counts the comparisons a provider (SEMANTIC, LLM) failed to decide. They
are inside ``counts`` as FD, the worst case, so the metrics are lower bounds while it
is above zero; ``undecided_reasons`` says why (each distinct reason once).
``unparsed`` counts values of numeric fields that do not read as numbers.

``fields`` holds the fields whose cells make the headline figures. Fields the schema
does not name (discovered in the data) are there too with ``discovered="include"``;
otherwise they are in ``discovered`` only, with their own sums, and no overall, class
or document figure counts them.

A list's ``counts`` are its item-level cells as Stickler 1.0 counts them (TP matched,
FD weak pairs, FN missed, FA extra, TN lists empty on both sides); its ``far`` is the
share of list instances expected empty in which items were invented.

``invalid_expected`` lists documents whose ground truth contradicts the schema's
shape (only with ``shape_mismatch="count"``; otherwise they stop the comparison).
They are not scored and not in ``documents``.

``ci`` (in ``overall``, each class and each headline field, unless intervals are
turned off) holds, per figure (precision, recall, F1, accuracy), a 95% interval from
resampling documents: ``{"low", "high", "documents", "observations", "confidence",
"resamples", "seed"}`` and ``reason`` when there is none (docs/statistics.md).
Class fields' ``(template, label)`` keys match the batch's intervals by label too.

``calibration`` (:class:`~docevals_mlflow.core.diagnostics.ConfidenceCalibration`)
measures extraction confidence against correctness: AUROC, Brier, ECE per field and
overall, and the review budget of the least confident fields. It needs rows, so a
report built without them has none.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from docevals_mlflow._version import __version__
from docevals_mlflow.fields.compare import DocumentComparison
from docevals_mlflow.fields.counts import Counts
from docevals_mlflow.fields.leaves import expand_row
from docevals_mlflow.fields.registry import BUILTIN_NAMES, registered_field_method
from docevals_mlflow.fields.report_models import FieldsReport
from docevals_mlflow.fields.state import ROW_FIELDS

if TYPE_CHECKING:
    from docevals_mlflow.core.statistics.cluster_intervals import IntervalSettings
    from docevals_mlflow.fields.batch import BatchComparison, ClassAggregate, FieldAggregate

__all__ = ["REPORT_ROW_FIELDS", "UNCLASSIFIED", "FieldsReport", "build_fields_report"]

UNCLASSIFIED = "unclassified"
"""The class key of documents that carry no class and match no default class."""


def _field_entries(
    fields: Mapping[Any, FieldAggregate], intervals: Mapping[Any, Any] | None = None
) -> list[dict[str, Any]]:
    found = intervals or {}
    return [
        {
            "template": entry.info.template,
            "method": entry.info.label,
            "method_name": entry.info.method,
            "threshold": entry.info.threshold,
            "discovered": entry.info.discovered,
            "counts": entry.counts.as_dict(),
            "metrics": entry.counts.metrics(),
            "undecided": entry.undecided,
            "unparsed": entry.unparsed,
            **_ci(found.get((entry.info.template, entry.info.label))),
        }
        for entry in fields.values()
    ]


def _plugin_methods(batch: BatchComparison) -> dict[str, dict[str, Any]]:
    """The plugin methods behind the batch's fields, with what provided them."""
    names = {
        entry.info.method
        for fields in (batch.fields, batch.discovered_fields)
        for entry in fields.values()
        if entry.info.method not in BUILTIN_NAMES
    }
    methods = {}
    for name in sorted(names):
        # The batch was compared in this process (or its helpers, which got the
        # parent's methods), so every method it used is registered here.
        method = registered_field_method(name)
        if method is not None:
            methods[name] = {**method.provenance(), "explanation": method.explanation}
    return methods


def _list_entries(batch: BatchComparison) -> list[dict[str, Any]]:
    entries = []
    for template, counts in batch.lists.items():
        info = batch.list_infos[template]
        entries.append(
            {
                "template": template,
                "method": info.label,
                "pairing": "strict" if "strict pairing" in info.label else "stickler",
                "discovered": info.discovered,
                **counts.as_dict(),
                "counts": counts.cells.as_dict(),
                "metrics": counts.metrics(),
            }
        )
    return entries


_AFTER_OUTCOME = ROW_FIELDS.index("outcome") + 1
REPORT_ROW_FIELDS = (*ROW_FIELDS[:_AFTER_OUTCOME], "matched", *ROW_FIELDS[_AFTER_OUTCOME:])
"""Keys of a report row, in order: a compared row's fields with ``matched`` (TP or
TN) after ``outcome``. The Parquet tables and Spark's per-field rows use this order."""


def _rows(document: DocumentComparison, confident: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for row in document.rows or ():
        record = dict(zip(ROW_FIELDS, expand_row(row), strict=True))
        record["matched"] = record["outcome"] in ("TP", "TN")
        rows.append(record)
        if record["confidence"] is not None:
            confident.append(record)
    return rows


def build_fields_report(
    batch: BatchComparison,
    *,
    include_rows: bool = True,
    intervals: bool | IntervalSettings = True,
) -> dict[str, Any]:
    """The report dict of a batch (see the module docstring for its layout).

    ``intervals``: True gives precision, recall, F1 and accuracy a ``ci`` entry with
    the default settings, an ``IntervalSettings`` chooses them, False leaves them out.
    """
    found = _found_intervals(batch, intervals)
    classes = found.get("classes", {})
    confident: list[dict[str, Any]] = []
    documents = [_document_entry(document, include_rows, confident) for document in batch.documents]
    report: dict[str, Any] = {
        "kind": "fields",
        "package_version": __version__,
        "schema": _schema_entry(batch),
        "settings": dict(batch.settings),
        "overall": {
            "documents": batch.document_count,
            "counts": batch.counts.as_dict(),
            "metrics": batch.metrics,
            "macro_f1": batch.macro_f1,
            "undecided": batch.undecided,
            "undecided_reasons": list(batch.undecided_reasons),
            "unparsed": batch.unparsed,
            **_ci(found.get("overall")),
        },
        "classes": {
            (name if name is not None else UNCLASSIFIED): _class_entry(aggregate, classes.get(name))
            for name, aggregate in batch.classes.items()
        },
        "fields": _field_entries(batch.fields, found.get("fields")),
        "lists": _list_entries(batch),
        "documents": documents,
        "unpaired": {
            "expected_only": list(batch.expected_only),
            "predicted_only": list(batch.predicted_only),
        },
    }
    discovered = _discovered_entry(batch)
    if discovered is not None:
        report["discovered"] = discovered
    if batch.provider_calls:
        report["field_method_calls"] = list(batch.provider_calls)
    if batch.invalid_documents:
        report["invalid_expected"] = {
            "documents": batch.invalid_documents,
            "examples": list(batch.invalid_examples),
        }
    if confident:
        # Imported here: reports without confidence never need NumPy's statistics.
        from docevals_mlflow.core.statistics import rows_calibration

        calibration = rows_calibration(confident)
        if calibration is not None:
            report["calibration"] = calibration.model_dump(mode="json")
    return report


def _document_entry(
    document: Any, include_rows: bool, confident: list[dict[str, Any]]
) -> dict[str, Any]:
    counts: Counts = document.counts
    entry: dict[str, Any] = {
        "id": document.id,
        "class": document.document_class,
        "counts": counts.as_dict(),
        "metrics": counts.metrics(),
        "undecided": sum(document.undecided.values()),
    }
    if include_rows and isinstance(document, DocumentComparison) and document.rows is not None:
        entry["rows"] = _rows(document, confident)
    return entry


def _schema_entry(batch: BatchComparison) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "id": batch.schema_id,
        "version": batch.schema_version,
        "sha256": batch.schema_sha256,
    }
    plugins = _plugin_methods(batch)
    if plugins:
        schema["methods"] = plugins
    return schema


def _class_entry(aggregate: ClassAggregate, intervals: Mapping[str, Any] | None) -> dict[str, Any]:
    found = intervals or {}
    return {
        "configured": aggregate.configured,
        "documents": aggregate.documents,
        "counts": aggregate.counts.as_dict(),
        "metrics": aggregate.counts.metrics(),
        "macro_f1": aggregate.f1_sum / aggregate.f1_documents if aggregate.f1_documents else None,
        "undecided": aggregate.undecided,
        "unparsed": sum(entry.unparsed for entry in aggregate.fields.values()),
        "fields": _field_entries(aggregate.fields, found.get("fields")),
        **_ci(found.get("overall")),
    }


def _discovered_entry(batch: BatchComparison) -> dict[str, Any] | None:
    included = not batch.discovered_fields
    if included:
        fields = {key: item for key, item in batch.fields.items() if item.info.discovered}
        if not fields:
            return None
        totals = Counts()
        for aggregate in fields.values():
            totals.add(aggregate.counts)
    else:
        fields, totals = batch.discovered_fields, batch.discovered_counts
    return {
        "included": included,
        "counts": totals.as_dict(),
        "metrics": totals.metrics(),
        "fields": _field_entries(fields),
    }


def batch_intervals(batch: BatchComparison, settings: IntervalSettings) -> dict[str, Any] | None:
    """The ``ci`` entries of a batch's micro figures, from its per-document cells:
    ``{"overall": {metric: ci}, "fields": {key: ...}, "classes": {name: {"overall",
    "fields": {template: ...}}}}``; None when the batch kept no per-document cells
    (aggregated by Spark) or compared no document."""
    if not batch.document_cells or not batch.documents:
        return None
    import numpy as np

    from docevals_mlflow.core.statistics.cluster_intervals import (
        cell_intervals,
        grouped_cell_intervals,
    )

    stored = np.frombuffer(batch.document_cells, dtype=np.intc).reshape(-1, 7).astype(np.int64)
    documents, fields, cells = stored[:, 0], stored[:, 1], stored[:, 2:]
    keys, names = list(batch.cell_fields), list(batch.classes)
    per_field = grouped_cell_intervals(fields, cells, len(keys), settings=settings)
    size = len(batch.documents)
    totals = np.stack(
        [np.bincount(documents, weights=cells[:, k], minlength=size) for k in range(5)], axis=1
    ).astype(np.int64)
    stream = len(keys)
    result: dict[str, Any] = {
        "overall": cell_intervals(totals, settings=settings, stream=stream),
        "fields": dict(zip(keys, per_field, strict=True)),
        "classes": {},
    }
    if len(names) == 1:
        # One class: its documents are the batch's, so are its intervals.
        result["classes"][names[0]] = {"overall": result["overall"], "fields": result["fields"]}
        return result
    index = {name: position for position, name in enumerate(names)}
    of_document = np.array([index[doc.document_class] for doc in batch.documents], dtype=np.int64)
    per_class = grouped_cell_intervals(
        of_document, totals, len(names), settings=settings, stream=stream + 1
    )
    groups = of_document[documents] * len(keys) + fields
    stream += 1 + len(names)
    per_class_field = grouped_cell_intervals(
        groups, cells, len(names) * len(keys), settings=settings, stream=stream
    )
    for position, name in enumerate(names):
        chosen = per_class_field[position * len(keys) : (position + 1) * len(keys)]
        result["classes"][name] = {
            "overall": per_class[position],
            "fields": dict(zip(keys, chosen, strict=True)),
        }
    return result


def _found_intervals(batch: BatchComparison, intervals: Any) -> dict[str, Any]:
    """:func:`batch_intervals` as ``build_fields_report``'s ``intervals`` asks."""
    if intervals is False:
        return {}
    from docevals_mlflow.core.statistics.cluster_intervals import IntervalSettings

    settings = intervals if isinstance(intervals, IntervalSettings) else IntervalSettings()
    return batch_intervals(batch, settings) or {}


def _ci(intervals: Mapping[str, Any] | None) -> dict[str, Any]:
    """``{"ci": {metric: entry}}`` for a report entry, or nothing."""
    if not intervals:
        return {}
    return {"ci": {name: interval.as_dict() for name, interval in intervals.items()}}
