"""How numbers are written for people: values exactly, figures rounded once.

A report prints two kinds of number, and they must not share a format:

* **Values** are data: an expected or a predicted field value as the document or
  the model gave it. :func:`value_text` prints them exactly (a float with every digit
  ``repr`` gives, so 673.95 and 613.95 can never print alike, and the text reads back
  to the same number), text as is, lists and objects as one-line JSON.
* **Figures** are measurements, rounded to one precision per kind, everywhere:

  =================================  ====================  ===========
  kind                               function              example
  =================================  ====================  ===========
  metric (a rate, F1, AUROC, κ, ...)  :func:`metric_text`   ``0.8462``
  difference of two metrics          :func:`signed_text`   ``+0.0516``
  share as a percentage              :func:`percent_text`  ``80.0%``
  score, confidence, threshold       :func:`score_text`    ``0.42``
  count (possibly fractional)        :func:`count_text`    ``12``
  p-value                            :func:`p_value_text`  ``0.000512``
  money (US dollars)                 :func:`money_text`    ``0.0123``
  =================================  ====================  ===========

* **Settings** are numbers a person chose (a threshold, alpha, a limit, a
  confidence level or a review budget): :func:`setting_text` and
  :func:`level_text` print them as given, without padding or rounding to a grid
  (``0.85``, ``0.875``; ``95%``, ``97.5%``), so a report repeats the option it ran
  with.

  An undefined figure (``None``, NaN, or anything that is not a number, booleans
  included) prints as ``n/a``: a zero denominator is not a zero.

Machine formats (the JSON report, MLflow metrics) keep full floats and never go
through here. Pure standard library, so every layer may import it.
"""

from __future__ import annotations

import json
import math
from typing import Any, Final

NOT_AVAILABLE: Final = "n/a"
"""The text of an undefined figure."""
METRIC_DIGITS: Final = 4
"""Decimals of a metric: 0.8148 and 0.8152 must stay apart in a regression."""
PERCENT_DIGITS: Final = 1
SCORE_DIGITS: Final = 2
"""Decimals of a similarity score or a confidence: more would be noise."""
COUNT_DIGITS: Final = 2
"""Decimals of a fractional count (ties sharing credit); whole counts have none."""
P_VALUE_DIGITS: Final = 3
"""Significant digits of a p-value (small p-values need digits, not decimals)."""
MONEY_DIGITS: Final = 4
"""Decimals of a cost in US dollars: per-request costs are fractions of a cent."""

_JSON = json.JSONEncoder(ensure_ascii=False, default=str)


def defined_number(value: Any) -> float | None:
    """``value`` as a finite float, or ``None`` when it is not a usable figure.

    Booleans are not figures (``True`` is not 1.0 here), nor are NaN or infinities,
    which a report edited by hand might carry.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def metric_text(value: Any, digits: int = METRIC_DIGITS) -> str:
    """A metric to four decimals (``0.8462``), or ``n/a`` when undefined."""
    number = defined_number(value)
    return NOT_AVAILABLE if number is None else f"{number:.{digits}f}"


def signed_text(value: Any, digits: int = METRIC_DIGITS) -> str:
    """A difference of metrics with its sign (``+0.0516``, ``-0.0020``), or ``n/a``."""
    number = defined_number(value)
    return NOT_AVAILABLE if number is None else f"{number:+.{digits}f}"


def percent_text(value: Any, digits: int = PERCENT_DIGITS) -> str:
    """A share in [0, 1] as a percentage to one decimal (``80.0%``), or ``n/a``."""
    number = defined_number(value)
    return NOT_AVAILABLE if number is None else f"{number:.{digits}%}"


def percent_of(part: int | float, whole: int | float) -> str:
    """``part / whole`` as :func:`percent_text`; ``n/a`` when ``whole`` is 0."""
    return percent_text(part / whole) if whole else NOT_AVAILABLE


def score_text(value: Any) -> str:
    """A similarity score, confidence or score threshold to two decimals (``0.42``)."""
    number = defined_number(value)
    return NOT_AVAILABLE if number is None else f"{number:.{SCORE_DIGITS}f}"


def count_text(value: Any) -> str:
    """A count: whole counts without decimals (``12``), a fractional one (ties that
    share credit) to at most two decimals (``2.5``, ``2.33``)."""
    number = defined_number(value)
    if number is None:
        return NOT_AVAILABLE
    if isinstance(value, int) or number.is_integer():
        return str(int(number))
    return f"{number:.{COUNT_DIGITS}f}".rstrip("0").rstrip(".")


def p_value_text(value: Any) -> str:
    """A p-value to three significant digits (``0.0412``, ``5.12e-06``), or ``n/a``."""
    number = defined_number(value)
    return NOT_AVAILABLE if number is None else f"{number:.{P_VALUE_DIGITS}g}"


def money_text(value: Any) -> str:
    """A cost in US dollars to four decimals, without the sign (``0.0123``), or ``n/a``."""
    number = defined_number(value)
    return NOT_AVAILABLE if number is None else f"{number:.{MONEY_DIGITS}f}"


def setting_text(value: Any) -> str:
    """A chosen number (threshold, alpha, limit) as given: ``0.85``, ``0.875``, ``3``.

    Six significant digits (``format(value, "g")``): enough for any option a person
    types, and no trailing zeros that would suggest a precision nobody chose.
    """
    number = defined_number(value)
    return NOT_AVAILABLE if number is None else f"{number:g}"


def level_text(value: Any) -> str:
    """A chosen share (confidence level, review budget) as a percentage, as given:
    ``95%``, ``97.5%``, ``10%``; unlike :func:`percent_text` nothing is rounded to a
    grid, so a 97.5% interval is never called a 98% one."""
    number = defined_number(value)
    # "g" after scaling also absorbs the float noise of the product (0.07 * 100).
    return NOT_AVAILABLE if number is None else f"{number * 100:g}%"


def value_text(value: Any) -> str:
    """A field value exactly as given, as one piece of text.

    Text is returned as is; an int with all its digits; a float as ``repr`` writes it
    (``673.95``, ``123456.78``, ``1e-07``: the shortest text that reads back to the
    same float, so two different numbers never print alike); booleans and ``None`` as
    JSON (``true``, ``false``, ``null``); lists and objects as one line of JSON in
    their own key order. Nothing is rounded or cut: capping belongs to the renderer,
    which must say that it did.
    """
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, bool):
        return _JSON.encode(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        # float() first: a numpy float would otherwise print as "np.float64(...)".
        return repr(float(value))
    if isinstance(value, list | tuple | dict):
        return _JSON.encode(value)
    return str(value)


__all__ = [
    "COUNT_DIGITS",
    "METRIC_DIGITS",
    "MONEY_DIGITS",
    "NOT_AVAILABLE",
    "PERCENT_DIGITS",
    "P_VALUE_DIGITS",
    "SCORE_DIGITS",
    "count_text",
    "defined_number",
    "level_text",
    "metric_text",
    "money_text",
    "p_value_text",
    "percent_of",
    "percent_text",
    "score_text",
    "setting_text",
    "signed_text",
    "value_text",
]
