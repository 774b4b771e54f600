"""Scalar fields: one comparator, one outcome per comparison, and report rows."""

from __future__ import annotations

from typing import Any

from docevals_mlflow.core.values import is_empty
from docevals_mlflow.fields.methods import Comparator
from docevals_mlflow.fields.registry import registered_field_method
from docevals_mlflow.fields.state import CELL, DocumentState, Row, WrongType

DISCOVERED_NOTE = "[Discovered: not in the schema; compared with {label}]"


class ScalarNode:
    """A scalar field: one comparator and its threshold."""

    __slots__ = (
        "comparator",
        "configured",
        "deferred",
        "discovered",
        "info",
        "label",
        "method",
        "note",
        "readable",
        "structured",
        "template",
        "text_identity",
        "threshold",
        "weight",
    )

    def __init__(
        self,
        template: str,
        comparator: Comparator,
        threshold: float,
        *,
        discovered: bool = False,
        label: str | None = None,
        weight: float = 1.0,
        configured: bool = True,
    ) -> None:
        self.template = template
        self.info: Any = None
        """The node's FieldInfo, made on first use (its label is final by then)."""
        self.configured = configured
        """From the schema: an expected object or list here is an input error."""
        self.weight = weight
        self.comparator = comparator
        self.method = comparator.method
        self.threshold = threshold
        self.label = label or comparator.label
        self.discovered = discovered
        self.note = DISCOVERED_NOTE.format(label=self.label) + " " if discovered else ""
        record = registered_field_method(self.method)
        self.text_identity = record is not None and record.identical_text_matches
        """Two identical non-blank texts are a match without asking the comparator
        (``FieldMethod.identical_text_matches``: every built-in method, since
        ``"RM7.42"`` is ``"RM7.42"`` whatever a parser makes of it)."""
        self.structured = record is not None and record.structured_values
        """The method scores objects and lists as one value (``ANLS_STAR``): they are
        values here, neither a shape mismatch nor a wrong type."""
        self.deferred = bool(getattr(comparator, "deferred", False))
        """Scores come from a provider: collected and decided in one batch."""
        self.readable = getattr(comparator, "readable", None)
        """For numeric fields: whether a value reads as a number (others are counted
        per field as ``unparsed``)."""

    def emit(
        self,
        state: DocumentState,
        path: str,
        ppath: str | None,
        expected: Any,
        actual: Any,
        score: float | None,
        outcome: str,
        reason: str | None,
    ) -> None:
        """Count one leaf comparison (and keep its row).

        ``reason`` may be ``None`` for scored rows: it is derived from the values
        only when a report asks for it (:func:`expand_row`), which keeps string
        formatting out of the hot loop.
        """
        cells = state.cells.get(self.template)
        if cells is None:
            cells = state.cells[self.template] = [0, 0, 0, 0, 0]
            state.nodes[self.template] = self
        cells[CELL[outcome]] += 1
        if state.keep_rows:
            confidence = state.confidence.get(ppath) if state.confidence and ppath else None
            state.rows.append((path, self, expected, actual, score, outcome, confidence, reason))

    def describe(self, expected: Any, actual: Any, score: float) -> str:
        """The reason of a scored comparison, recomputed from the values."""
        comparator = self.comparator
        return comparator.reason(comparator.prepare(expected), comparator.prepare(actual), score)

    def settle_unscored(
        self, expected: Any, predicted: Any, path: str, ppath: str | None, state: DocumentState
    ) -> bool:
        """Emit the row when no score is needed (empty sides, wrong type); True if done."""
        expected_empty = is_empty(expected)
        if type(predicted) is WrongType:
            outcome, score = ("FA", None) if expected_empty else ("FD", 0.0)
            self.emit(
                state, path, ppath, expected, predicted.value, score, outcome, predicted.reason()
            )
            return True
        predicted_empty = is_empty(predicted)
        if expected_empty:
            if predicted_empty:
                self.emit(state, path, ppath, expected, predicted, None, "TN", "Both empty")
            elif (type(predicted) is dict or type(predicted) is list) and not self.structured:
                reason = WrongType(predicted, "a single value").reason()
                self.emit(state, path, ppath, expected, predicted, None, "FA", reason)
            else:
                self.emit(
                    state, path, ppath, expected, predicted, None, "FA",
                    "Predicted a value where none was expected",
                )  # fmt: skip
            return True
        if predicted_empty:
            self.emit(
                state, path, ppath, expected, predicted, None, "FN", "Missing from the prediction"
            )
            return True
        if (type(predicted) is dict or type(predicted) is list) and not self.structured:
            reason = WrongType(predicted, "a single value").reason()
            self.emit(state, path, ppath, expected, predicted, 0.0, "FD", reason)
            return True
        return False

    def settle_scored(
        self,
        expected: Any,
        predicted: Any,
        left: Any,
        right: Any,
        score: float,
        path: str,
        ppath: str | None,
        state: DocumentState,
    ) -> None:
        """Emit TP or FD for two present values whose keys scored ``score``."""
        outcome = "TP" if score >= self.comparator.threshold else "FD"
        self.emit(state, path, ppath, expected, predicted, score, outcome, None)

    def count_unparsed(self, state: DocumentState, *values: Any) -> None:
        """Count the values a numeric field cannot read as numbers."""
        readable = self.readable
        if readable is None:
            return
        unread = sum(1 for value in values if not is_empty(value) and not readable(value))
        if unread:
            state.unparsed[self.template] = state.unparsed.get(self.template, 0) + unread

    def compare(
        self, expected: Any, predicted: Any, path: str, ppath: str | None, state: DocumentState
    ) -> None:
        if type(expected) is str and type(predicted) is str:
            # Two texts, the usual case: no emptiness or shape checks beyond this.
            if expected == predicted and self.text_identity and expected.strip():
                # Identical text scores 1 under every method; skip preparing it.
                if self.readable is not None:
                    self.count_unparsed(state, expected, predicted)
                self.emit(state, path, ppath, expected, predicted, 1.0, "TP", None)
                return
            if expected.strip() and predicted.strip():
                if self.readable is not None:
                    self.count_unparsed(state, expected, predicted)
                comparator = self.comparator
                left, right = comparator.prepare(expected), comparator.prepare(predicted)
                if self.deferred:
                    state.deferred.append((self, expected, predicted, left, right, path, ppath))
                    return
                score = comparator.score(left, right)
                self.emit(
                    state,
                    path,
                    ppath,
                    expected,
                    predicted,
                    score,
                    "TP" if score >= comparator.threshold else "FD",
                    None,
                )
                return
        if (
            self.configured
            and not self.structured
            and (type(expected) is dict or type(expected) is list)
            and expected
        ):
            state.violation(path, "a single value", expected)
            return
        if self.readable is not None:
            self.count_unparsed(state, expected, predicted)
        if self.settle_unscored(expected, predicted, path, ppath, state):
            return
        comparator = self.comparator
        left, right = comparator.prepare(expected), comparator.prepare(predicted)
        if self.deferred:
            state.deferred.append((self, expected, predicted, left, right, path, ppath))
            return
        self.settle_scored(
            expected, predicted, left, right, comparator.score(left, right), path, ppath, state
        )

    def one_sided(
        self, value: Any, path: str, ppath: str | None, state: DocumentState, expected_side: bool
    ) -> None:
        """Leaves of an unpaired list item: FN on the expected side, FA on the predicted."""
        if is_empty(value):
            return
        if self.readable is not None:
            self.count_unparsed(state, value)
        if expected_side:
            if self.configured and not self.structured and type(value) in (dict, list):
                state.violation(path, "a single value", value)
                return
            self.emit(
                state,
                path,
                None,
                value,
                None,
                None,
                "FN",
                "Expected item has no matching predicted item",
            )
        else:
            self.emit(
                state,
                path,
                ppath,
                None,
                value,
                None,
                "FA",
                "Predicted item matches no expected item",
            )

    def weak_leaf(
        self,
        expected: Any,
        predicted: Any,
        path: str,
        ppath: str | None,
        state: DocumentState,
        reason: str,
    ) -> None:
        """A leaf of a weak pair (two items paired below the match threshold): FD where
        both sides hold a value, whatever their own score (the items are not the same
        item), FN or FA where one does, nothing where neither does."""
        if self.configured and not self.structured and type(expected) in (dict, list) and expected:
            state.violation(path, "a single value", expected)
            return
        if self.readable is not None:
            self.count_unparsed(state, expected, predicted)
        expected_empty, predicted_empty = is_empty(expected), is_empty(predicted)
        if expected_empty and predicted_empty:
            return
        if expected_empty:
            self.emit(state, path, ppath, expected, predicted, None, "FA", reason)
        elif predicted_empty:
            self.emit(state, path, ppath, expected, predicted, None, "FN", reason)
        else:
            self.emit(state, path, ppath, expected, predicted, None, "FD", reason)


def expand_row(row: Row) -> tuple[Any, ...]:
    """A compact row in ``ROW_FIELDS`` order, with its reason filled in."""
    path, node, expected, actual, score, outcome, confidence, reason = row
    if score is not None and score != score:  # NaN: rows decided in bulk had no score
        score = None
    if reason is None:
        reason = node.describe(expected, actual, score)
    if node.note:
        reason = node.note + reason
    return (
        path,
        node.template,
        node.label,
        node.threshold,
        expected,
        actual,
        score,
        outcome,
        confidence,
        node.discovered,
        reason,
    )
