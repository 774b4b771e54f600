"""The numeric value a document field denotes.

:func:`parse_number` turns what an extraction model or a ground-truth file holds in a
numeric field into a ``float``, or ``None`` when the value is not a number. The
policy, in full:

Non-strings
    ``bool`` is never a number (``True`` is not ``1``). ``int``, ``float``,
    :class:`~decimal.Decimal` and other :class:`numbers.Real` values become a
    ``float``; NaN, infinities and integers too large for a float give ``None``.
    Anything else (``None``, bytes, lists, ...) gives ``None``.

Strings
    Surrounding whitespace is ignored. Around the digits there may be, in any
    usual order:

    * one currency marker: ``$ € £ ¥ ₹ ₩ ₽ ₺ ₪ ฿ ₫ ₴ ₦`` or the code ``USD``, ``EUR``,
      ``GBP``, ``JPY``, ``CHF``, ``CAD``, ``AUD``, ``INR``, ``CNY`` (any case), before
      or after the number, with or without a space;
    * one sign: a leading ``+`` or ``-``, a trailing ``-`` (``123-`` is ``-123``), or
      accounting parentheses around the amount (``(1,234.50)`` is ``-1234.5``). The
      Unicode minus sign (U+2212) and the en dash (U+2013) count as ``-``. Two signs
      (``--5``, ``-(5)``) or an unmatched parenthesis give ``None``;
    * a trailing ``%``, which is dropped: ``5%`` is ``5.0``, not ``0.05``, as in
      Stickler's ``NumericComparator``.

    ``CR``/``DR`` suffixes, units (``12 kg``) and any other letters give ``None``, as
    does text holding two numbers (``12-34``, ``12 34``) or no digits at all.

Separators
    Spaces (including no-break and thin spaces), apostrophes (``1'234.50``, also the
    right single quote U+2019) and underscores only ever group thousands. A comma or a
    dot may be either:

    * both present: the one that comes last is the decimal separator (it must occur
      once) and the other groups thousands: ``1,234.56`` and ``1.234,56`` are both
      ``1234.56``;
    * only commas: several commas group thousands (``1,234,567``); a single comma
      groups thousands when it is followed by exactly three digits and the part
      before it is a plausible first group (1-3 digits, not starting with ``0``),
      so ``1,500`` is ``1500``, and is a decimal comma otherwise (``1,5`` is
      ``1.5``, ``12,75`` is ``12.75``, ``0,500`` is ``0.5``);
    * only dots: several dots group thousands (``1.234.567``); a single dot is the
      decimal point (``1.500`` is ``1.5``);
    * a space, apostrophe or underscore is present: a single comma or dot after the
      groups is the decimal separator (``1 234,56``).

    Thousands groups must be well formed: a first group of 1-3 digits, then groups of
    exactly three (``1,234,567``), or, with commas only, the Indian lakh/crore layout
    of two-digit groups ending in a group of three (``12,34,567``). Anything else
    gives ``None``.

Exponents
    Scientific notation (``1e3``, ``-2.5E-2``) is accepted on an ungrouped mantissa.

Only ASCII digits count; the result depends on nothing but the input.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from functools import lru_cache
from numbers import Real

__all__ = ["parse_number", "parse_number_text"]

# Everything Python's float() would accept beyond this (``nan``, ``1_0``, non-ASCII
# digits) is outside the policy, so the fast path is a regex, not a bare float().
_PLAIN = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
# Comma-grouped amounts with a decimal point ("1,234.56") are common enough in
# documents to skip the general shape match.
_COMMA_GROUPED = re.compile(r"[+-]?[1-9][0-9]{0,2}(?:,[0-9]{3})+(?:\.[0-9]+)?")

_SYMBOLS = "$€£¥₹₩₽₺₪฿₫₴₦"
_CODES = "USD|EUR|GBP|JPY|CHF|CAD|AUD|INR|CNY"
# A code glued to other letters ("XUSD", "USDT") is a word, not a currency marker.
_CURRENCY = rf"(?:[{re.escape(_SYMBOLS)}]|(?<![A-Za-z])(?:{_CODES})(?![A-Za-z]))"

# One match decides the whole shape, so the slow path costs one regex plus the
# separator logic. Optional slots cover both "($12)" and "$(12)", "-$12" and "$-12";
# how many slots are filled (one currency, one sign) is checked afterwards. Digits are
# spelled [0-9] because the pattern is Unicode-aware, where \d matches any script.
_SHAPE = re.compile(
    rf"""
    (?P<cur1>{_CURRENCY})?\s*
    (?P<open>\()?\s*
    (?P<cur2>{_CURRENCY})?\s*
    (?P<sign>[+-])?\s*
    (?P<cur3>{_CURRENCY})?\s*
    (?P<body>[.,]?[0-9](?:[0-9.,'\u2019_ ]*[0-9.])?)
    (?P<exp>[eE][+-]?[0-9]+)?
    \s*(?P<tsign>-)?
    \s*(?P<pct>%)?
    \s*(?P<cur4>{_CURRENCY})?
    \s*(?P<close>\))?
    \s*(?P<cur5>{_CURRENCY})?
    """,
    re.VERBOSE | re.IGNORECASE,
)

# Minus look-alikes become "-" and space look-alikes become " " so the shape regex
# and the grouping rules deal with one character each.
_CANONICAL = str.maketrans(
    {
        "\u2212": "-",  # minus sign
        "\u2013": "-",  # en dash
        "\u00a0": " ",  # no-break space
        "\u2007": " ",  # figure space
        "\u2009": " ",  # thin space
        "\u202f": " ",  # narrow no-break space
    }
)

_GROUP_ONLY = (" ", "'", "\u2019", "_")


def _thousands(sep: str) -> str:
    return rf"[1-9][0-9]{{0,2}}(?:{re.escape(sep)}[0-9]{{3}})+"


# Lakh/crore grouping (12,34,567) is written with commas; with dots or spaces a
# two-digit group is more likely a misread than an Indian amount.
_GROUPED = {sep: re.compile(_thousands(sep)) for sep in (*_GROUP_ONLY, ".")}
_GROUPED[","] = re.compile(_thousands(",") + r"|[1-9][0-9]?(?:,[0-9]{2})+,[0-9]{3}")
_DIGITS = re.compile(r"[0-9]*")

_CACHE_SIZE = 16384


def parse_number(value: object) -> float | None:
    """Return the number ``value`` denotes, or ``None`` if it is not a number.

    See the module documentation for the policy. Strings go through
    :func:`parse_number_text`, which caches its answers.
    """
    # Exact type checks first: this runs in per-field loops and the common types
    # should not pay for isinstance chains or the bool exclusion.
    if type(value) is float:
        return value if math.isfinite(value) else None
    if type(value) is str:
        return parse_number_text(value)
    if type(value) is int:
        return _int_to_float(value)
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        return parse_number_text(str(value))
    if isinstance(value, Decimal):
        if not value.is_finite():
            return None
        number = float(value)
        return number if math.isfinite(number) else None
    if isinstance(value, int):
        return _int_to_float(value)
    if isinstance(value, Real):
        try:
            number = float(value)
        except (OverflowError, ValueError, TypeError):
            return None
        return number if math.isfinite(number) else None
    return None


def _int_to_float(value: int) -> float | None:
    try:
        return float(value)
    except OverflowError:
        return None


_PLAIN_MATCH = _PLAIN.fullmatch


def parse_number_text(text: str) -> float | None:
    """Return the number the string ``text`` denotes, or ``None``.

    The string half of :func:`parse_number`, for callers that already hold a
    ``str``. Plain decimal text is read directly (amounts are mostly unique, so a
    cache would only churn); decorated text is cached (bounded), since currencies,
    separators and labels repeat a lot.
    """
    if _PLAIN_MATCH(text):
        number = float(text)
        return number if math.isfinite(number) else None
    return _parse_decorated_text(text)


@lru_cache(maxsize=_CACHE_SIZE)
def _parse_decorated_text(text: str) -> float | None:
    text = text.strip()
    if _PLAIN.fullmatch(text):
        return _finite(float(text))
    if _COMMA_GROUPED.fullmatch(text):
        return _finite(float(text.replace(",", "")))
    if not text.isascii():
        text = text.translate(_CANONICAL)
    return _parse_decorated(text)


def _finite(number: float) -> float | None:
    return number if math.isfinite(number) else None


def _parse_decorated(text: str) -> float | None:
    shape = _SHAPE.fullmatch(text)
    if shape is None:
        return None
    cur1, open_, cur2, sign, cur3, body, exponent, tsign, pct, cur4, close, cur5 = shape.groups()
    if (open_ is None) != (close is None):
        return None
    if (open_ is not None) + (sign is not None) + (tsign is not None) > 1:
        return None
    currencies = 5 - (cur1, cur2, cur3, cur4, cur5).count(None)
    # "$5%" names two units at once; neither reading is safe.
    if currencies > 1 or (currencies and pct is not None):
        return None

    mantissa = _ungroup(body)
    if mantissa is None:
        return None
    if exponent is not None:
        # A grouped or decimal-comma mantissa ("1,234e3") is more likely misread text
        # than scientific notation, which is written the programmer's way.
        if not _PLAIN.fullmatch(body):
            return None
        mantissa += exponent
    number = float(mantissa)
    return _finite(-number if open_ or tsign or sign == "-" else number)


def _ungroup(body: str) -> str | None:
    """Rewrite ``body`` as a plain ``digits.digits`` string, or ``None``."""
    commas = body.count(",")
    dots = body.count(".")

    decimal: str | None
    if " " in body or "'" in body or "\u2019" in body or "_" in body:
        group_only = [char for char in _GROUP_ONLY if char in body]
        if len(group_only) > 1 or commas + dots > 1:
            return None
        group = group_only[0]
        decimal = "," if commas else "." if dots else None
    elif commas and dots:
        decimal = "," if body.rfind(",") > body.rfind(".") else "."
        group = "." if decimal == "," else ","
        if body.count(decimal) > 1:
            return None
    elif commas:
        group = ","
        decimal = "," if commas == 1 and not _GROUPED[","].fullmatch(body) else None
    elif dots:
        group = "."
        decimal = "." if dots == 1 else None
    else:
        return body

    if decimal is None:
        whole, fraction = body, ""
    else:
        whole, _, fraction = body.partition(decimal)
        if not _DIGITS.fullmatch(fraction):
            return None
    if group in whole:
        if not _GROUPED[group].fullmatch(whole):
            return None
        whole = whole.replace(group, "")
    elif not _DIGITS.fullmatch(whole):
        return None
    if not whole and not fraction:
        return None
    return f"{whole or '0'}.{fraction or '0'}"
