"""``NUMERIC_EXACT``: values read as numbers and equal within a tolerance;
text that is not a number matches only identical text."""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from docevals_mlflow.core.values import is_empty
from docevals_mlflow.fields.comparator import (
    Matrix,
    Scores,
    Vector,
    format_threshold,
    text_of,
)
from docevals_mlflow.fields.numbers import parse_number, parse_number_text

_WHOLE_LIMIT = 2.0**53
"""Below this, a whole float is an exact integer and prints as one."""


def _number_text(number: float) -> str:
    """A parsed number as a reason shows it: whole numbers without ``.0``, others as
    the shortest text that reads back to the same float. ``:g`` rounded to six
    digits, so 123456.78 against 123456.79 read ``123457 vs 123457``."""
    if number.is_integer() and abs(number) < _WHOLE_LIMIT:
        return str(int(number))
    return repr(number)


class _TextKey(float):
    """The ``NUMERIC_EXACT`` key of a value that is not a number.

    To arithmetic it is NaN, so it never matches a number and the vectorised paths
    handle it like any unreadable value; it carries the value's normalised text
    (white space collapsed, case folded) for the rule that identical text matches.
    A float, not a string, so that key lists stay plain float arrays to numpy.
    """

    __slots__ = ("text",)
    text: str

    def __new__(cls, text: str) -> _TextKey:
        key = super().__new__(cls, math.nan)
        key.text = text
        return key

    def __reduce__(self) -> tuple[type[_TextKey], tuple[str]]:
        return (_TextKey, (self.text,))

    def __repr__(self) -> str:
        return f"_TextKey({self.text!r})"


def _unreadable_key(value: Any) -> float:
    """The key of a value :func:`parse_number` cannot read (NaN if nothing is left)."""
    # Collapsed and case-folded like the number parser's own view of text, so text
    # identity and readability never disagree about two values.
    text = " ".join(text_of(value).split()).casefold()
    return _TextKey(text) if text else math.nan


def _same_text(expected: Any, predicted: Any) -> bool:
    return (
        type(expected) is _TextKey
        and type(predicted) is _TextKey
        and expected.text == predicted.text
    )


def _any_nan(numbers: Any) -> bool:
    # One reduction is the cheapest test on the small arrays of list items; a sum
    # that overflows to inf - inf only sends a column down the slower exact path.
    return math.isnan(np.add.reduce(numbers))


def _texts_at(keys: Sequence[Any], numbers: Any) -> dict[str, list[int]]:
    """Positions of each text among the keys that are not numbers."""
    positions: dict[str, list[int]] = {}
    for index in np.flatnonzero(np.isnan(numbers)).tolist():
        key = keys[index]
        if type(key) is _TextKey:
            positions.setdefault(key.text, []).append(index)
    return positions


_FLOAT_SLACK = 4 * sys.float_info.epsilon
"""Relative allowance for float rounding in numeric comparisons (about 9e-16)."""


class NumericComparator:
    """``NUMERIC_EXACT``: the numbers are equal within the tolerance.

    Numbers are read by :func:`~docevals_mlflow.fields.numbers.parse_number`
    (currency and unit markers, separators, accounting negatives, percent). A value
    that is not a number matches only a value with the same text once white space is
    collapsed and case ignored (``"N/A"`` and ``"n/a"``): identical text is never a
    mismatch. Keys are floats: the number, NaN for an empty value, or a NaN that
    carries the text of an unreadable value.
    """

    method = "NUMERIC_EXACT"
    threshold = 1.0

    def __init__(self, *, tolerance: float = 0.0, relative_tolerance: float = 0.0) -> None:
        self.tolerance = tolerance
        self.relative_tolerance = relative_tolerance
        parts = []
        if tolerance:
            parts.append(f"tolerance: {format_threshold(tolerance)}")
        if relative_tolerance:
            parts.append(f"relative tolerance: {format_threshold(relative_tolerance)}")
        self.label = f"NUMERIC_EXACT ({', '.join(parts)})" if parts else "NUMERIC_EXACT"

    def prepare(self, value: Any) -> Any:
        number = parse_number(value)
        return _unreadable_key(value) if number is None else number

    def prepare_many(self, values: Sequence[Any]) -> tuple[list[bool], list[Any]]:
        try:
            # Extracted amounts are mostly text: one comprehension per column, and any
            # other type falls through to the general path.
            numbers = [parse_number_text(value) for value in values]
            present = [not value.isspace() for value in values]
        except (TypeError, AttributeError):
            pass
        else:
            if all(values):
                if None not in numbers:
                    return present, numbers
                keys = [
                    _unreadable_key(value) if number is None else number
                    for value, number in zip(values, numbers, strict=True)
                ]
                return present, keys
        present = [not is_empty(value) for value in values]
        keys = [
            self.prepare(value) if flag else math.nan
            for value, flag in zip(values, present, strict=True)
        ]
        return present, keys

    def readable(self, value: Any) -> bool:
        """Whether a present value reads as a number.

        Takes a raw value or the key :meth:`prepare` or :meth:`prepare_many` made of
        it; a key answers without parsing again. Empty values are not readable.
        """
        if type(value) is float:
            return math.isfinite(value)
        if type(value) is _TextKey:
            return False
        return parse_number(value) is not None

    def _bound(self, left: Any, right: Any) -> Any:
        # Slack of a few units in the last place of the magnitudes, so that 0.1 + 0.2
        # against 0.3 is not decided by float rounding; no more, or a tolerance of 0
        # would accept a cent on millions. Written with abs() sums so it broadcasts.
        bound = self.tolerance + _FLOAT_SLACK * (abs(left) + abs(right))
        if self.relative_tolerance:
            bound = bound + self.relative_tolerance * np.maximum(abs(left), abs(right))
        return bound

    def score(self, expected: Any, predicted: Any) -> float:
        if math.isnan(expected) or math.isnan(predicted):
            return 1.0 if _same_text(expected, predicted) else 0.0
        return 1.0 if abs(expected - predicted) <= float(self._bound(expected, predicted)) else 0.0

    def matrix(self, expected: Sequence[Any], predicted: Sequence[Any]) -> Matrix:
        left = np.array(expected, dtype=np.float64)
        right = np.array(predicted, dtype=np.float64)
        rows, columns = left[:, None], right[None, :]
        with np.errstate(invalid="ignore"):
            close = abs(rows - columns) <= self._bound(rows, columns)
        if _any_nan(left) and _any_nan(right):
            right_texts = _texts_at(predicted, right)
            for text, positions in _texts_at(expected, left).items():
                matching = right_texts.get(text)
                if matching is None:
                    continue
                # np.ix_ costs more than the row assignment a single text usually needs.
                if len(positions) == 1:
                    close[positions[0], matching] = True
                else:
                    close[np.ix_(positions, matching)] = True
        scores: Matrix = close.astype(np.float64)
        return scores

    def pairwise(
        self, expected: Sequence[Any], predicted: Sequence[Any], left: Vector, right: Vector
    ) -> Scores:
        a = np.array(expected, dtype=np.float64)[left]
        b = np.array(predicted, dtype=np.float64)[right]
        with np.errstate(invalid="ignore"):
            close = abs(a - b) <= self._bound(a, b)
        scores: Scores = close.astype(np.float64)
        if _any_nan(a) and _any_nan(b):
            # Only pairs unreadable on both sides can be saved by identical text.
            for pair in np.flatnonzero(np.isnan(a) & np.isnan(b)).tolist():
                if _same_text(expected[left[pair]], predicted[right[pair]]):
                    scores[pair] = 1.0
        return scores

    def reason(self, expected: Any, predicted: Any, score: float) -> str:
        if math.isnan(expected) or math.isnan(predicted):
            if _same_text(expected, predicted):
                return "Same text; not a number"
            which = "expected" if math.isnan(expected) else "predicted"
            return f"The {which} value is not a number"
        if score >= 1.0:
            return (
                "Exact numeric match" if expected == predicted else "Numbers match within tolerance"
            )
        return f"Numbers differ ({_number_text(expected)} vs {_number_text(predicted)})"

    def config(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "tolerance": self.tolerance,
            "relative_tolerance": self.relative_tolerance,
        }
