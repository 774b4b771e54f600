"""What a comparator is: the :class:`Comparator` protocol every field method's
comparator follows, the helpers they share, and :class:`SimpleComparator`, the base
for a plugin method's comparator."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from docevals_mlflow.core.fingerprints import canonical_json
from docevals_mlflow.core.values import is_empty

Matrix = np.ndarray[Any, np.dtype[np.float64]]
Scores = np.ndarray[Any, np.dtype[np.float64]]
Vector = np.ndarray[Any, np.dtype[np.int64]]


class Comparator(Protocol):
    """Scores pairs of non-empty scalar values."""

    method: str
    threshold: float
    """A pair matches when ``score >= threshold``."""
    label: str
    """How reports name the method, e.g. ``FUZZY (threshold: 0.8)``."""

    def prepare(self, value: Any) -> Any:
        """The comparison key of one value (computed once per value)."""
        ...

    def score(self, expected: Any, predicted: Any) -> float:
        """Similarity of two prepared keys, in [0, 1]."""
        ...

    def matrix(self, expected: Sequence[Any], predicted: Sequence[Any]) -> Matrix:
        """``len(expected) x len(predicted)`` similarities of prepared keys."""
        ...

    def prepare_many(self, values: Sequence[Any]) -> tuple[list[bool], list[Any]]:
        """Presence flags and keys of many values (empty values get a blank key)."""
        ...

    def pairwise(
        self,
        expected: Sequence[Any],
        predicted: Sequence[Any],
        left: Vector,
        right: Vector,
    ) -> Scores:
        """Scores of the pairs ``(expected[left[k]], predicted[right[k]])``."""
        ...

    def reason(self, expected: Any, predicted: Any, score: float) -> str:
        """Why a pair of prepared keys matched or not, for report rows."""
        ...

    def config(self) -> dict[str, Any]:
        """Settings that change decisions (for fingerprints and reports)."""
        ...


def text_of(value: Any) -> str:
    """A value as text: objects and lists as canonical JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list)):
        return canonical_json(value)
    return str(value)


def prepare_each(
    prepare: Callable[[Any], Any], values: Sequence[Any]
) -> tuple[list[bool], list[Any]]:
    """``prepare_many`` for any ``prepare``: empty values get the key of ``""``."""
    blank = prepare("")
    present = [not is_empty(value) for value in values]
    keys = [prepare(value) if flag else blank for value, flag in zip(values, present, strict=True)]
    return present, keys


def format_threshold(value: float) -> str:
    """A threshold as labels and reasons show it."""
    return f"{value:g}"


def similarity_reason(score: float, threshold: float) -> str:
    """The reason of a graded pair: an exact match, or its score against the threshold."""
    if score >= 1.0:
        return "Exact match"
    relation = ">=" if score >= threshold else "below"
    return f"Similarity {score:.2f} {relation} threshold {format_threshold(threshold)}"


class SimpleComparator:
    """A base for the comparator of a plugin method: subclass it and write
    :meth:`score` (and :meth:`prepare` when values need a key first).

    Lists are matched by calling :meth:`score` for every pair, in Python: fine for the
    lists of a document; a method that must be fast on long lists writes
    :meth:`matrix` and :meth:`pairwise` itself (see the built-in comparators).
    """

    def __init__(self, method: str, threshold: float, label: str | None = None) -> None:
        self.method = method
        self.threshold = threshold
        self.label = label or f"{method} (threshold: {format_threshold(threshold)})"

    def prepare(self, value: Any) -> Any:
        """The comparison key of one value (by default the value itself)."""
        return value

    def score(self, expected: Any, predicted: Any) -> float:
        """Similarity of two prepared keys, in [0, 1]."""
        raise NotImplementedError

    def prepare_many(self, values: Sequence[Any]) -> tuple[list[bool], list[Any]]:
        """Presence flags and keys of many values (empty values get the key of ``""``)."""
        return prepare_each(self.prepare, values)

    def matrix(self, expected: Sequence[Any], predicted: Sequence[Any]) -> Matrix:
        """``len(expected) x len(predicted)`` similarities of prepared keys."""
        scores: Matrix = np.zeros((len(expected), len(predicted)), dtype=np.float64)
        for row, left in enumerate(expected):
            for column, right in enumerate(predicted):
                scores[row, column] = self.score(left, right)
        return scores

    def pairwise(
        self, expected: Sequence[Any], predicted: Sequence[Any], left: Vector, right: Vector
    ) -> Scores:
        """Scores of the pairs ``(expected[left[k]], predicted[right[k]])``."""
        scores: Scores = np.fromiter(
            (
                self.score(expected[row], predicted[column])
                for row, column in zip(left.tolist(), right.tolist(), strict=True)
            ),
            np.float64,
            count=len(left),
        )
        return scores

    def reason(self, expected: Any, predicted: Any, score: float) -> str:
        """Why a pair matched or not, for report rows."""
        return similarity_reason(score, self.threshold)

    def config(self) -> dict[str, Any]:
        """Settings that change decisions."""
        return {"method": self.method, "threshold": self.threshold}
