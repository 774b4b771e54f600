"""Deterministic equality of leaf values, with one documented policy.

The policy (used by :class:`~docevals_mlflow.ExactStructuredMetric` and anything
else that needs "are these two scalars the same"):

* **Empty** values are equal to each other: a missing key, ``None``, ``""``,
  whitespace-only text, ``[]`` and ``{}``.
* **Numbers** compare by value within a tolerance when *both* sides are numbers or
  plain decimal text (``3``, ``"3"``, ``"3.0"`` and ``3.0`` are equal). Text with a
  leading zero such as ``"007"`` is an identifier, not a number. Booleans are never
  numbers (``True`` does not equal ``1``). Integers too long for a float (hundreds
  of digits) are equal only to the same integer.
* **Booleans** equal booleans, and the texts ``"true"``/``"false"`` (any case), as a
  CSV base table writes them.
* **Text** is compared after Unicode NFC normalisation, trimming and collapsing
  runs of white space; case is ignored unless ``case_sensitive=True``.
* Anything else (lists, objects, mixed types) is equal only if the canonical JSON
  forms are equal.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping
from typing import Any

from docevals_mlflow.core.fingerprints import canonical_json

_DECIMAL = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
_LEADING_ZERO_ID = re.compile(r"[+-]?0\d", re.ASCII)
_SPACE = re.compile(r"\s+")


def is_empty(value: Any) -> bool:
    """True for ``None``, blank text, ``[]`` and ``{}`` (and empty tuples/mappings).

    Called once or twice per compared leaf, so the common types are checked by exact
    type before the general ``isinstance`` fallbacks.
    """
    if value is None:
        return True
    kind = type(value)
    if kind is str:
        return not value or value.isspace()
    if kind is list or kind is dict or kind is tuple:
        return not value
    if isinstance(value, str):
        return not value or value.isspace()
    if isinstance(value, (list, tuple, Mapping)):
        return len(value) == 0
    return False


def as_number(value: Any) -> float | None:
    """The numeric value of a number or of plain decimal text; ``None`` otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        try:
            return float(value)
        except OverflowError:  # hundreds of digits: no float holds it (see values_equal)
            return None
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        text = value.strip()
        if not _DECIMAL.fullmatch(text) or _LEADING_ZERO_ID.match(text):
            return None
        number = float(text)
        return number if math.isfinite(number) else None
    return None


_INTEGER = re.compile(r"[+-]?\d+", re.ASCII)


def _long_integer(value: Any) -> int | None:
    """An integer, or integer text, of any length (``None`` for anything else)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        text = value.strip()
        if _INTEGER.fullmatch(text) and not _LEADING_ZERO_ID.match(text):
            try:
                return int(text)
            except ValueError:  # beyond Python's 4,300-digit limit for int("...")
                return None
    return None


def as_bool(value: Any) -> bool | None:
    """``True``/``False`` for booleans and the texts true/false; ``None`` otherwise."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        folded = value.strip().casefold()
        if folded == "true":
            return True
        if folded == "false":
            return False
    return None


def normalize_text(value: str, *, case_sensitive: bool = False) -> str:
    """NFC, trimmed, inner white space collapsed, case-folded unless asked not to."""
    text = _SPACE.sub(" ", unicodedata.normalize("NFC", value)).strip()
    return text if case_sensitive else text.casefold()


def values_equal(
    expected: Any,
    predicted: Any,
    *,
    relative_tolerance: float = 1e-6,
    absolute_tolerance: float = 1e-6,
    case_sensitive: bool = False,
) -> bool:
    """Whether two leaf values are the same under the module's documented policy."""
    expected_empty, predicted_empty = is_empty(expected), is_empty(predicted)
    if expected_empty or predicted_empty:
        return expected_empty and predicted_empty
    if isinstance(expected, bool) or isinstance(predicted, bool):
        left, right = as_bool(expected), as_bool(predicted)
        return left is not None and left == right
    left_number, right_number = as_number(expected), as_number(predicted)
    if (left_number is None or right_number is None) and (
        type(expected) is int or type(predicted) is int
    ):
        # Integers too long for a float (JSON keeps them exact): equal only if exact.
        left_int, right_int = _long_integer(expected), _long_integer(predicted)
        if left_int is not None and right_int is not None:
            return left_int == right_int
    if left_number is not None and right_number is not None:
        return math.isclose(
            left_number, right_number, rel_tol=relative_tolerance, abs_tol=absolute_tolerance
        )
    if isinstance(expected, str) and isinstance(predicted, str):
        return normalize_text(expected, case_sensitive=case_sensitive) == normalize_text(
            predicted, case_sensitive=case_sensitive
        )
    if isinstance(expected, (str, int, float)) or isinstance(predicted, (str, int, float)):
        return False
    return canonical_json(expected) == canonical_json(predicted)
