"""The numeric value a document field denotes.

:func:`parse_number` turns what an extraction model or a ground-truth file holds in a
numeric field into a ``float``, or ``None`` when the value is not a number. The
policy, in full:

Non-strings
    ``bool`` is never a number (``True`` is not ``1``). ``int``, ``float``,
    :class:`~decimal.Decimal` and other :class:`numbers.Real` values become a
    ``float``; NaN, infinities and integers too large for a float give ``None``.
    Anything else (``None``, bytes, lists, ...) gives ``None``.

Strings: the rule
    A string is a number when what remains after removing at most one marker before
    the number and at most one marker after it is a number. There is no list of
    known currencies or units to keep up to date; a marker is anything of this form:

    * one currency symbol, i.e. any character of Unicode category ``Sc``
      (``$ € £ ¥ ₹ ₱ ₩ ₫ ₪ ₦ ﷼`` ...);
    * a short abbreviation: 1 to 4 letters of any script (``RM``, ``Rp``, ``kr``,
      ``zł``, ``лв``, ``円``, ``kg``, ``pcs``, and so every ISO 4217 code such as
      ``USD`` or ``MYR``), which may end in a dot or hold dots between letters
      (``Rs.``, ``kr.``, ``Fr.``); combining marks ride on their letter and do not
      count, and letters are counted after case folding (``ß`` is two). Letters
      with a numeric value of their own (``万``, ``千``) are not marker letters,
      since ``5万`` is not 5;
    * such an abbreviation joined to one currency symbol, without a dot (``US$``,
      ``S$``, ``R$``, ``HK$``, ``NT$``, ``C$``, ``A$``, ``$US``);
    * an ISO 4217 code next to a currency symbol, with or without a space
      (``CAD $5``), which names one currency twice and so counts as one marker.

    A marker may touch the number or stand a space apart; case never matters. A dot
    between letters and digits belongs to the letters (``Rs.5`` is 5), one between a
    currency symbol and digits is a decimal point (``$.50`` is 0.5). A word
    longer than four letters is not a marker (``12 dollars``, ``Total 12`` and
    ``Total: 12`` are not numbers), nor is anything holding other punctuation
    (``S/``, ``€/kg``), nor are letters between digits (``12abc34``). The limit of
    four letters is what keeps labels out while reading currencies and units; its
    price is that multipliers read as markers too (``5k`` is 5).

    Around the number and its markers there may also be:

    * one sign: a leading ``+`` or ``-``, a trailing ``-`` (``123-`` is ``-123``), or
      accounting parentheses around the amount (``(1,234.50)`` is ``-1234.5``), with
      the markers inside or outside (``-RM7.42``, ``RM-7.42``, ``(RM7.42)``,
      ``RM(7.42)``). The Unicode minus sign (U+2212) and the en dash (U+2013) count
      as ``-``. Two signs (``--5``, ``-(5)``) or an unmatched parenthesis give
      ``None``;
    * a trailing ``%``, which is dropped: ``5%`` is ``5.0``, not ``0.05``, as in
      Stickler's ``NumericComparator``. A percent sign together with a marker
      (``$5%``, ``5% VAT``) gives ``None``: it names two units at once;
    * one or two hyphens, an en dash or an em dash right after a final decimal
      separator, meaning no decimals (``100,-``, ``kr 1.234,-``, Swiss ``Fr. 5.-``
      with an en dash): it is not a minus sign.

    Text holding two numbers (``12-34``, ``12 34``), two markers on one side
    (``RM $5``), or no digits at all gives ``None``.

    Runs of white space count as one space and letter case is ignored, so two texts
    that differ only in those ways always read alike.

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
      decimal point (``1.500`` is ``1.5``, also in ``Rp 15.000``);
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
import unicodedata
from decimal import Decimal
from functools import lru_cache
from numbers import Real

from docevals_mlflow.fields.currency_codes import ISO_4217_CODES

__all__ = ["ISO_4217_CODES", "parse_number", "parse_number_text"]

# Everything Python's float() would accept beyond this (``nan``, ``1_0``, non-ASCII
# digits) is outside the policy, so the fast path is a regex, not a bare float().
_PLAIN = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
# Comma-grouped amounts with a decimal point ("1,234.56") are common enough in
# documents to skip the general shape match.
_COMMA_GROUPED = re.compile(r"[+-]?[1-9][0-9]{0,2}(?:,[0-9]{3})+(?:\.[0-9]+)?")

_ISO_FOLDED = frozenset(code.casefold() for code in ISO_4217_CODES)
_MAX_MARKER_LETTERS = 4

# A marker candidate is a run of characters that cannot belong to the number (no ASCII
# digit, separator, sign, parenthesis or percent), possibly joined and ended by dots
# ("Rs.", "r.s"), or two such runs a space apart (for "CAD $"). Whether it is a marker
# is decided in Python (_is_marker), because the rule speaks of Unicode categories
# that `re` cannot name. The bounded, possessive runs keep the shape match linear on
# long text; white space is collapsed before matching, so " " is the only space.
_MARK_CHAR = r"[^\s0-9.,'\u2019_()+\-%]"
_MARK_RUN = rf"{_MARK_CHAR}{{1,8}}+(?:\.{_MARK_CHAR}{{1,8}}+)*+\.?"
_MARKER = rf"{_MARK_RUN}(?:\x20{_MARK_RUN})?"  # \x20: _SHAPE is verbose

# One match decides the whole shape, so the slow path costs one regex plus the
# separator logic. Optional slots cover both "($12)" and "$(12)", "-$12" and "$-12";
# how many slots are filled (one marker a side, one sign) is checked afterwards. Digits
# are spelled [0-9] because the pattern is Unicode-aware, where \d matches any script.
# The body never ends in a dot that a dash follows: "5.-" is "no decimals", not -5.
_SHAPE = re.compile(
    rf"""
    (?P<cur1>{_MARKER})?\s*
    (?P<open>\()?\s*
    (?P<cur2>{_MARKER})?\s*
    (?P<sign>[+-])?\s*
    (?P<cur3>{_MARKER})?\s*
    (?P<body>[.,]?[0-9](?:[0-9.,'\u2019_ ]*(?:[0-9]|\.(?![-\u2014])))?)
    (?:(?P<exp>[eE][+-]?[0-9]+)|(?P<nodec>[.,](?:--?|\u2014)))?
    \s*(?P<tsign>-)?
    \s*(?P<pct>%)?
    \s*(?P<cur4>{_MARKER})?
    \s*(?P<close>\))?
    \s*(?P<cur5>{_MARKER})?
    """,
    re.VERBOSE,
)

# Minus look-alikes become "-" so the shape regex and the sign rules deal with one
# character. Space look-alikes need no entry: white space is collapsed to " " first.
_MINUS = str.maketrans({"\u2212": "-", "\u2013": "-"})  # minus sign, en dash

_GROUP_ONLY = (" ", "'", "\u2019", "_")


def _thousands(sep: str) -> str:
    return rf"[1-9][0-9]{{0,2}}(?:{re.escape(sep)}[0-9]{{3}})+"


# Lakh/crore grouping (12,34,567) is written with commas; with dots or spaces a
# two-digit group is more likely a misread than an Indian amount.
_GROUPED = {sep: re.compile(_thousands(sep)) for sep in (*_GROUP_ONLY, ".")}
_GROUPED[","] = re.compile(_thousands(",") + r"|[1-9][0-9]?(?:,[0-9]{2})+,[0-9]{3}")
_DIGITS = re.compile(r"[0-9]*")
_UNGROUPED = re.compile(r"[0-9]*\.?[0-9]*")

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
_COMMA_GROUPED_MATCH = _COMMA_GROUPED.fullmatch


def parse_number_text(text: str) -> float | None:
    """Return the number the string ``text`` denotes, or ``None``.

    The string half of :func:`parse_number`, for callers that already hold a
    ``str``. Plain decimal text and comma-grouped amounts are read directly (amounts
    are mostly unique, so a cache would only churn); decorated text is cached
    (bounded), since currencies, separators and labels repeat a lot.
    """
    if _PLAIN_MATCH(text):
        number = float(text)
        return number if math.isfinite(number) else None
    if _COMMA_GROUPED_MATCH(text):
        number = float(text.replace(",", ""))
        return number if math.isfinite(number) else None
    return _parse_decorated_text(text)


@lru_cache(maxsize=_CACHE_SIZE)
def _parse_decorated_text(text: str) -> float | None:
    text = text.strip()
    if _PLAIN.fullmatch(text):
        return _finite(float(text))
    if _COMMA_GROUPED.fullmatch(text):
        return _finite(float(text.replace(",", "")))
    # The reading depends only on the collapsed, case-folded text, the same text
    # NUMERIC_EXACT compares for identity: two values it calls identical can never
    # read as a number on one side only.
    text = " ".join(text.split()).casefold()
    if not text.isascii():
        text = text.translate(_MINUS)
    return _parse_decorated(text)


def _finite(number: float) -> float | None:
    return number if math.isfinite(number) else None


def _parse_decorated(text: str) -> float | None:
    shape = _SHAPE.fullmatch(text)
    if shape is None:
        return None
    (
        cur1, open_, cur2, sign, cur3, body, exponent, nodec, tsign, pct, cur4, close, cur5
    ) = shape.groups()  # fmt: skip
    if (open_ is None) != (close is None):
        return None
    if (open_ is not None) + (sign is not None) + (tsign is not None) > 1:
        return None
    before = [marker for marker in (cur1, cur2, cur3) if marker is not None]
    if before and before[-1][-1] == "." and _is_symbol(before[-1][-2]) and _touches(shape):
        # The regex gives a dot between a marker and the digits to the marker. After a
        # letter that is right ("Rs.5" is 5); after a currency symbol the dot can only
        # be a decimal point ("$.50" is 0.5).
        before[-1] = before[-1][:-1]
        body = "." + body
    after = [marker for marker in (cur4, cur5) if marker is not None]
    if (before or after) and (pct is not None or not (_one_marker(before) and _one_marker(after))):
        return None

    if nodec is not None:
        # "1.234,-" has the decimal separator of "1.234,00"; reading it so keeps the
        # grouping rules in one place.
        body = f"{body}{nodec[0]}0"
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


def _touches(shape: re.Match[str]) -> bool:
    """Whether the last marker before the digits is written right against them."""
    for slot in ("cur3", "sign", "cur2", "open", "cur1"):
        if shape.group(slot) is not None:
            return slot.startswith("cur") and shape.end(slot) == shape.start("body")
    return False


def _one_marker(markers: list[str]) -> bool:
    """Whether the markers found on one side of the number amount to at most one."""
    if len(markers) == 2:
        # Only a code and a symbol split by a sign ("USD -$5") can still be one.
        markers = [" ".join(markers)]
    return not markers or (len(markers) == 1 and _is_marker(markers[0]))


def _is_symbol(text: str) -> bool:
    return len(text) == 1 and unicodedata.category(text) == "Sc"


@lru_cache(maxsize=1024)
def _is_marker(marker: str) -> bool:
    """A currency symbol, a short abbreviation, an abbreviation joined to a symbol, or
    an ISO 4217 code next to a symbol."""
    if " " in marker:
        # "CAD $5" names one currency twice; any other pair is two things.
        first, _, second = marker.partition(" ")
        return (first in _ISO_FOLDED and _is_symbol(second)) or (
            second in _ISO_FOLDED and _is_symbol(first)
        )
    if unicodedata.category(marker[0]) == "Sc":
        return len(marker) == 1 or _is_abbreviation(marker[1:], dots=False)
    if unicodedata.category(marker[-1]) == "Sc":
        return _is_abbreviation(marker[:-1], dots=False)
    return _is_abbreviation(marker, dots=True)


def _is_abbreviation(text: str, *, dots: bool) -> bool:
    """1 to 4 letters of any script; combining marks follow a letter, dots join or end."""
    letters = 0
    previous = "."
    for char in text:
        if char == ".":
            if previous == "." or not dots:
                return False
        else:
            category = unicodedata.category(char)
            if category[0] == "L" and unicodedata.numeric(char, None) is None:
                letters += 1
            elif category[0] != "M" or previous == ".":
                return False
        previous = char
    return 1 <= letters <= _MAX_MARKER_LETTERS


def _ungroup(body: str) -> str | None:
    """Rewrite ``body`` as a string ``float()`` reads, or ``None``."""
    # The two commonest bodies skip the separator analysis; both agree with it.
    if _UNGROUPED.fullmatch(body):
        return body
    if _COMMA_GROUPED.fullmatch(body):
        return body.replace(",", "")
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
