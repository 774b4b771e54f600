"""The shared number formats: values exactly, figures rounded once per kind."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from docevals_mlflow.core.formatting import (
    count_text,
    defined_number,
    metric_text,
    p_value_text,
    percent_of,
    percent_text,
    score_text,
    signed_text,
    value_text,
)

UNDEFINED = [None, float("nan"), float("inf"), True, "0.5", [0.5]]


@pytest.mark.parametrize("value", UNDEFINED)
def test_undefined_figures_are_not_available(value: Any) -> None:
    assert defined_number(value) is None
    for formatter in (metric_text, signed_text, percent_text, score_text, count_text):
        assert formatter(value) == "n/a"
    assert p_value_text(value) == "n/a"


@pytest.mark.parametrize(
    ("value", "metric", "percent", "score"),
    [
        (0.8148148148148148, "0.8148", "81.5%", "0.81"),
        (1, "1.0000", "100.0%", "1.00"),
        (0.0, "0.0000", "0.0%", "0.00"),
        (0.99995, "1.0000", "100.0%", "1.00"),
    ],
)
def test_one_precision_per_kind(value: float, metric: str, percent: str, score: str) -> None:
    assert metric_text(value) == metric
    assert percent_text(value) == percent
    assert score_text(value) == score


def test_signed_counts_and_p_values() -> None:
    assert signed_text(0.0516) == "+0.0516"
    assert signed_text(-0.002) == "-0.0020"
    assert count_text(12) == "12"
    assert count_text(12.0) == "12"
    assert count_text(2.5) == "2.5"
    assert count_text(1 / 3) == "0.33"
    assert p_value_text(0.000512345) == "0.000512"
    assert p_value_text(5.123e-6) == "5.12e-06"
    assert percent_of(1, 3) == "33.3%"
    assert percent_of(1, 0) == "n/a"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (673.95, "673.95"),
        (613.95, "613.95"),
        (123456.78, "123456.78"),
        (1e-7, "1e-07"),
        (12.0, "12.0"),
        (12, "12"),
        (10**30, "1" + "0" * 30),
        (True, "true"),
        (False, "false"),
        (None, "null"),
        ("RM7.42", "RM7.42"),
        ("1.234,56 €", "1.234,56 €"),
        ("  padded\n", "  padded\n"),
        ([1, "a", None], '[1, "a", null]'),
        ({"b": 1.5, "a": [True]}, '{"b": 1.5, "a": [true]}'),
    ],
)
def test_values_print_exactly(value: Any, text: str) -> None:
    assert value_text(value) == text


def test_numpy_floats_print_as_floats() -> None:
    numpy = pytest.importorskip("numpy")
    assert value_text(numpy.float64(673.95)) == "673.95"


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_float_values_read_back_to_the_same_number(value: float) -> None:
    assert float(value_text(value)) == value


@given(
    st.floats(min_value=0, max_value=1e9, allow_nan=False),
    st.floats(min_value=0, max_value=1e9, allow_nan=False),
)
def test_different_floats_never_print_alike(first: float, second: float) -> None:
    if first != second:
        assert value_text(first) != value_text(second)
    assert not math.isnan(float(value_text(first)))
