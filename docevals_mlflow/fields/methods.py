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

This module holds the equality methods (``EXACT``, ``NORMALIZED``, ``DATE``), builds
any method's comparator (:func:`make_comparator`) and infers rules for unconfigured
fields; the protocol is in :mod:`~docevals_mlflow.fields.comparator`, the numeric and
graded text methods in :mod:`~docevals_mlflow.fields.numeric_method` and
:mod:`~docevals_mlflow.fields.text_methods` (all importable from here).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from docevals_mlflow.core.values import is_empty
from docevals_mlflow.errors import ConfigurationError
from docevals_mlflow.fields.comparator import (
    Comparator,
    Matrix,
    Scores,
    SimpleComparator,
    Vector,
    prepare_each,
    text_of,
)
from docevals_mlflow.fields.dates import parse_date
from docevals_mlflow.fields.numeric_method import NumericComparator
from docevals_mlflow.fields.registry import (
    BUILTIN_METHODS,
    ENTRY_POINT_GROUP,
    find_field_method,
)
from docevals_mlflow.fields.schema import FieldSpec
from docevals_mlflow.fields.text_methods import FuzzyComparator, LevenshteinComparator


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
        text = text_of(value)
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
        text = unicodedata.normalize("NFKC", text_of(value))
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
        return ("text", " ".join(text_of(value).casefold().split()))

    def reason(self, expected: Any, predicted: Any, score: float) -> str:
        if expected[0] == "text" or predicted[0] == "text":
            which = "expected" if expected[0] == "text" else "predicted"
            outcome = "texts equal" if score >= 1.0 else "texts differ"
            return f"The {which} value is not a date; {outcome}"
        return "Same date" if score >= 1.0 else "Different dates"

    def config(self) -> dict[str, Any]:
        return {"method": self.method, "order": self.order, "threshold": self.threshold}


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


__all__ = [
    "INFERRED_BOOLEAN",
    "INFERRED_NUMBER",
    "INFERRED_TEXT",
    "Comparator",
    "DateComparator",
    "ExactComparator",
    "FuzzyComparator",
    "LevenshteinComparator",
    "Matrix",
    "NormalizedComparator",
    "NumericComparator",
    "ProviderFactory",
    "Scores",
    "SimpleComparator",
    "Vector",
    "infer_spec",
    "make_comparator",
    "prepare_each",
    "value_kind",
]
