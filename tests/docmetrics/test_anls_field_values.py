"""ANLS_STAR fields holding objects and lists: scored as one value with ANLS*, counted
as every other method counts a value, and equal to the ``anls-star`` package."""

from __future__ import annotations

import random
import warnings
from typing import Any

import pytest

from docevals_mlflow.core.values import is_empty
from docevals_mlflow.docmetrics.anls import anls_star
from docevals_mlflow.errors import ShapeMismatchError
from docevals_mlflow.fields.compare import compare_document
from docevals_mlflow.fields.registry import registered_field_method
from docevals_mlflow.fields.schema import DocumentSchema


def _schema(fields: dict[str, Any]) -> DocumentSchema:
    return DocumentSchema.model_validate({"classes": [{"name": "c", "fields": fields}]})


def _rows(expected: Any, predicted: Any, schema: DocumentSchema) -> dict[str, dict[str, Any]]:
    result = compare_document(expected, predicted, schema)
    assert not result.invalid
    return {row["path"]: row for row in result.row_dicts()}


def test_structured_values_is_a_capability_of_the_method_record() -> None:
    anls_record, exact_record = (
        registered_field_method("ANLS_STAR"),
        registered_field_method("EXACT"),
    )
    assert anls_record is not None
    assert anls_record.structured_values
    assert exact_record is not None
    assert not exact_record.structured_values


def test_an_anls_star_field_scores_an_object_as_one_value() -> None:
    schema = _schema({"meta": {"method": "ANLS_STAR", "threshold": 0.6}})
    expected = {"meta": {"name": "ACME", "total": "12.50", "tags": ["a", "b"]}}
    predicted = {"meta": {"name": "acme", "total": "12.5", "tags": ["b"]}}
    row = _rows(expected, predicted, schema)["$.meta"]
    # name 1, total 1 - 1/5 = 0.8, tags: b matched (1), a missing (0): 2.8 / 4 places.
    assert row["score"] == pytest.approx(2.8 / 4)
    assert row["outcome"] == "TP"
    assert row["expected"] == expected["meta"]
    far = {"meta": {"name": "Globex", "total": None}}
    assert _rows(expected, far, schema)["$.meta"]["outcome"] == "FD"


@pytest.mark.parametrize(
    ("expected", "predicted", "outcome"),
    [
        (None, None, "TN"),
        ({}, [], "TN"),
        (None, {"a": "x"}, "FA"),
        ([], ["x"], "FA"),
        ({"a": "x"}, None, "FN"),
        (["x"], {}, "FN"),
        ({"a": "x"}, "x", "FD"),  # another kind of value scores 0
        (["a", "b"], ["b", "a"], "TP"),
        ("x", {"a": "x"}, "FD"),
    ],
)
def test_cells_follow_the_rules_of_every_method(
    expected: Any, predicted: Any, outcome: str
) -> None:
    schema = _schema({"v": {"method": "ANLS_STAR"}})
    assert _rows({"v": expected}, {"v": predicted}, schema)["$.v"]["outcome"] == outcome


def test_other_methods_still_refuse_objects_in_single_value_fields() -> None:
    schema = _schema({"v": {"method": "FUZZY"}})
    with pytest.raises(ShapeMismatchError, match=r"at \$\.v: .* holds an object where the"):
        compare_document({"v": {"a": "x"}}, {"v": {"a": "x"}}, schema)


def test_objects_in_list_items_and_unpaired_items() -> None:
    schema = _schema(
        {
            "rows": {"items": {"fields": {"k": {"method": "EXACT"}, "m": {"method": "ANLS_STAR"}}}},
            "values": {"items": {"method": "ANLS_STAR"}},
        }
    )
    expected = {
        "rows": [{"k": "1", "m": {"z": "q"}}, {"k": "2", "m": {"z": "r"}}],
        "values": ["a", {"x": "yes"}],
    }
    predicted = {
        "rows": [{"k": "1", "m": {"z": "q"}}],
        "values": [{"x": "yes!"}, "a", ["extra"]],
    }
    rows = _rows(expected, predicted, schema)
    assert rows["$.rows[0].m"]["outcome"] == "TP"
    assert rows["$.rows[1].m"]["outcome"] == "FN"  # its item has no predicted item
    assert rows["$.values[1]"]["score"] == pytest.approx(0.75)
    assert rows["$.values[1]"]["outcome"] == "TP"
    assert [row["outcome"] for path, row in rows.items() if path.startswith("$.values")].count(
        "FA"
    ) == 1


# --- against the anls-star package ------------------------------------------------

LEAVES: tuple[Any, ...] = (
    "apple",
    "Apple ",
    "aple",
    "banana",
    "",
    "東京",
    "café",
    "42",
    42,
    4.5,
    True,
)


def _json_value(rng: random.Random, depth: int) -> Any:
    roll = rng.random()
    if depth > 2 or roll < 0.4:
        return None if rng.random() < 0.1 else rng.choice(LEAVES)
    if roll < 0.7:
        return [_json_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice("abcd"): _json_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def _mutated(rng: random.Random, value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _mutated(rng, item) for key, item in value.items() if rng.random() > 0.15}
    if isinstance(value, list):
        items = [_mutated(rng, item) for item in value]
        rng.shuffle(items)
        return items
    if isinstance(value, str) and value and rng.random() < 0.4:
        return value[:-1]
    return value


def test_anls_star_fields_equal_the_package_on_generated_json_values() -> None:
    package = pytest.importorskip("anls_star", reason="anls-star (the bench extra) is missing")
    threshold = 0.7
    schema = _schema({"v": {"method": "ANLS_STAR", "threshold": threshold}})
    rng = random.Random(2024)
    scored = 0
    for _ in range(1500):
        expected = _json_value(rng, 0)
        predicted = _mutated(rng, expected) if rng.random() < 0.5 else _json_value(rng, 0)
        row = _rows({"v": expected}, {"v": predicted}, schema)["$.v"]
        if is_empty(expected):
            assert row["outcome"] == ("TN" if is_empty(predicted) else "FA")
            continue
        if is_empty(predicted):
            assert row["outcome"] == "FN"
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # its ST-VQA compatibility warning
            reference = float(package.anls_score(expected, predicted))
        assert row["score"] == pytest.approx(reference, abs=1e-9), (expected, predicted)
        assert row["score"] == pytest.approx(anls_star(expected, predicted), abs=1e-12)
        assert row["outcome"] == ("TP" if reference >= threshold else "FD")
        scored += 1
    assert scored > 900
