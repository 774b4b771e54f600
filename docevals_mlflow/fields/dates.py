"""The calendar date a document field denotes.

:func:`parse_date` turns a date field's value into a :class:`datetime.date`, or
``None`` when it is not a (valid) date. Accepted:

* :class:`~datetime.date` and :class:`~datetime.datetime` objects (a datetime gives
  its own date; no time-zone conversion);
* year first: ``2024-01-15``, ``2024/01/15``, ``2024.01.15``, optionally followed by
  a time after ``T`` or a space, with an optional ``Z`` or offset
  (``2024-01-15T10:20:30Z``, ``2024-01-15 10:20:30+02:00``): the date is the one
  written, the time and offset are ignored; and ``20240115`` (eight digits);
* numeric day and month with a 2- or 4-digit year, separated by one of ``/ - .``
  used consistently: ``01/15/2024``, ``15.01.2024``, ``1/5/24``. If one of the first
  two numbers is above 12 it can only be the day, whatever ``order`` says. Dots
  always put the day first (``01.12.2015`` is 1 December: the dotted form is the
  day-first convention of the countries that write it). Otherwise ``order`` decides
  (``"month_first"``: ``1/5/24`` is 5 January; ``"day_first"``: 1 May);
* English month names or their three-letter abbreviations (also ``Sept``), any case,
  optionally followed by a dot: ``Jan 15, 2024``, ``January 15 2024``,
  ``15 Jan 2024``, ``15-Jan-2024``, ``Sept 3 2024``, ``2024-Jan-15``, with
  optional ordinal suffixes (``15th``) and commas, and an optional weekday in front
  (``Mon, 15 Jan 2024``; the weekday is not checked against the date). The year may
  have two digits here too.

Any of these may be followed by a time of day (``15/01/2024 13:20``,
``Jan 15, 2024 1:20 PM``, ``20 Aug 2025 13:20:05 UTC``): the date is the one written,
the time is ignored, as it is after a year-first date.

Two-digit years follow POSIX ``strptime`` ``%y``: 00-68 are 2000-2068, 69-99 are
1969-1999. Impossible dates (``2023-02-29``, ``31/04/2024``), dates without a year or
a day, and every other type of value give ``None``.
"""

from __future__ import annotations

import datetime as dt
import re
from functools import lru_cache

from docevals_mlflow.fields.schema import DateOrder

__all__ = ["parse_date", "parse_date_text"]

_CACHE_SIZE = 16384

_YEAR_FIRST = re.compile(
    r"""
    (?P<year>[0-9]{4})(?P<sep>[-/.])(?P<month>[0-9]{1,2})(?P=sep)(?P<day>[0-9]{1,2})
    (?:[T\ ][0-9]{1,2}:[0-9]{2}(?::[0-9]{2}(?:[.,][0-9]+)?)?
       \ ?(?:Z|[+-][0-9]{2}(?::?[0-9]{2})?)?)?
    """,
    re.VERBOSE | re.IGNORECASE,
)
_COMPACT = re.compile(r"(?P<year>[0-9]{4})(?P<month>[0-9]{2})(?P<day>[0-9]{2})")
# A time of day after the date: hours and minutes, optional seconds and fraction, an
# optional AM/PM and an optional zone.
_TRAILING_TIME = re.compile(
    r"""
    [\ ,T]+[0-9]{1,2}:[0-9]{2}(?::[0-9]{2}(?:[.,][0-9]+)?)?
    (?:\ ?[ap]\.?m\.?)?
    (?:\ ?(?:z|utc|gmt|[+-][0-9]{2}(?::?[0-9]{2})?))?
    """,
    re.VERBOSE | re.IGNORECASE,
)
_NUMERIC = re.compile(
    r"(?P<first>[0-9]{1,2})(?P<sep>[-/.])(?P<second>[0-9]{1,2})(?P=sep)"
    r"(?P<year>[0-9]{4}|[0-9]{2})"
)
# Month-name dates are matched as tokens rather than with one pattern per layout;
# the separators between tokens carry no meaning once a month is spelled out.
_WORDY = re.compile(r"[a-z0-9][a-z0-9 ,./-]*", re.IGNORECASE)
_TOKEN = re.compile(r"[a-z]+|[0-9]+", re.IGNORECASE)

_MONTH_NAMES = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_MONTHS = {
    name: number for number, full in enumerate(_MONTH_NAMES, start=1) for name in (full, full[:3])
}
_MONTHS["sept"] = 9

_WEEKDAYS = frozenset(
    (
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
        "mon",
        "tue",
        "tues",
        "wed",
        "thu",
        "thur",
        "thurs",
        "fri",
        "sat",
        "sun",
    )
)
_ORDINALS = frozenset(("st", "nd", "rd", "th"))
_SPACES = str.maketrans(dict.fromkeys("\u00a0\u2007\u2009\u202f", " "))


def parse_date(value: object, order: DateOrder = "month_first") -> dt.date | None:
    """Return the date ``value`` denotes, or ``None`` if it is not a valid date.

    ``order`` settles numeric dates whose first two numbers could both be the month
    (``"month_first"``: ``03/04/2024`` is 4 March; ``"day_first"``: 3 April). See the
    module documentation for the accepted formats.
    """
    _check_order(order)
    if isinstance(value, str):
        return parse_date_text(str(value), order)
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    return None


@lru_cache(maxsize=_CACHE_SIZE)
def parse_date_text(text: str, order: DateOrder = "month_first") -> dt.date | None:
    """Return the date the string ``text`` denotes, or ``None``.

    The string half of :func:`parse_date`; results are cached (bounded).
    """
    _check_order(order)
    text = text.strip()
    if not text.isascii():
        # No-break and thin spaces come from PDF text layers; anything else
        # non-ASCII (other scripts' digits, other languages' months) is out of scope.
        text = text.translate(_SPACES)
        if not text.isascii():
            return None
    match = _YEAR_FIRST.fullmatch(text) or _COMPACT.fullmatch(text)
    if match is not None:
        year, month, day = match.group("year", "month", "day")
        return _make(int(year), int(month), int(day))
    time = _TRAILING_TIME.search(text)
    if time is not None and time.end() == len(text) and time.start() > 0:
        text = text[: time.start()]
    match = _NUMERIC.fullmatch(text)
    if match is not None:
        return _numeric(match, order)
    if _WORDY.fullmatch(text):
        return _wordy(_TOKEN.findall(text.lower()))
    return None


def _check_order(order: str) -> None:
    if order != "month_first" and order != "day_first":
        raise ValueError(f"order must be 'month_first' or 'day_first', not {order!r}")


def _numeric(match: re.Match[str], order: DateOrder) -> dt.date | None:
    first, second, year = int(match["first"]), int(match["second"]), match["year"]
    if first > 12 or (second <= 12 and (order == "day_first" or match["sep"] == ".")):
        day, month = first, second
    else:
        month, day = first, second
    return _make(_full_year(year), month, day)


def _wordy(tokens: list[str]) -> dt.date | None:
    if tokens and tokens[0] in _WEEKDAYS:
        del tokens[0]
    # "15th" tokenises as "15", "th"; the suffix is only allowed right after a number.
    tokens = [
        token
        for index, token in enumerate(tokens)
        if not (token in _ORDINALS and index and tokens[index - 1].isdigit())
    ]
    if len(tokens) != 3:
        return None
    first, middle, last = tokens
    if first in _MONTHS and middle.isdigit() and last.isdigit():
        month, day, year = _MONTHS[first], middle, last
    elif middle in _MONTHS and first.isdigit() and last.isdigit():
        month = _MONTHS[middle]
        if len(first) == 4:
            year, day = first, last
        else:
            day, year = first, last
    else:
        return None
    if len(day) > 2 or len(year) not in (2, 4):
        return None
    return _make(_full_year(year), month, int(day))


def _full_year(year: str) -> int:
    number = int(year)
    if len(year) == 2:
        return number + (2000 if number <= 68 else 1900)
    return number


def _make(year: int, month: int, day: int) -> dt.date | None:
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None
