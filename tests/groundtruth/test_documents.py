"""Approved rows back to documents."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from docevals_mlflow.core.paths import format_path, iter_leaves
from docevals_mlflow.errors import InputError
from docevals_mlflow.groundtruth.documents import rows_to_document

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4)
    ),
    max_leaves=20,
)


def rows(document):
    return [{"path": format_path(path), "expected": value} for path, value in iter_leaves(document)]


def test_rows_become_nested_objects_and_lists():
    document = rows_to_document(
        [
            {"path": "$.total", "expected": "10.00"},
            {"path": "$.items[1].sku", "expected": "Y"},
            {"path": "$.items[0].sku", "expected": "X"},
            {"path": "$['a.b']", "expected": None},
            {"path": "vendor.name", "expected": "ACME"},
        ]
    )
    assert document == {
        "total": "10.00",
        "items": [{"sku": "X"}, {"sku": "Y"}],
        "a.b": None,
        "vendor": {"name": "ACME"},
    }


def test_skipped_list_items_are_empty():
    assert rows_to_document([{"path": "$.items[2]", "expected": 3}]) == {"items": [None, None, 3]}


def test_the_whole_document_as_one_row_and_no_rows():
    assert rows_to_document([{"path": "$", "expected": [1, 2]}]) == [1, 2]
    assert rows_to_document([]) == {}


@given(JSON)
def test_rows_of_a_document_rebuild_it(document):
    assert rows_to_document(rows(document)) == document


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ([{"path": "$.a", "expected": 1}, {"path": "$.a.b", "expected": 2}], "conflicts"),
        ([{"path": "$.a.b", "expected": 1}, {"path": "$.a", "expected": 2}], "conflicts"),
        ([{"path": "$.a[0]", "expected": 1}, {"path": "$.a.b", "expected": 2}], "conflicts"),
        ([{"path": "$.a", "expected": 1}, {"path": "a", "expected": 2}], r"duplicate path \$\.a"),
        ([{"path": "$.a[x]", "expected": 1}], "invalid field path"),
        ([{"expected": 1}], "no path/field_path column"),
    ],
)
def test_inconsistent_rows_are_refused_naming_the_row(table, message):
    with pytest.raises(InputError, match=message) as caught:
        rows_to_document(table, source="case-7")
    assert caught.value.source == "case-7"
    assert caught.value.record == f"row {len(table)}"
