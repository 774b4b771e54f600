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
    from docevals_mlflow.fields.batch import BatchComparison, ClassAggregate, FieldAggregate

__all__ = ["REPORT_ROW_FIELDS", "UNCLASSIFIED", "FieldsReport", "build_fields_report"]

UNCLASSIFIED = "unclassified"
"""The class key of documents that carry no class and match no default class."""


def _field_entries(fields: Mapping[Any, FieldAggregate]) -> list[dict[str, Any]]:
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


def build_fields_report(batch: BatchComparison, *, include_rows: bool = True) -> dict[str, Any]:
    """The report dict of a batch (see the module docstring for its layout)."""
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
        },
        "classes": {
            (name if name is not None else UNCLASSIFIED): _class_entry(aggregate)
            for name, aggregate in batch.classes.items()
        },
        "fields": _field_entries(batch.fields),
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


def _class_entry(aggregate: ClassAggregate) -> dict[str, Any]:
    return {
        "configured": aggregate.configured,
        "documents": aggregate.documents,
        "counts": aggregate.counts.as_dict(),
        "metrics": aggregate.counts.metrics(),
        "macro_f1": aggregate.f1_sum / aggregate.f1_documents if aggregate.f1_documents else None,
        "undecided": aggregate.undecided,
        "unparsed": sum(entry.unparsed for entry in aggregate.fields.values()),
        "fields": _field_entries(aggregate.fields),
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
