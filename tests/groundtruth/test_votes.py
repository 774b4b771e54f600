from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from docevals_mlflow.groundtruth.votes import number_key, vote_key


@pytest.mark.parametrize(
    ("left", "right"),
    [
        (12.5, "12.50"),
        ("12.5", "12.50"),
        (12.5, Decimal("12.500")),
        (3, "3.0"),
        (1500, "1,500.00"),
        ("1,234,567", 1234567),
        (0.1, "0.1"),
        ("-0", 0),
        ("1e3", 1000),
        (" 7 ", 7),
        ("Acme  Corp", "acme corp"),
        ("ÉCOLE", "école"),
        (True, "TRUE"),
        (None, ""),
        ("   ", []),
        ([1, "a"], ["1.0", "A"]),
        ({"a": 1, "b": "x"}, {"b": "X", "a": "1.00"}),
    ],
)
def test_values_that_agree(left, right):
    assert vote_key(left) == vote_key(right)


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("1,5", 15),  # a decimal comma somewhere, a thousands comma elsewhere: ambiguous
        ("1,5", 1.5),
        ("1,500", 1500),
        ("1,500", 1.5),
        ("007", 7),  # an identifier, not a number
        ("$12.50", 12.5),  # a currency symbol makes text
        (True, 1),  # booleans are never numbers
        ("12.5", "12.6"),
        ("a b", "ab"),
        ([1, 2], [2, 1]),
        ("1,234.5.6", 12345.6),
    ],
)
def test_values_that_differ(left, right):
    assert vote_key(left) != vote_key(right)


def test_ambiguous_comma_text_is_compared_as_text():
    assert number_key("1,5") is None
    assert vote_key("1,5") == vote_key(" 1,5 ")
    assert number_key("1,500.00") == number_key(1500)


@pytest.mark.parametrize("empty", [None, "", "  \n", [], {}])
def test_empty_values_mean_no_value(empty):
    assert vote_key(empty) is None


@given(st.decimals(allow_nan=False, allow_infinity=False, places=4))
def test_decimal_text_agrees_with_its_trailing_zero_forms(number):
    text = format(number, "f")
    padded = text + "00" if "." in text else text + ".00"
    assert vote_key(text) == vote_key(padded) == vote_key(number)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_a_float_agrees_with_its_shortest_text(number):
    assert vote_key(number) == vote_key(repr(number))
