import pytest
from hypothesis import given
from hypothesis import strategies as st

from docevals_mlflow.core.values import as_bool, as_number, is_empty, normalize_text, values_equal


@pytest.mark.parametrize(
    ("value", "empty"),
    [
        (None, True),
        ("", True),
        ("  \t\n", True),
        ([], True),
        ({}, True),
        ((), True),
        (0, False),
        (0.0, False),
        (False, False),
        ("0", False),
        ([None], False),
        ({"a": None}, False),
    ],
)
def test_is_empty(value, empty):
    assert is_empty(value) is empty


@pytest.mark.parametrize(
    ("value", "number"),
    [
        ("3", 3.0),
        ("3.0", 3.0),
        ("-2.5", -2.5),
        ("1e3", 1000.0),
        (" 4 ", 4.0),
        ("0", 0.0),
        ("0.5", 0.5),
        (".5", 0.5),
        ("+7", 7.0),
        (3, 3.0),
        (2.5, 2.5),
    ],
)
def test_as_number_accepts_numbers_and_plain_decimal_text(value, number):
    assert as_number(value) == number


@pytest.mark.parametrize(
    "value",
    [
        "007",
        "-07",
        "1,000",
        "nan",
        "inf",
        "Infinity",
        "abc",
        "",
        "1e999",
        "0x10",
        True,
        False,
        None,
        float("nan"),
        float("inf"),
        [1],
    ],
)
def test_as_number_rejects_everything_else(value):
    assert as_number(value) is None


@pytest.mark.parametrize(
    ("value", "result"),
    [(True, True), (False, False), (" TRUE ", True), ("False", False), ("yes", None), (1, None)],
)
def test_as_bool(value, result):
    assert as_bool(value) is result


def test_normalize_text():
    assert normalize_text("  Héllo \t  WORLD\n") == "héllo world"
    assert normalize_text("  Héllo \t  WORLD\n", case_sensitive=True) == "Héllo WORLD"


@pytest.mark.parametrize(
    ("expected", "predicted"),
    [
        ("3", 3.0),
        ("3.0", 3),
        ("1e3", 1000),
        (" 4 ", "4.00"),
        (True, "true"),
        (False, " FALSE "),
        (True, True),
        (None, ""),
        (None, []),
        (None, {}),
        ("", []),
        ("  ", {}),
        ([], {}),
        ("ABC Corp", "abc corp"),
        ("  a \t b\n", "a b"),
        ("e\u0301", "\u00e9"),
        ("007", "007"),
        ([1, "a"], (1, "a")),
        ({"a": 1, "b": [2]}, {"b": [2], "a": 1}),
    ],
)
def test_values_equal(expected, predicted):
    assert values_equal(expected, predicted) is True
    assert values_equal(predicted, expected) is True


@pytest.mark.parametrize(
    ("expected", "predicted"),
    [
        ("007", 7),
        ("007", "7"),
        (True, 1),
        (False, 0),
        (True, "1"),
        (True, False),
        (None, 0),
        ("", 0),
        (None, False),
        ("abc", "abd"),
        ("1,000", 1000),
        (3, 4),
        ([1, 2], [2, 1]),
        ([1], ["1"]),
        ({"a": 1}, "a"),
        ([1], 1),
        (float("nan"), float("nan")),
    ],
)
def test_values_not_equal(expected, predicted):
    assert values_equal(expected, predicted) is False
    assert values_equal(predicted, expected) is False


def test_case_sensitive_text_comparison():
    assert values_equal("ABC", "abc", case_sensitive=True) is False
    assert values_equal(" ABC ", "ABC", case_sensitive=True) is True
    assert values_equal("e\u0301", "\u00e9", case_sensitive=True) is True


def test_default_tolerance():
    assert values_equal(1.0, 1.0000001) is True
    assert values_equal(1.0, 1.00001) is False
    assert values_equal(0, 1e-7) is True
    assert values_equal(0, 1e-5) is False


@pytest.mark.parametrize(
    ("left", "right", "equal"),
    [(0, 0.5, True), (0, -0.5, True), (0, 0.75, False), ("0", "0.5", True)],
)
def test_absolute_tolerance_boundary_is_inclusive(left, right, equal):
    assert values_equal(left, right, relative_tolerance=0, absolute_tolerance=0.5) is equal


@pytest.mark.parametrize(
    ("left", "right", "equal"),
    # rel_tol * max(|a|, |b|): 0.25 * 4 = 1 (boundary), 0.25 * 5 = 1.25, 0.25 * 6 = 1.5.
    [(3, 4, True), (4, 5, True), (4, 6, False), (-4, -5, True), (-4, -6, False)],
)
def test_relative_tolerance_boundary_is_inclusive(left, right, equal):
    assert values_equal(left, right, relative_tolerance=0.25, absolute_tolerance=0) is equal


def test_zero_tolerance_is_exact():
    assert values_equal(1.0, 1.0000001, relative_tolerance=0, absolute_tolerance=0) is False
    assert values_equal("2.50", 2.5, relative_tolerance=0, absolute_tolerance=0) is True


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-1000, max_value=1000),
    st.floats(),
    st.text(max_size=4),
    st.sampled_from(["3", "3.0", "007", " 4 ", "1e3", "-2.5", "true", "FALSE", "", " "]),
    st.from_regex(r"[+-]?[0-9]{1,3}(\.[0-9]{1,2})?", fullmatch=True),
)


@given(_scalars, _scalars)
def test_values_equal_is_symmetric(left, right):
    assert values_equal(left, right) == values_equal(right, left)
