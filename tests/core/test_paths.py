import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from docevals_mlflow.core.paths import format_path, iter_leaves, lookup, parse_path
from docevals_mlflow.errors import InputError


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ((), "$"),
        (("a", "b"), "$.a.b"),
        (("items", 0, "code"), "$.items[0].code"),
        (("a.b",), "$['a.b']"),
        (("it's",), "$['it\\'s']"),
        (("back\\slash",), "$['back\\\\slash']"),
        (("Account Number",), "$.Account Number"),
        (("",), "$['']"),
        (("0",), "$.0"),
        ((0,), "$[0]"),
        (("$",), "$['$']"),
        ((" padded",), "$[' padded']"),
        (("a[0]",), "$['a[0]']"),
        (('say "hi"',), "$['say \"hi\"']"),
    ],
)
def test_format_path_and_parse_path_are_inverse(path, text):
    assert format_path(path) == text
    assert parse_path(text) == path


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("items[0].code", ("items", 0, "code")),
        ("a", ("a",)),
        ("[2]", (2,)),
        ('$["a.b"]', ("a.b",)),
        ("  $.a  ", ("a",)),
        ("$[ 3 ]", (3,)),
        ("$.Account Number", ("Account Number",)),
        ("$.items[10][2]", ("items", 10, 2)),
    ],
)
def test_parse_path_accepts_alternative_spellings(text, path):
    assert parse_path(text) == path


def test_bracket_quoted_key_and_dotted_path_are_distinct():
    assert parse_path("$['a.b']") == ("a.b",)
    assert parse_path("$.a.b") == ("a", "b")
    assert format_path(("a.b",)) != format_path(("a", "b"))


def test_digit_key_and_list_index_are_distinct():
    assert parse_path("$.0") == ("0",)
    assert parse_path("$[0]") == (0,)


@pytest.mark.parametrize(
    ("text", "column", "problem"),
    [
        ("$.", 3, "empty key after '.'"),
        ("$..a", 3, "empty key after '.'"),
        ("$[x]", 3, "list index must be a non-negative integer, got 'x'"),
        ("$[-1]", 3, "list index must be a non-negative integer, got '-1'"),
        ("$['unterminated", 3, "unterminated quoted key"),
        ("$[1", 2, "unclosed '['"),
        ("$['a'", 6, "expected ']' after quoted key"),
        ("$a", 2, "unexpected 'a'"),
    ],
)
def test_invalid_paths_raise_input_error_with_column(text, column, problem):
    expected = f"invalid field path {text!r} (column {column}): {problem}"
    with pytest.raises(InputError, match=re.escape(expected)):
        parse_path(text)


@pytest.mark.parametrize(
    ("text", "column"),
    [
        # The message quotes the text as given, so the column must count in that text.
        ("items[x]", 7),
        ("[x]", 2),
        ("  $[x]", 5),
    ],
)
def test_invalid_path_column_counts_in_the_text_as_given(text, column):
    with pytest.raises(InputError, match=re.escape(f"{text!r} (column {column})")):
        parse_path(text)


def test_non_ascii_digit_index_is_an_input_error():
    # "²".isdigit() is True but int("²") fails: must still be reported as a path error.
    with pytest.raises(InputError, match=re.escape("(column 3)")):
        parse_path("$[²]")


def test_empty_and_non_text_paths_are_rejected():
    with pytest.raises(InputError, match="empty field path"):
        parse_path("   ")
    with pytest.raises(InputError, match="path must be text, got int"):
        parse_path(5)


_tricky_keys = st.sampled_from(
    ["", " ", "$", "$.a", "a.b", "[0]", "'", '"', "\\", "\\'", " a", "a ", "0", "a b", "é"]
)
_segments = st.lists(
    st.one_of(st.text(max_size=8), _tricky_keys, st.integers(min_value=0, max_value=10**6)),
    max_size=6,
).map(tuple)


@given(_segments)
def test_parse_path_inverts_format_path(path):
    assert parse_path(format_path(path)) == path


def test_iter_leaves_yields_scalars_and_empty_containers():
    value = {"a": {"b": 1, "c": []}, "d": [{}, 2], "e": None}
    assert list(iter_leaves(value)) == [
        (("a", "b"), 1),
        (("a", "c"), []),
        (("d", 0), {}),
        (("d", 1), 2),
        (("e",), None),
    ]


@pytest.mark.parametrize("value", [{}, [], 5, "text", None])
def test_iter_leaves_of_a_leaf_is_the_root(value):
    assert list(iter_leaves(value)) == [((), value)]


def test_iter_leaves_dotted_key_and_nested_keys_differ():
    flat = list(iter_leaves({"a.b": 1}))
    nested = list(iter_leaves({"a": {"b": 1}}))
    assert flat == [(("a.b",), 1)]
    assert nested == [(("a", "b"), 1)]
    assert format_path(flat[0][0]) == "$['a.b']"
    assert format_path(nested[0][0]) == "$.a.b"


_DOC = {"items": [{"code": "X"}, {"code": None}], "a.b": 2, "0": "zero"}


@pytest.mark.parametrize(
    ("path", "result"),
    [
        (("items", 0, "code"), (True, "X")),
        (("items", 1, "code"), (True, None)),
        (("items", 2, "code"), (False, None)),
        (("items", -1), (False, None)),
        (("items", "0"), (False, None)),
        (("a.b",), (True, 2)),
        (("a", "b"), (False, None)),
        (("0",), (True, "zero")),
        ((0,), (False, None)),
        (("missing",), (False, None)),
        (("a.b", "x"), (False, None)),
        ((), (True, _DOC)),
    ],
)
def test_lookup(path, result):
    assert lookup(_DOC, path) == result
