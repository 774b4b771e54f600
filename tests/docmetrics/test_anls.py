"""ANLS and ANLS*: worked examples, bad input, and ANLS_STAR as a field method."""

from __future__ import annotations

import datetime

import pytest

from docevals_mlflow.docmetrics.anls import anls, anls_star, nls
from docevals_mlflow.errors import InputError
from docevals_mlflow.fields.compare import compare_document
from docevals_mlflow.fields.schema import DocumentSchema


def test_nls_and_anls_worked_examples() -> None:
    assert nls("Hello World", "hello  world ") == 1.0
    assert nls("abcd", "abxy") == 0.5  # kept: only below 0.5 scores 0
    assert nls("abcd", "axyz") == 0.0
    assert anls([["yes", "y"], ["Paris"]], ["Y", "paris!"]) == pytest.approx((1 + 5 / 6) / 2)
    with pytest.raises(InputError, match="question 0: expected a non-empty list"):
        anls([[]], ["x"])


def test_anls_star_worked_examples() -> None:
    assert anls_star(None, None) == 1.0
    assert anls_star(None, "x") == 0.0
    assert anls_star(["a", "b", "c"], ["c", "a"]) == pytest.approx(2 / 3)
    assert anls_star({"a": "x"}, {"a": "x", "b": "y"}) == 0.5
    assert anls_star({"a": "x"}, {"a": "x", "b": None}) == 0.5  # as the package scores it
    assert anls_star(("yes", "yeah"), "Yeah") == 1.0
    assert anls_star([], []) == 1.0


def test_anls_star_bad_input_names_the_path() -> None:
    with pytest.raises(InputError, match=r"\$ \(predicted\)\.items\[1\]: a tuple in a prediction"):
        anls_star({"items": []}, {"items": ["a", ("b",)]})
    when = datetime.date(2024, 1, 1)
    with pytest.raises(InputError, match=r"\$ \(expected\)\.when: date is not one of"):
        anls_star({"when": when}, {"when": "2024-01-01"})


def test_anls_star_is_a_field_method_of_a_schema() -> None:
    fields = {
        "name": {"method": "ANLS_STAR", "threshold": 0.8},
        "city": {"method": "ANLS_STAR"},
        "tags": {"items": {"method": "ANLS_STAR"}},
    }
    schema = DocumentSchema.model_validate({"classes": [{"name": "c", "fields": fields}]})
    expected = {"name": "ACME Corp", "city": "München", "tags": ["paid", "urgent"]}
    predicted = {"name": "acme corp.", "city": "Munich", "tags": ["urgnt", "paid"]}
    rows = {row["path"]: row for row in compare_document(expected, predicted, schema).row_dicts()}
    assert (rows["$.name"]["score"], rows["$.name"]["outcome"]) == (pytest.approx(0.9), "TP")
    assert rows["$.name"]["method"] == "ANLS_STAR (threshold: 0.8)"
    # 4 edits over 7 characters: NLS 0.43 is below 0.5, so ANLS scores it 0.
    assert (rows["$.city"]["score"], rows["$.city"]["outcome"]) == (0.0, "FD")
    assert rows["$.tags[0]"]["score"] == pytest.approx(1.0)
    assert rows["$.tags[1]"]["score"] == pytest.approx(1 - 1 / 6)
