"""The seed's ``ExactStructuredMetric`` result shape on the package's comparison.

The comparison is the package's (case-insensitive text, ``"3"`` equals ``3.0``,
escaped keys, TP/TN/FA/FD/FN outcomes); the result is shaped as the seed's:
its ``basis`` names, its four counts, its list of per-field details and its notes
(the last one saying, for a generated reference, that the figures are not accuracy).
"""

from __future__ import annotations

from typing import Any

from docevals_mlflow.core.cases import EvaluationCase
from docevals_mlflow.core.results import MetricResult
from docevals_mlflow.evaluation import exact as native_exact

__all__ = ["AUTHORITATIVE_BASIS", "PROVISIONAL_BASIS", "ExactStructuredMetric"]

AUTHORITATIVE_BASIS = "authoritative_structured_ground_truth"
PROVISIONAL_BASIS = "provisional_ai_generated_consensus"

_BASIS = {
    native_exact.GROUND_TRUTH_BASIS: AUTHORITATIVE_BASIS,
    native_exact.GENERATED_BASIS: PROVISIONAL_BASIS,
    "none": "not_applicable",
}
_SEED_COUNTS = ("expected_fields", "correct", "incorrect", "missing")
_PROVISIONAL_NOTE = (
    "These scores measure agreement with a provisional AI-generated reference, "
    "not accuracy against human ground truth."
)
_NOT_APPLICABLE_NOTE = (
    "No exact-comparable structured ground truth or generated reference was supplied; "
    "exact field metrics were skipped. Arbitrary tables and notes can still be "
    "compared by meaning with an LLM judge."
)


def _field_entry(row: dict[str, Any]) -> dict[str, Any]:
    """A seed per-field detail (``actual``, ``verdict``) keeping the package's outcome
    cell (TP/TN/FA/FD/FN) and source row."""
    return {
        "path": row["path"],
        "expected": row["expected"],
        "actual": row["predicted"],
        "verdict": row["status"],
        "reference_id": row["reference_id"],
        "outcome": row["outcome"],
        "row": row["row"],
    }


class ExactStructuredMetric(native_exact.ExactStructuredMetric):
    """The package's field-by-field comparison with the seed's result shape.

    ``counts`` are the seed's four (``expected_fields``, ``correct``,
    ``incorrect``, ``missing``); the package's outcome cells are in each field's
    ``outcome`` in ``details`` and in :meth:`native_evaluate`. ``scores`` add the
    seed's ``ground_truth_recall`` to the package's.
    """

    def native_evaluate(self, case: EvaluationCase) -> MetricResult:
        """The package's own result (basis, TP/TN/FA/FD/FN counts, details dict)."""
        return super().evaluate(case)

    def evaluate(self, case: EvaluationCase) -> MetricResult:
        """Compare as the package does; shape the result as the seed did."""
        result = self.native_evaluate(case)
        basis = _BASIS.get(result.basis, result.basis)
        if result.verdict == "not_applicable":
            return result.model_copy(
                update={"basis": "not_applicable", "notes": [*result.notes, _NOT_APPLICABLE_NOTE]}
            )
        native_details = result.details if isinstance(result.details, dict) else {}
        rows = native_details.get("fields", [])
        counts = {key: result.counts[key] for key in _SEED_COUNTS}
        scores = {**result.scores, "ground_truth_recall": result.scores.get("field_accuracy")}
        notes = list(result.notes)
        unexpected = result.counts.get("unexpected")
        if unexpected is None:
            notes.append("Unannotated prediction fields are not counted as false positives.")
        else:
            notes.append(
                f"{unexpected} prediction field(s) the complete reference does not mention "
                "count as false positives (precision)."
            )
        notes.append("Lists are compared position by position unless a path table names paths.")
        if basis == PROVISIONAL_BASIS:
            notes.append(_PROVISIONAL_NOTE)
        return result.model_copy(
            update={
                "basis": basis,
                "counts": counts,
                "scores": scores,
                "details": [_field_entry(row) for row in rows],
                "notes": notes,
            }
        )
