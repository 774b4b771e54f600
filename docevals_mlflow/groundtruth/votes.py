"""What counts as "the same value" when generators vote on a field.

:func:`vote_key` maps a claimed value to a hashable key; two values agree exactly
when their keys are equal. The policy:

* **Absent**: no claim, ``None``, blank text, ``[]`` and ``{}`` are all "no value"
  (the key is ``None``). A generator that gives nothing for a field votes *absent*.
* **Booleans**: ``true``/``false`` and the texts ``"true"``/``"false"`` (any case).
* **Numbers** compare by exact decimal value (:class:`~decimal.Decimal`), so ``12.5``,
  ``"12.5"`` and ``"12.50"`` agree. Text counts as a number only when it cannot be
  read two ways: plain decimal text (``-3``, ``12.50``, ``1e3``) or thousands grouped
  with commas *and* a decimal point (``1,500.00``) or with several commas
  (``1,234,567``). A single comma without a point (``"1,5"``, ``"1,500"``) is a decimal
  comma in much of the world and a thousands separator elsewhere, so such text is
  compared as text, never as ``15`` or ``1500``. Leading-zero text (``"007"``) is an
  identifier, not a number. Currency symbols and units make text.
* **Text**: Unicode NFC, trimmed, inner white space collapsed, case-folded.
* **Lists and objects**: element by element (objects by key) under the same rules.
"""

from __future__ import annotations

import math
import re
from collections.abc import Hashable, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from docevals_mlflow.core.values import is_empty, normalize_text

_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
_LEADING_ZERO_ID = re.compile(r"[+-]?0\d", re.ASCII)
_GROUPED_WITH_POINT = re.compile(r"[+-]?[1-9]\d{0,2}(?:,\d{3})+\.\d+", re.ASCII)
_GROUPED_MANY = re.compile(r"[+-]?[1-9]\d{0,2}(?:,\d{3}){2,}", re.ASCII)


def _decimal_key(number: Decimal) -> tuple[str, str] | None:
    if not number.is_finite():
        return None
    if number.is_zero():
        return ("number", "0")  # -0 and 0.00 are zero
    return ("number", str(number.normalize()))


def number_key(value: Any) -> tuple[str, str] | None:
    """The key of a number, or of text that is unambiguously a number; else ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return _decimal_key(Decimal(value))
    if isinstance(value, float):
        # repr gives the shortest text that round-trips: 0.1 is "0.1", not the binary
        # expansion Decimal(0.1) would give.
        return _decimal_key(Decimal(repr(value))) if math.isfinite(value) else None
    if isinstance(value, Decimal):
        return _decimal_key(value)
    if not isinstance(value, str):
        return None
    text = value.strip()
    if _PLAIN_NUMBER.fullmatch(text):
        if _LEADING_ZERO_ID.match(text):
            return None
    elif _GROUPED_WITH_POINT.fullmatch(text) or _GROUPED_MANY.fullmatch(text):
        text = text.replace(",", "")
    else:
        return None
    try:
        return _decimal_key(Decimal(text))
    except InvalidOperation:  # pragma: no cover - the patterns only admit valid text
        return None


def vote_key(value: Any) -> Hashable | None:
    """The normalised form two agreeing values share; ``None`` means "no value"."""
    if is_empty(value):
        return None
    if isinstance(value, bool):
        return ("bool", value)
    number = number_key(value)
    if number is not None:
        return number
    if isinstance(value, str):
        folded = normalize_text(value)
        if folded in ("true", "false"):
            return ("bool", folded == "true")
        return ("text", folded)
    if isinstance(value, Mapping):
        return (
            "object",
            tuple(
                sorted(
                    ((str(key), vote_key(item)) for key, item in value.items()),
                    key=lambda pair: pair[0],
                )
            ),
        )
    if isinstance(value, (list, tuple)):
        return ("list", tuple(vote_key(item) for item in value))
    if isinstance(value, float):  # NaN or an infinity
        return ("text", repr(value))
    return ("other", repr(value))
