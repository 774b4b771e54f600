"""Deterministic comparison of a structured prediction with structured references."""

from __future__ import annotations

from typing import Any

from docevals_mlflow.core.artifacts import ReferenceArtifact
from docevals_mlflow.core.cases import EvaluationCase
from docevals_mlflow.core.claims import ExpectedClaim, reference_claims
from docevals_mlflow.core.paths import FieldPath, format_path, iter_leaves, lookup
from docevals_mlflow.core.results import MetricResult
from docevals_mlflow.core.values import is_empty, values_equal
from docevals_mlflow.errors import ConfigurationError

GROUND_TRUTH_BASIS = "ground_truth"
GENERATED_BASIS = "generated (provisional: agreement with an AI-generated reference, not accuracy)"

_STATUS = {"TP": "correct", "TN": "correct", "FA": "incorrect", "FD": "incorrect", "FN": "missing"}


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def select_exact_references(case: EvaluationCase) -> tuple[list[ReferenceArtifact], str | None]:
    """The references deterministic metrics compare against, and the basis they give.

    Exact-comparable ground truth if there is any, else exact-comparable generated
    references (a provisional basis), never evidence. ``(refs, None)`` when none.
    """
    usable = [reference for reference in case.references if reference.exact_comparable]
    truth = [reference for reference in usable if reference.authority == "ground_truth"]
    if truth:
        return truth, GROUND_TRUTH_BASIS
    generated = [reference for reference in usable if reference.authority == "generated"]
    if generated:
        return generated, GENERATED_BASIS
    return [], None


class ExactStructuredMetric:
    """Field-by-field comparison of the prediction with structured references.

    Expected fields come from exact-comparable ``ground_truth`` references (JSON
    values, path tables, or any table in ``exact`` mode); when there are none, from
    ``generated`` references, and the basis then says the result is provisional.
    Evidence is never used as truth.

    Each expected leaf gets one outcome: TP (match), TN (both empty), FA (expected
    empty, predicted present), FD (wrong value) or FN (missing). Values compare under
    the policy of :func:`docevals_mlflow.core.values.values_equal`: numbers within
    the tolerances (``"3"`` equals ``3.0``), booleans and ``"true"``/``"false"``,
    text trimmed and case-insensitive unless ``case_sensitive=True``. Lists are
    compared position by position.

    When every reference is a complete JSON document, prediction leaves it does not
    mention are counted as ``unexpected`` and lower precision; path tables name only
    some fields, so extra fields are not counted against them.

    Scores: ``field_accuracy`` (correct / expected fields), ``accuracy_when_present``,
    ``missing_rate``, ``precision``, ``recall``, ``f1``. The verdict is pass when
    nothing is incorrect or missing (and, with ``fail_on_unexpected``, nothing is
    unexpected); not applicable when there is no usable reference.
    """

    def __init__(
        self,
        relative_tolerance: float = 1e-6,
        absolute_tolerance: float = 1e-6,
        *,
        name: str = "exact_structured",
        case_sensitive: bool = False,
        fail_on_unexpected: bool = False,
    ) -> None:
        if relative_tolerance < 0 or absolute_tolerance < 0:
            raise ConfigurationError(
                f"tolerances must be >= 0, got relative {relative_tolerance}, "
                f"absolute {absolute_tolerance}"
            )
        self.name = name
        self.relative_tolerance = relative_tolerance
        self.absolute_tolerance = absolute_tolerance
        self.case_sensitive = case_sensitive
        self.fail_on_unexpected = fail_on_unexpected

    def config(self) -> dict[str, Any]:
        """Settings that change this metric's result."""
        return {
            "relative_tolerance": self.relative_tolerance,
            "absolute_tolerance": self.absolute_tolerance,
            "case_sensitive": self.case_sensitive,
            "fail_on_unexpected": self.fail_on_unexpected,
        }

    def _outcome(self, expected: Any, found: bool, predicted: Any) -> str:
        predicted_empty = not found or is_empty(predicted)
        if is_empty(expected):
            return "TN" if predicted_empty else "FA"
        if predicted_empty:
            return "FN"
        same = values_equal(
            expected,
            predicted,
            relative_tolerance=self.relative_tolerance,
            absolute_tolerance=self.absolute_tolerance,
            case_sensitive=self.case_sensitive,
        )
        return "TP" if same else "FD"

    def evaluate(self, case: EvaluationCase) -> MetricResult:
        """Compare ``case.prediction`` with the selected references."""
        references, basis = select_exact_references(case)
        if basis is None:
            return MetricResult(
                name=self.name,
                basis="none",
                verdict="not_applicable",
                notes=[
                    "no exact-comparable ground_truth or generated reference; "
                    "evidence is never used as truth (use a judge for it)"
                ],
            )
        claims: list[ExpectedClaim] = []
        for reference in references:
            claims.extend(reference_claims(reference))
        if not claims:
            return MetricResult(
                name=self.name,
                basis=basis,
                verdict="not_applicable",
                notes=["the references name no expected fields"],
            )
        cells, rows, notes = self._compare_claims(case.prediction, claims)
        unexpected = self._unexpected(case.prediction, claims, references, rows)
        counts, scores = _figures(cells, len(claims), unexpected)
        incorrect, missing = counts["incorrect"], counts["missing"]
        failed = incorrect > 0 or missing > 0 or (self.fail_on_unexpected and bool(unexpected))
        return MetricResult(
            name=self.name,
            basis=basis,
            verdict="fail" if failed else "pass",
            scores=scores,
            counts=counts,
            details={"fields": rows, "references": [reference.id for reference in references]},
            notes=notes,
        )

    def _compare_claims(
        self, prediction: Any, claims: list[ExpectedClaim]
    ) -> tuple[dict[str, int], list[dict[str, Any]], list[str]]:
        """Each claim's outcome (the TP/TN/FA/FD/FN cells and report rows), and notes
        on references that disagree about a field."""
        cells = dict.fromkeys(("TP", "TN", "FA", "FD", "FN"), 0)
        rows: list[dict[str, Any]] = []
        notes: list[str] = []
        first_value: dict[FieldPath, tuple[str, Any]] = {}
        for claim in claims:
            found, predicted = lookup(prediction, claim.path)
            outcome = self._outcome(claim.expected, found, predicted)
            cells[outcome] += 1
            path_text = format_path(claim.path)
            rows.append(
                {
                    "path": path_text,
                    "expected": claim.expected,
                    "predicted": predicted if found else None,
                    "outcome": outcome,
                    "status": _STATUS[outcome],
                    "reference_id": claim.reference_id,
                    "row": claim.row,
                }
            )
            earlier = first_value.setdefault(claim.path, (claim.reference_id, claim.expected))
            if earlier[0] != claim.reference_id and not values_equal(earlier[1], claim.expected):
                notes.append(
                    f"references {earlier[0]!r} and {claim.reference_id!r} disagree at {path_text}"
                )
        return cells, rows, notes

    @staticmethod
    def _unexpected(
        prediction: Any,
        claims: list[ExpectedClaim],
        references: list[ReferenceArtifact],
        rows: list[dict[str, Any]],
    ) -> int | None:
        # Path tables list only some fields, so "not mentioned" means nothing there.
        if any(reference.content_format == "path_table" for reference in references):
            return None
        claimed = {claim.path for claim in claims}
        count = 0
        for path, value in iter_leaves(prediction):
            if is_empty(value) or any(path[:depth] in claimed for depth in range(len(path) + 1)):
                continue
            count += 1
            rows.append(
                {
                    "path": format_path(path),
                    "expected": None,
                    "predicted": value,
                    "outcome": "FA",
                    "status": "unexpected",
                    "reference_id": None,
                    "row": None,
                }
            )
        return count


def _figures(
    cells: dict[str, int], expected_fields: int, unexpected: int | None
) -> tuple[dict[str, int], dict[str, float | None]]:
    """The counts and scores of the outcome cells (``unexpected`` predicted fields
    count as false positives when they were looked for)."""
    correct = cells["TP"] + cells["TN"]
    incorrect = cells["FA"] + cells["FD"]
    missing = cells["FN"]
    false_positives = incorrect + (unexpected or 0)
    counts = {
        "expected_fields": expected_fields,
        "correct": correct,
        "incorrect": incorrect,
        "missing": missing,
        **{key.lower(): value for key, value in cells.items()},
    }
    if unexpected is not None:
        counts["unexpected"] = unexpected
    tp = cells["TP"]
    scores = {
        "field_accuracy": _ratio(correct, expected_fields),
        "accuracy_when_present": _ratio(correct, correct + incorrect),
        "missing_rate": _ratio(missing, expected_fields),
        "precision": _ratio(tp, tp + false_positives),
        "recall": _ratio(tp, tp + missing),
        "f1": _ratio(2 * tp, 2 * tp + false_positives + missing),
    }
    return counts, scores
