"""Scoring a pipeline stage with the field-level engine."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from docevals_mlflow.core.cases import EvaluationCase
from docevals_mlflow.core.results import MetricResult
from docevals_mlflow.errors import ConfigurationError
from docevals_mlflow.evaluation.exact import select_exact_references
from docevals_mlflow.fields.compare import DocumentComparison, FieldComparer
from docevals_mlflow.fields.counts import METRIC_NAMES
from docevals_mlflow.fields.schema import DocumentSchema

_STATUS = {"TP": "correct", "TN": "correct", "FA": "incorrect", "FD": "incorrect", "FN": "missing"}


class FieldMetric:
    """Field-by-field comparison of a stage's prediction with its ground truth.

    Uses the schema's method per field (exact, numeric, fuzzy, date, Hungarian list
    matching, ...) and the counting rule of :mod:`docevals_mlflow.fields`. The
    reference is the stage's exact-comparable ``ground_truth`` JSON (else a
    ``generated`` one, and the basis says the result is provisional); evidence is
    never used as truth.

    The verdict is ``pass`` when every leaf is TP or TN; with ``min_scores`` (e.g.
    ``{"f1": 0.95}``) it is ``pass`` when every named metric reaches its minimum
    (FAR and FDR are maxima). The document class comes from ``document_class`` or
    the case's ``metadata["document_class"]``; extraction confidence from
    ``metadata["confidence"]`` (path → value) or ``metadata["explainability_info"]``.
    """

    def __init__(
        self,
        schema: DocumentSchema | None = None,
        *,
        name: str = "fields",
        document_class: str | None = None,
        min_scores: Mapping[str, float] | None = None,
    ) -> None:
        unknown = sorted(set(min_scores or {}) - set(METRIC_NAMES))
        if unknown:
            raise ConfigurationError(
                f"unknown metrics in min_scores: {', '.join(unknown)}",
                expected="any of " + ", ".join(METRIC_NAMES),
            )
        self.name = name
        self.schema = schema if schema is not None else DocumentSchema(schema_id="inferred")
        self.document_class = document_class
        self.min_scores = dict(min_scores or {})
        self._comparer = FieldComparer(self.schema)

    def config(self) -> dict[str, Any]:
        """Settings that change this metric's result."""
        return {
            "schema_sha256": self.schema.sha256,
            "document_class": self.document_class,
            "min_scores": self.min_scores,
        }

    def evaluate(self, case: EvaluationCase) -> MetricResult:
        """Compare the prediction with the selected reference."""
        references, basis = select_exact_references(case)
        documents = [ref for ref in references if ref.content_format == "json"]
        if basis is None or not documents:
            note = (
                "no ground_truth or generated JSON reference to compare field by field"
                if basis is None or not references
                else "path tables name single fields; compare them with ExactStructuredMetric"
            )
            return MetricResult(
                name=self.name, basis=basis or "none", verdict="not_applicable", notes=[note]
            )
        reference = documents[0]
        notes = []
        if len(documents) > 1:
            notes.append(f"{len(documents)} JSON references; compared with {reference.id!r} only")
        metadata = case.metadata
        document = self._comparer.compare(
            reference.content,
            case.prediction,
            document_id=case.case_id,
            document_class=self.document_class or metadata.get("document_class"),
            confidence=metadata.get("confidence"),
            explainability_info=metadata.get("explainability_info"),
        )
        counts = document.counts
        scores = counts.metrics()
        if self.min_scores:
            passed = all(self._meets(metric, scores[metric]) for metric in self.min_scores)
        else:
            passed = counts.fa + counts.fd + counts.fn == 0
        items = document.item_counts()
        return MetricResult(
            name=self.name,
            basis=basis,
            verdict="pass" if passed else "fail",
            scores=scores,
            counts={
                **counts.as_dict(),
                "items_matched": sum(entry.matched for entry in items.values()),
                "items_missed": sum(entry.missed for entry in items.values()),
                "items_extra": sum(entry.extra for entry in items.values()),
            },
            details={
                "schema": {"id": self.schema.schema_id, "sha256": self.schema.sha256},
                "document_class": document.document_class,
                "fields": _wrong_rows(document, reference.id),
                "templates": {
                    template: {**cells.as_dict(), **cells.metrics()}
                    for template, cells in document.field_counts().items()
                },
                "lists": {template: entry.as_dict() for template, entry in items.items()},
            },
            notes=notes,
        )

    def _meets(self, metric: str, value: float | None) -> bool:
        if value is None:
            return False
        minimum = self.min_scores[metric]
        return value <= minimum if metric in ("far", "fdr") else value >= minimum


def _wrong_rows(document: DocumentComparison, reference_id: str) -> list[dict[str, Any]]:
    """The report rows of the fields that were not right (TP or TN), for the details."""
    return [
        {
            "path": row["path"],
            "template": row["template"],
            "method": row["method"],
            "expected": row["expected"],
            "predicted": row["actual"],
            "score": row["score"],
            "outcome": row["outcome"],
            "status": _STATUS[row["outcome"]],
            "confidence": row["confidence"],
            "reason": row["reason"],
            "reference_id": reference_id,
        }
        for row in document.row_dicts()
        if row["outcome"] not in ("TP", "TN")
    ]
