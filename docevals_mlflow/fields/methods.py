"""Comparison methods for scalar values: one score in [0, 1] per pair, and matrices.

Every method has two paths that must agree: :meth:`Comparator.score` for one pair
(scalar leaves) and :meth:`Comparator.matrix` for every pair of two lists (list
matching, vectorised with numpy and ``rapidfuzz.process.cdist``). Values are first
turned into *keys* by :meth:`Comparator.prepare` once each, so a list of n items is
normalised n times, not n² times.

A pair matches when its score is at least the comparator's ``threshold``
(inclusive). ``NUMERIC_EXACT`` turns its tolerance into a 0/1 score, so its decision
threshold is 1.

Parity with Stickler (the IDP accelerator's engine): ``EXACT`` is its
``ExactComparator`` (``str(a) == str(b)``, case-sensitive); ``FUZZY`` its
``FuzzyComparator`` (rapidfuzz scorer on trimmed, lower-cased text, / 100);
``LEVENSHTEIN`` its ``LevenshteinComparator``; ``NUMERIC_EXACT`` its
``NumericComparator`` with the threshold as absolute tolerance, except where our
number parsing is deliberately better (see ``docs/field-methods.md``).
"""

from __future__ import annotations

import math
import re
import sys
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import numpy as np
from rapidfuzz import fuzz, process
from rapidfuzz.distance import Levenshtein

from docevals_mlflow.core.fingerprints import canonical_json
from docevals_mlflow.core.values import is_empty
from docevals_mlflow.errors import ConfigurationError
from docevals_mlflow.fields.dates import parse_date
from docevals_mlflow.fields.numbers import parse_number, parse_number_text
from docevals_mlflow.fields.registry import (
    BUILTIN_METHODS,
    ENTRY_POINT_GROUP,
    find_field_method,
)
from docevals_mlflow.fields.schema import FieldSpec

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


def _text(value: Any) -> str:
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


def _format_threshold(value: float) -> str:
    return f"{value:g}"


class _EqualityComparator:
    """Shared matrix for methods whose score is 1 when keys are equal, else 0."""

    method = "EXACT"
    threshold = 1.0
    label = "EXACT"

    def prepare(self, value: Any) -> Any:
        raise NotImplementedError

    def prepare_many(self, values: Sequence[Any]) -> tuple[list[bool], list[Any]]:
        return prepare_each(self.prepare, values)

    def score(self, expected: Any, predicted: Any) -> float:
        return 1.0 if expected == predicted else 0.0

    def matrix(self, expected: Sequence[Any], predicted: Sequence[Any]) -> Matrix:
        # Equal keys share an integer code, so the n x m comparison is one numpy op.
        codes: dict[Any, int] = {}
        left = np.fromiter((codes.setdefault(key, len(codes)) for key in expected), np.int64)
        right = np.fromiter((codes.setdefault(key, len(codes)) for key in predicted), np.int64)
        equal: Matrix = (left[:, None] == right[None, :]).astype(np.float64)
        return equal

    def pairwise(
        self, expected: Sequence[Any], predicted: Sequence[Any], left: Vector, right: Vector
    ) -> Scores:
        codes: dict[Any, int] = {}
        left_codes = np.fromiter((codes.setdefault(key, len(codes)) for key in expected), np.int64)
        right_codes = np.fromiter(
            (codes.setdefault(key, len(codes)) for key in predicted), np.int64
        )
        equal: Scores = (left_codes[left] == right_codes[right]).astype(np.float64)
        return equal


class ExactComparator(_EqualityComparator):
    """``EXACT``: the texts are identical (case-sensitive unless configured).

    Scores are 0 or 1, so a threshold below 1 accepts any present value, as in
    Stickler; the default is 1.
    """

    def __init__(self, *, case_sensitive: bool = True, threshold: float = 1.0) -> None:
        self.threshold = threshold
        self.case_sensitive = case_sensitive
        self.method = "EXACT"
        self.label = "EXACT" if case_sensitive else "EXACT (case-insensitive)"

    def prepare(self, value: Any) -> Any:
        text = _text(value)
        return text if self.case_sensitive else text.casefold()

    def reason(self, expected: Any, predicted: Any, score: float) -> str:
        return "Exact match" if score >= 1.0 else "Values do not match exactly"

    def config(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "case_sensitive": self.case_sensitive,
            "threshold": self.threshold,
        }


_PUNCTUATION = re.compile(r"[\W_]+", re.UNICODE)


class NormalizedComparator(_EqualityComparator):
    """``NORMALIZED``: equal after NFKC, case folding and dropping punctuation/spaces."""

    def __init__(self, *, case_sensitive: bool = False, threshold: float = 1.0) -> None:
        self.threshold = threshold
        self.case_sensitive = case_sensitive
        self.method = "NORMALIZED"
        self.label = "NORMALIZED"

    def prepare(self, value: Any) -> Any:
        text = unicodedata.normalize("NFKC", _text(value))
        if not self.case_sensitive:
            text = text.casefold()
        return " ".join(_PUNCTUATION.sub(" ", text).split())

    def reason(self, expected: Any, predicted: Any, score: float) -> str:
        if score >= 1.0:
            return "Match after normalising case, spaces and punctuation"
        return "Values differ after normalisation"

    def config(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "case_sensitive": self.case_sensitive,
            "threshold": self.threshold,
        }


class DateComparator(_EqualityComparator):
    """``DATE``: the same calendar day, whatever the format; text equality otherwise."""

    def __init__(self, *, order: str = "month_first", threshold: float = 1.0) -> None:
        self.threshold = threshold
        self.order = order
        self.method = "DATE"
        self.label = "DATE" if order == "month_first" else "DATE (day first)"

    def prepare(self, value: Any) -> Any:
        parsed = parse_date(
            value, order="day_first" if self.order == "day_first" else "month_first"
        )
        if parsed is not None:
            return ("date", parsed.toordinal())
        return ("text", " ".join(_text(value).casefold().split()))

    def reason(self, expected: Any, predicted: Any, score: float) -> str:
        if expected[0] == "text" or predicted[0] == "text":
            which = "expected" if expected[0] == "text" else "predicted"
            outcome = "texts equal" if score >= 1.0 else "texts differ"
            return f"The {which} value is not a date; {outcome}"
        return "Same date" if score >= 1.0 else "Different dates"

    def config(self) -> dict[str, Any]:
        return {"method": self.method, "order": self.order, "threshold": self.threshold}


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
    text = " ".join(_text(value).split()).casefold()
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
            parts.append(f"tolerance: {_format_threshold(tolerance)}")
        if relative_tolerance:
            parts.append(f"relative tolerance: {_format_threshold(relative_tolerance)}")
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
        return f"Numbers differ ({expected:g} vs {predicted:g})"

    def config(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "tolerance": self.tolerance,
            "relative_tolerance": self.relative_tolerance,
        }


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
        if score >= 1.0:
            return "Exact match"
        relation = ">=" if score >= self.threshold else "below"
        return f"Similarity {score:.2f} {relation} threshold {_format_threshold(self.threshold)}"


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
        self.label = f"FUZZY ({kind}threshold: {_format_threshold(threshold)})"

    def prepare(self, value: Any) -> Any:
        if type(value) is str:
            return value.strip().lower()
        return _text(value).strip().lower()

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
        self.label = f"LEVENSHTEIN (threshold: {_format_threshold(threshold)})"

    def prepare(self, value: Any) -> Any:
        return " ".join(_text(value).lower().split())

    def config(self) -> dict[str, Any]:
        return {"method": self.method, "threshold": self.threshold}


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
        self.label = label or f"{method} (threshold: {_format_threshold(threshold)})"

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
        if score >= 1.0:
            return "Exact match"
        relation = ">=" if score >= self.threshold else "below"
        return f"Similarity {score:.2f} {relation} threshold {_format_threshold(self.threshold)}"

    def config(self) -> dict[str, Any]:
        """Settings that change decisions."""
        return {"method": self.method, "threshold": self.threshold}


ProviderFactory = Callable[[FieldSpec], Comparator]
"""Builds a comparator for a method that needs an outside provider (SEMANTIC, LLM)."""


def make_comparator(
    spec: FieldSpec,
    *,
    providers: Mapping[str, ProviderFactory] | None = None,
    where: str = "",
) -> Comparator:
    """The comparator for a scalar field spec, built by its method's registered
    factory (:mod:`docevals_mlflow.fields.registry`).

    Methods a provider decides (``SEMANTIC``, ``LLM``: an embedding model or a judge)
    take their factory from ``providers``; without one they are a configuration error
    naming the field.
    """
    method = spec.effective_method
    record = find_field_method(method)
    if record is None:
        # A spec validated where a plugin was present, compiled where it is not.
        raise ConfigurationError(
            f"unknown field method {method!r}",
            path=where or None,
            expected=f"the plugin that provides it installed (entry point group "
            f"{ENTRY_POINT_GROUP}) or registered with register_field_method()",
        )
    factory = (providers or {}).get(method) if record.provider else record.factory
    if factory is None:
        raise ConfigurationError(
            f"method {method} needs a provider (an embedding model or an LLM judge) and "
            "none is configured",
            path=where or None,
            expected="a provider for this method, or one of "
            + ", ".join(known.name for known in BUILTIN_METHODS if not known.provider),
        )
    comparator = factory(spec)
    if not record.provider and comparator.method != method:
        # Reports, list labels and the fast path look the method up by this name.
        raise ConfigurationError(
            f"the factory of field method {method} built a comparator whose method is "
            f"{comparator.method!r}",
            path=where or None,
            expected=f"a comparator with method = {method!r}",
        )
    return comparator


def value_kind(value: Any) -> str:
    """The shape of a value, which decides the inferred rule for an unconfigured field:
    ``text``, ``number``, ``bool``, ``object``, or ``list:`` and the items' kind."""
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list):
        sample = next((item for item in value if not is_empty(item)), None)
        return "list:" + ("text" if sample is None else value_kind(sample))
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return "text"


def infer_spec(kind: str) -> FieldSpec:
    """The rule for a field the schema does not configure, from its :func:`value_kind`.

    IDP's inference rules: numbers NUMERIC_EXACT with tolerance 0.01, booleans EXACT,
    everything else FUZZY with threshold 0.85. Objects get no fixed attributes: each
    document's own keys are compared, so one document never shapes another's result.
    """
    if kind.startswith("list:"):
        return FieldSpec(items=infer_spec(kind[5:]))
    return _INFERRED[kind]


INFERRED_TEXT = FieldSpec(method="FUZZY", threshold=0.85)
INFERRED_NUMBER = FieldSpec(method="NUMERIC_EXACT", threshold=0.01)
INFERRED_BOOLEAN = FieldSpec(method="EXACT")
_INFERRED: dict[str, FieldSpec] = {
    "text": INFERRED_TEXT,
    "number": INFERRED_NUMBER,
    "bool": INFERRED_BOOLEAN,
    "object": FieldSpec(fields={}),
}
