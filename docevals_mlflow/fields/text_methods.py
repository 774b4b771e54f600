"""The graded text methods: ``FUZZY`` (a rapidfuzz scorer) and ``LEVENSHTEIN``
(normalised edit distance), on trimmed, lower-cased text."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from rapidfuzz import fuzz, process
from rapidfuzz.distance import Levenshtein

from docevals_mlflow.fields.comparator import (
    Matrix,
    Scores,
    Vector,
    format_threshold,
    prepare_each,
    similarity_reason,
    text_of,
)

_FUZZ_SCORERS: dict[str, Callable[..., float]] = {
    "ratio": fuzz.ratio,
    "partial_ratio": fuzz.partial_ratio,
    "token_sort_ratio": fuzz.token_sort_ratio,
    "token_set_ratio": fuzz.token_set_ratio,
}


class _SimilarityComparator:
    """Shared parts of the graded text methods."""

    def prepare(self, value: Any) -> Any:
        raise NotImplementedError

    def prepare_many(self, values: Sequence[Any]) -> tuple[list[bool], list[Any]]:
        return prepare_each(self.prepare, values)

    method = "FUZZY"
    threshold = 0.7
    label = "FUZZY"
    _scale = 1.0
    _scorer: Callable[..., float] = fuzz.ratio

    def score(self, expected: Any, predicted: Any) -> float:
        if not expected and not predicted:
            return 1.0
        return float(self._scorer(expected, predicted)) / self._scale

    def matrix(self, expected: Sequence[Any], predicted: Sequence[Any]) -> Matrix:
        if not expected or not predicted:
            return np.zeros((len(expected), len(predicted)), dtype=np.float64)
        scores: Matrix = process.cdist(
            list(expected), list(predicted), scorer=self._scorer, dtype=np.float64
        )
        if self._scale != 1.0:
            scores /= self._scale
        return scores

    def pairwise(
        self, expected: Sequence[Any], predicted: Sequence[Any], left: Vector, right: Vector
    ) -> Scores:
        if not len(left):
            return np.zeros(0, dtype=np.float64)
        # Score distinct x distinct texts once with cdist and look pairs up, unless
        # that table is much larger than the pairs themselves: cdist costs about a
        # twentieth of cpdist per comparison (it preprocesses each query once), and
        # document fields repeat (descriptions, dates, states, currencies).
        left_distinct, right_distinct = dict.fromkeys(expected), dict.fromkeys(predicted)
        if len(left_distinct) * len(right_distinct) <= 16 * len(left):
            # Codes by first appearance; map() over a dict lookup stays in C.
            left_codes = {key: code for code, key in enumerate(left_distinct)}
            right_codes = {key: code for code, key in enumerate(right_distinct)}
            left_index = np.fromiter(
                map(left_codes.__getitem__, expected), np.int64, count=len(expected)
            )
            right_index = np.fromiter(
                map(right_codes.__getitem__, predicted), np.int64, count=len(predicted)
            )
            table = self.matrix(list(left_codes), list(right_codes))
            looked_up: Scores = table[left_index[left], right_index[right]]
            return looked_up
        a = np.array(expected, dtype=object)[left]
        b = np.array(predicted, dtype=object)[right]
        scores: Scores = process.cpdist(a, b, scorer=self._scorer, dtype=np.float64)
        if self._scale != 1.0:
            scores /= self._scale
        return scores

    def reason(self, expected: Any, predicted: Any, score: float) -> str:
        return similarity_reason(score, self.threshold)


_ONLY_TEXT = frozenset({str})


class FuzzyComparator(_SimilarityComparator):
    """``FUZZY``: a rapidfuzz ratio (``ratio``, ``partial_ratio``, ``token_sort_ratio``,
    ``token_set_ratio``) of trimmed, lower-cased text, scaled to [0, 1]."""

    _scale = 100.0

    def __init__(self, *, threshold: float, scorer: str = "ratio") -> None:
        self.method = "FUZZY"
        self.threshold = threshold
        self.scorer_name = scorer
        self._scorer = _FUZZ_SCORERS[scorer]
        kind = "" if scorer == "ratio" else f"{scorer}, "
        self.label = f"FUZZY ({kind}threshold: {format_threshold(threshold)})"

    def prepare(self, value: Any) -> Any:
        if type(value) is str:
            return value.strip().lower()
        return text_of(value).strip().lower()

    def prepare_many(self, values: Sequence[Any]) -> tuple[list[bool], list[Any]]:
        # Checked in C: a column of plain text (the usual case) takes the fast path.
        if not _ONLY_TEXT.issuperset(map(type, values)):
            return prepare_each(self.prepare, values)
        keys = [value.strip().lower() for value in values]
        return list(map(bool, keys)), keys

    def config(self) -> dict[str, Any]:
        return {"method": self.method, "threshold": self.threshold, "scorer": self.scorer_name}


class LevenshteinComparator(_SimilarityComparator):
    """``LEVENSHTEIN``: 1 - edit distance / longer length, on lower-cased text with
    white space collapsed."""

    def __init__(self, *, threshold: float) -> None:
        self.method = "LEVENSHTEIN"
        self.threshold = threshold
        self._scorer = Levenshtein.normalized_similarity
        self.label = f"LEVENSHTEIN (threshold: {format_threshold(threshold)})"

    def prepare(self, value: Any) -> Any:
        return " ".join(text_of(value).lower().split())

    def config(self) -> dict[str, Any]:
        return {"method": self.method, "threshold": self.threshold}
