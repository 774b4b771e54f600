"""ANLS (DocVQA) and ANLS* (Peer et al., 2024, arXiv 2402.03848), as the ``anls-star``
package computes them.

**NLS** of two answers: both are read as text (``str(value)``), trimmed, lower-cased
and white space collapsed; NLS = 1 - Levenshtein distance / the longer length (1 when
both are empty), and 0 when it is below the threshold 0.5.

**ANLS** of a question: the best NLS over its accepted answers; of a set of questions,
the mean of those.

**ANLS\\*** of a ground truth and a prediction, recursively (the score is the sum of
the NLS values found / the number of places compared):

- a *tuple* in the ground truth lists accepted alternatives: the one scoring best
  counts (ties go to the alternative equal to the prediction, then to the first);
- a *list* is matched item to item with the Hungarian algorithm; unmatched items on
  either side count as places scoring 0 (missing and hallucinated items);
- a *dict* is compared key by key (a missing key is ``None``); keys only the
  prediction has count as places scoring 0 unless their value is empty, and even then
  (as the package does) they add a place;
- ``None`` in the ground truth scores 1 against an empty prediction (``None``, ``""``,
  ``[]``, ``{}``) and 0 otherwise;
- values of different kinds score 0 over the larger of their sizes.

A list of strings as the ground truth of a single string is read as alternatives (the
ST-VQA convention the package keeps).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from rapidfuzz.distance import Levenshtein

from docevals_mlflow.core.assignment import linear_sum_assignment
from docevals_mlflow.errors import InputError

THRESHOLD = 0.5
"""NLS below this scores 0 (DocVQA's τ)."""

_LEAF_TYPES = (str, int, float, bool)


def _leaf_text(value: Any) -> str:
    return " ".join(str(value).strip().lower().split())


def nls(expected: Any, predicted: Any, threshold: float = THRESHOLD) -> float:
    """Normalized Levenshtein similarity of two answers, 0 below ``threshold``."""
    left, right = _leaf_text(expected), _leaf_text(predicted)
    longer = max(len(left), len(right))
    score = 1.0 - (Levenshtein.distance(left, right) / longer if longer else 0.0)
    return 0.0 if score < threshold else score


def anls(answers: Sequence[Sequence[str]], predictions: Sequence[str]) -> float:
    """DocVQA's ANLS: per question the best NLS over its accepted answers, averaged."""
    if len(answers) != len(predictions):
        raise InputError(f"got {len(predictions)} predictions for {len(answers)} questions")
    if not answers:
        return 0.0
    scores = []
    for index, (accepted, predicted) in enumerate(zip(answers, predictions, strict=True)):
        if isinstance(accepted, str) or not accepted:
            raise InputError(f"question {index}: expected a non-empty list of accepted answers")
        scores.append(max(nls(answer, predicted) for answer in accepted))
    return float(np.mean(scores))


def _is_none_like(value: Any) -> bool:
    return value is None or (isinstance(value, (str, list, dict)) and not value)


def _size(value: Any, path: str, *, expected: bool) -> int:
    """How many places a value holds (the package's ``len`` of its tree)."""
    if isinstance(value, tuple):
        if not expected:
            raise InputError(f"{path}: a tuple in a prediction; use a list as a container")
        if not value:
            raise InputError(f"{path}: a tuple of alternatives needs at least one")
        return max(_size(item, path, expected=True) for item in value)
    if isinstance(value, list):
        return sum(_size(item, f"{path}[{i}]", expected=expected) for i, item in enumerate(value))
    if isinstance(value, dict):
        return sum(_size(item, f"{path}.{key}", expected=expected) for key, item in value.items())
    if value is None or isinstance(value, _LEAF_TYPES):
        return 1
    raise InputError(
        f"{path}: {type(value).__name__} is not one of str, int, float, bool, None, "
        "list, dict (or tuple of alternatives in the ground truth)"
    )


class _Result:
    """Sum of NLS values, number of places, and the ground truth closest to the prediction."""

    __slots__ = ("closest", "places", "total")

    def __init__(self, total: float, places: int, closest: Any) -> None:
        self.total, self.places, self.closest = total, places, closest

    @property
    def mean(self) -> float:
        return self.total / self.places if self.places > 0 else 1.0


def _compare(expected: Any, predicted: Any, path: str) -> _Result:
    if isinstance(expected, tuple):
        return _best_alternative(expected, predicted, path)
    if isinstance(expected, list):
        if not isinstance(predicted, list):
            return _mismatch(expected, predicted, path)
        return _compare_lists(expected, predicted, path)
    if isinstance(expected, dict):
        if not isinstance(predicted, dict):
            return _mismatch(expected, predicted, path)
        return _compare_dicts(expected, predicted, path)
    if expected is None:
        places = max(1, _size(predicted, path, expected=False))
        if _is_none_like(predicted):
            return _Result(1.0, places, predicted)
        return _Result(0.0, places, None)
    if predicted is None or not isinstance(predicted, _LEAF_TYPES):
        return _mismatch(expected, predicted, path)
    return _Result(nls(expected, predicted), 1, expected)


def _mismatch(expected: Any, predicted: Any, path: str) -> _Result:
    places = max(_size(expected, path, expected=True), _size(predicted, path, expected=False))
    return _Result(0.0, places, expected)


def _best_alternative(expected: tuple[Any, ...], predicted: Any, path: str) -> _Result:
    _size(expected, path, expected=True)
    results = [_compare(option, predicted, f"{path}|{i}") for i, option in enumerate(expected)]
    # max() keeps the first of equal keys, as the package does.
    return max(results, key=lambda result: (result.mean, 1 if result.closest == predicted else 0))


def _compare_lists(expected: list[Any], predicted: list[Any], path: str) -> _Result:
    if not expected or not predicted:
        places = sum(_size(v, f"{path}[{i}]", expected=True) for i, v in enumerate(expected))
        places += sum(_size(v, f"{path}[{i}]", expected=False) for i, v in enumerate(predicted))
        return _Result(0.0, places, list(expected))
    pairs = [
        [_compare(gold, guess, f"{path}[{row}]") for guess in predicted]
        for row, gold in enumerate(expected)
    ]
    means = np.empty((len(expected), len(predicted)), dtype=np.float64)
    for row, results in enumerate(pairs):
        for column, result in enumerate(results):
            mean = result.mean
            if predicted[column] == result.closest:
                # The package's tie-break: an exact pair wins over an equally good one.
                mean = math.nextafter(mean, math.inf)
            means[row, column] = mean
    rows, columns = linear_sum_assignment(means, maximize=True)
    matched = sorted(zip(rows.tolist(), columns.tolist(), strict=True), key=lambda rc: rc[1])
    total = sum(pairs[row][column].total for row, column in matched)
    places = sum(pairs[row][column].places for row, column in matched)
    used_rows = {row for row, _ in matched}
    used_columns = {column for _, column in matched}
    places += sum(
        _size(v, f"{path}[{i}]", expected=True)
        for i, v in enumerate(expected)
        if i not in used_rows
    )
    places += sum(
        _size(v, f"{path}[{i}]", expected=False)
        for i, v in enumerate(predicted)
        if i not in used_columns
    )
    closest = [pairs[row][column].closest for row, column in matched]
    closest += [gold for row, gold in enumerate(expected) if row not in used_rows]
    return _Result(total, places, closest)


def _compare_dicts(expected: dict[Any, Any], predicted: dict[Any, Any], path: str) -> _Result:
    total, places, closest = 0.0, 0, {}
    keys = [*expected, *(key for key in predicted if key not in expected)]
    for key in keys:
        where = f"{path}.{key}"
        gold, guess = expected.get(key), predicted.get(key)
        if key not in expected and _is_none_like(guess):
            # An empty value under an invented key scores nothing, yet still counts
            # as a place: the package's pairwise length takes every key of either side.
            places += max(1, _size(guess, where, expected=False))
            continue
        result = _compare(gold, guess, where)
        total += result.total
        places += result.places
        if not (_is_none_like(result.closest) and key not in predicted):
            closest[key] = result.closest
    return _Result(total, places, closest)


def anls_star(expected: Any, predicted: Any) -> float:
    """ANLS* of a ground truth and a prediction (str, numbers, None, lists, dicts; tuples
    of alternatives in the ground truth), in [0, 1]."""
    if (
        isinstance(expected, list)
        and expected
        and isinstance(predicted, str)
        and all(isinstance(item, str) for item in expected)
    ):
        expected = tuple(expected)
    _size(expected, "$ (expected)", expected=True)
    _size(predicted, "$ (predicted)", expected=False)
    return _compare(expected, predicted, "$").mean
