"""parse_date: accepted formats, the day/month ambiguity rule, round trips."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from docevals_mlflow.fields.dates import parse_date, parse_date_text

JAN_15 = dt.date(2024, 1, 15)


@pytest.mark.parametrize(
    "text",
    [
        # year first
        "2024-01-15",
        "2024-1-15",
        "2024/01/15",
        "2024.01.15",
        "20240115",
        " 2024-01-15 ",
        # ISO with a time: the written date counts, the offset is ignored
        "2024-01-15T10:20:30Z",
        "2024-01-15T10:20:30z",
        "2024-01-15t10:20",
        "2024-01-15T10:20:30.123456",
        "2024-01-15T23:59:59+05:30",
        "2024-01-15T00:00:00-0800",
        "2024-01-15 10:20:30",
        "2024-01-15 10:20:30 +02:00",
        # numeric, unambiguous whatever the order
        "01/15/2024",
        "1/15/2024",
        "15/01/2024",
        "15.01.2024",
        "15-01-2024",
        "01-15-2024",
        "01/15/24",
        "15.1.24",
        # month names
        "Jan 15, 2024",
        "Jan 15 2024",
        "Jan. 15, 2024",
        "jan 15, 2024",
        "JAN 15, 2024",
        "January 15 2024",
        "January 15, 2024",
        "15 Jan 2024",
        "15 January 2024",
        "15 January, 2024",
        "15-Jan-2024",
        "15-jan-24",
        "15/Jan/2024",
        "15 Jan. 2024",
        "15th January 2024",
        "January 15th, 2024",
        "2024-Jan-15",
        "2024 January 15",
        # weekday in front
        "Mon, 15 Jan 2024",
        "Monday, January 15, 2024",
        "mon 15 jan 2024",
        "Mon. Jan 15, 2024",
        # PDF text layers put no-break spaces in dates
        "Jan\u00a015, 2024",
        "15\u202fJan\u202f2024",
    ],
)
def test_formats_of_15_january_2024(text: str) -> None:
    assert parse_date(text) == JAN_15
    assert parse_date(text, "day_first") == JAN_15
    assert parse_date_text(text) == JAN_15


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Sept 3 2024", dt.date(2024, 9, 3)),
        ("Sep 3 2024", dt.date(2024, 9, 3)),
        ("September 3, 2024", dt.date(2024, 9, 3)),
        ("May 5 2024", dt.date(2024, 5, 5)),
        ("3 Mar 2024", dt.date(2024, 3, 3)),
        ("Feb 29 2024", dt.date(2024, 2, 29)),
        ("31 Dec 1999", dt.date(1999, 12, 31)),
        ("Tue. Mar 5th, 2024", dt.date(2024, 3, 5)),
        ("1st Aug 2024", dt.date(2024, 8, 1)),
        ("2nd Aug 2024", dt.date(2024, 8, 2)),
        ("23rd Aug 2024", dt.date(2024, 8, 23)),
    ],
)
def test_month_names(text: str, expected: dt.date) -> None:
    assert parse_date(text) == expected


@pytest.mark.parametrize(
    ("text", "month_first", "day_first"),
    [
        ("1/5/24", dt.date(2024, 1, 5), dt.date(2024, 5, 1)),
        ("03/04/2024", dt.date(2024, 3, 4), dt.date(2024, 4, 3)),
        # dots are the day-first convention whatever the order says
        ("03.04.2024", dt.date(2024, 4, 3), dt.date(2024, 4, 3)),
        ("03-04-2024", dt.date(2024, 3, 4), dt.date(2024, 4, 3)),
        ("12/12/2024", dt.date(2024, 12, 12), dt.date(2024, 12, 12)),
        # a first number above 12 can only be the day
        ("13/04/2024", dt.date(2024, 4, 13), dt.date(2024, 4, 13)),
        # a second number above 12 can only be the day
        ("04/13/2024", dt.date(2024, 4, 13), dt.date(2024, 4, 13)),
    ],
)
def test_ambiguity_rule(text: str, month_first: dt.date, day_first: dt.date) -> None:
    assert parse_date(text) == month_first
    assert parse_date(text, "month_first") == month_first
    assert parse_date(text, "day_first") == day_first


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1/5/00", dt.date(2000, 1, 5)),
        ("1/5/24", dt.date(2024, 1, 5)),
        ("1/5/68", dt.date(2068, 1, 5)),
        ("1/5/69", dt.date(1969, 1, 5)),
        ("1/5/99", dt.date(1999, 1, 5)),
        ("5 Jan 68", dt.date(2068, 1, 5)),
        ("5 Jan 69", dt.date(1969, 1, 5)),
    ],
)
def test_two_digit_years_pivot_like_strptime(text: str, expected: dt.date) -> None:
    assert parse_date(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "abc",
        "2024",
        "Jan 2024",
        "15 Jan",
        "01/15",
        "2024-01",
        # impossible dates
        "2023-02-29",
        "Feb 30 2024",
        "30 Feb 2024",
        "2024-13-01",
        "2024-00-10",
        "0000-01-01",
        "31/04/2024",
        "13/13/2024",
        "00/10/2024",
        "20241301",
        # malformed
        "2024-01/15",
        "01/15-2024",
        "01/15/202",
        "1/5/2024/1",
        "2024-01-15T",
        "2024-01-15T25",
        "2024-01-15 and more",
        "12:30",
        "Jan 15 2024 10:30 tomorrow",
        "Foo 15 2024",
        "15 Jann 2024",
        "Mon 2024",
        "Jan 123 2024",
        "Jan 15 20245",
        "Jan 15 202",
        "15 Jan 2024 - 20 Jan 2024",
        "Jan th 15 2024",
        "\u0661/\u0665/2024",
        "15 janv. 2024",
    ],
)
def test_not_dates(text: str) -> None:
    assert parse_date(text) is None
    assert parse_date(text, "day_first") is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (dt.date(2024, 1, 15), dt.date(2024, 1, 15)),
        (dt.datetime(2024, 1, 15, 23, 59), dt.date(2024, 1, 15)),
        (
            dt.datetime(2024, 1, 15, 23, 59, tzinfo=dt.timezone(dt.timedelta(hours=-8))),
            dt.date(2024, 1, 15),
        ),
        (None, None),
        (20240115, None),
        (1705276800.0, None),
        (True, None),
        (b"2024-01-15", None),
        (["2024-01-15"], None),
    ],
)
def test_non_strings(value: object, expected: dt.date | None) -> None:
    assert parse_date(value) == expected


def test_datetime_gives_a_plain_date() -> None:
    assert type(parse_date(dt.datetime(2024, 1, 15, 8))) is dt.date


def test_unknown_order_is_an_error() -> None:
    with pytest.raises(ValueError, match="order"):
        parse_date("01/02/2024", "year_first")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="order"):
        parse_date_text("01/02/2024", "year_first")


dates = st.dates(min_value=dt.date(1900, 1, 1), max_value=dt.date(2099, 12, 31))


@given(dates)
def test_written_forms_round_trip(d: dt.date) -> None:
    assert parse_date(d.isoformat()) == d
    assert parse_date(d.strftime("%Y%m%d")) == d
    assert parse_date(d.strftime("%d %b %Y")) == d
    assert parse_date(d.strftime("%B %d, %Y")) == d
    assert parse_date(d.strftime("%a, %d %b %Y")) == d
    assert parse_date(d.strftime("%d-%b-%Y")) == d


@given(dates)
def test_order_decides_numeric_dates(d: dt.date) -> None:
    assert parse_date(d.strftime("%m/%d/%Y"), "month_first") == d
    assert parse_date(d.strftime("%d/%m/%Y"), "day_first") == d
    assert parse_date(d.strftime("%d.%m.%Y"), "day_first") == d
    if d.day > 12:
        # Unambiguous: the order setting does not matter.
        assert parse_date(d.strftime("%m/%d/%Y"), "day_first") == d
        assert parse_date(d.strftime("%d/%m/%Y"), "month_first") == d


@given(st.dates(min_value=dt.date(1969, 1, 1), max_value=dt.date(2068, 12, 31)))
def test_two_digit_years_round_trip(d: dt.date) -> None:
    assert parse_date(d.strftime("%m/%d/%y")) == d
    assert parse_date(d.strftime("%d-%b-%y")) == d


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("20 Aug 2025 13:20", dt.date(2025, 8, 20)),
        ("20 Aug 2025, 13:20", dt.date(2025, 8, 20)),
        ("Jan 15, 2024 1:20 PM", dt.date(2024, 1, 15)),
        ("Jan 15 2024 1:20 p.m.", dt.date(2024, 1, 15)),
        ("15/01/2024 13:20:05 UTC", dt.date(2024, 1, 15)),
        ("01/12/2015 08:00", dt.date(2015, 1, 12)),
        ("01.12.2015 08:00:00+01:00", dt.date(2015, 12, 1)),
        ("Tue, 01 Dec 2015 10:00 GMT", dt.date(2015, 12, 1)),
    ],
)
def test_a_time_after_any_date_is_ignored(text: str, day: dt.date) -> None:
    assert parse_date(text) == day
