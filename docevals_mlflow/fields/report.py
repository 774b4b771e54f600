"""The JSON report of a field comparison, with stable keys.

Built as plain dicts (a batch can hold millions of rows, and a pydantic object per
row would cost more than the comparison itself); :class:`FieldsReport` validates a
report read back from disk.

Layout::

    {"kind": "fields", "package_version", "schema": {"id", "version", "sha256"},
     "overall": {"documents", "counts": {tp, fa, fd, fn, tn}, "metrics": {...}, "macro_f1",
                 "undecided", "undecided_reasons": [...]},
     "classes": {"<name>": {"configured", "documents", "counts", "metrics", "macro_f1",
                            "undecided", "fields": [...]}},
     "fields": [{"template", "method", "method_name", "threshold", "discovered",
                 "counts", "metrics", "undecided"}],
     "lists": [{"template", "method", "matched", "missed", "extra"}],
     "documents": [{"id", "class", "counts", "metrics", "undecided", "rows": [...]}],
     "unpaired": {"expected_only": [...], "predicted_only": [...]},
     "calibration": {...}}   # only when rows carry extraction confidence

``undecided`` counts the comparisons a provider (SEMANTIC, LLM) failed to decide. They
are inside ``counts`` as FD, the worst case, so the metrics are lower bounds while it
is above zero; ``undecided_reasons`` says why (each distinct reason once).

``calibration`` (:class:`~docevals_mlflow.core.diagnostics.ConfidenceCalibration`)
measures extraction confidence against correctness: AUROC, Brier, ECE per field and
overall, and the review budget of the least confident fields. It needs rows, so a
report built without them has none.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ConfigDict, Field

from docevals_mlflow._version import __version__
from docevals_mlflow.core.diagnostics import ConfidenceCalibration
from docevals_mlflow.core.model import DocEvalsModel
from docevals_mlflow.fields.compare import DocumentComparison
from docevals_mlflow.fields.counts import Counts
from docevals_mlflow.fields.leaves import expand_row
from docevals_mlflow.fields.state import ROW_FIELDS

if TYPE_CHECKING:
    from docevals_mlflow.fields.batch import BatchComparison, FieldAggregate

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
        }
        for entry in fields.values()
    ]


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
    documents = []
    confident: list[dict[str, Any]] = []
    for document in batch.documents:
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
        documents.append(entry)
    report: dict[str, Any] = {
        "kind": "fields",
        "package_version": __version__,
        "schema": {
            "id": batch.schema_id,
            "version": batch.schema_version,
            "sha256": batch.schema_sha256,
        },
        "overall": {
            "documents": batch.document_count,
            "counts": batch.counts.as_dict(),
            "metrics": batch.metrics,
            "macro_f1": batch.macro_f1,
            "undecided": batch.undecided,
            "undecided_reasons": list(batch.undecided_reasons),
        },
        "classes": {
            (name if name is not None else UNCLASSIFIED): {
                "configured": aggregate.configured,
                "documents": aggregate.documents,
                "counts": aggregate.counts.as_dict(),
                "metrics": aggregate.counts.metrics(),
                "macro_f1": (
                    aggregate.f1_sum / aggregate.f1_documents if aggregate.f1_documents else None
                ),
                "undecided": aggregate.undecided,
                "fields": _field_entries(aggregate.fields),
            }
            for name, aggregate in batch.classes.items()
        },
        "fields": _field_entries(batch.fields),
        "lists": [
            {"template": template, "method": batch.list_labels[template], **counts.as_dict()}
            for template, counts in batch.lists.items()
        ],
        "documents": documents,
        "unpaired": {
            "expected_only": list(batch.expected_only),
            "predicted_only": list(batch.predicted_only),
        },
    }
    if confident:
        # Imported here: reports without confidence never need it.
        from docevals_mlflow.diagnostics.calibration import rows_calibration

        calibration = rows_calibration(confident)
        if calibration is not None:
            report["calibration"] = calibration.model_dump(mode="json")
    return report


class CellCounts(DocEvalsModel):
    """TP / FA / FD / FN / TN."""

    tp: int
    fa: int
    fd: int
    fn: int
    tn: int


class MetricValues(DocEvalsModel):
    """Derived metrics; ``None`` where a denominator is zero."""

    precision: float | None
    recall: float | None
    f1: float | None
    accuracy: float | None
    far: float | None
    fdr: float | None


class FieldEntry(DocEvalsModel):
    """One field template's figures."""

    template: str
    method: str
    method_name: str
    threshold: float | None
    discovered: bool
    counts: CellCounts
    metrics: MetricValues
    undecided: int = 0


class ListEntry(DocEvalsModel):
    """One list template's item counts."""

    template: str
    method: str
    matched: int
    missed: int
    extra: int


class RowEntry(DocEvalsModel):
    """One leaf comparison."""

    path: str
    template: str
    method: str
    threshold: float | None
    expected: Any
    actual: Any
    score: float | None
    outcome: Literal["TP", "FA", "FD", "FN", "TN"]
    matched: bool
    confidence: float | None
    discovered: bool
    reason: str


class DocumentEntry(DocEvalsModel):
    """One document's figures (and rows, when kept)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    id: str | None
    document_class: str | None = Field(alias="class")
    counts: CellCounts
    metrics: MetricValues
    undecided: int = 0
    rows: list[RowEntry] | None = None


class OverallEntry(DocEvalsModel):
    """Batch figures: micro metrics from summed cells, plus the macro mean of F1."""

    documents: int
    counts: CellCounts
    metrics: MetricValues
    macro_f1: float | None
    undecided: int = 0
    """Comparisons a provider failed to decide (inside ``counts`` as FD)."""
    undecided_reasons: list[str] = Field(default_factory=list)


class ClassEntry(DocEvalsModel):
    """One document class's figures."""

    configured: bool
    documents: int
    counts: CellCounts
    metrics: MetricValues
    macro_f1: float | None
    undecided: int = 0
    fields: list[FieldEntry]


class SchemaEntry(DocEvalsModel):
    """Which schema decided the comparisons."""

    id: str
    version: str
    sha256: str


class Unpaired(DocEvalsModel):
    """Ids present on one side only."""

    expected_only: list[str]
    predicted_only: list[str]


class FieldsReport(DocEvalsModel):
    """A field comparison report, as written by ``docevals fields``."""

    kind: Literal["fields"] = "fields"
    package_version: str
    schema_: SchemaEntry = Field(alias="schema")
    overall: OverallEntry
    classes: dict[str, ClassEntry]
    fields: list[FieldEntry]
    lists: list[ListEntry]
    documents: list[DocumentEntry]
    unpaired: Unpaired
    calibration: ConfidenceCalibration | None = None

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
