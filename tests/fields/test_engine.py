"""The engine on single documents: the null rules, wrong types, nested groups,
discovered attributes, unconfigured classes, confidence and metrics."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from docevals_mlflow.errors import ShapeMismatchError
from docevals_mlflow.fields.compare import DocumentComparison, FieldComparer, compare_document
from docevals_mlflow.fields.counts import Counts
from docevals_mlflow.fields.schema import DocumentSchema
from docevals_mlflow.fields.state import ROW_FIELDS

MISSING = object()
EMPTIES: list[Any] = [MISSING, None, "", "   ", "\t\n", [], {}]
EMPTY_IDS = ["missing", "None", "empty-string", "spaces", "tab-newline", "empty-list", "empty-dict"]

SCHEMA = DocumentSchema.model_validate(
    {
        "schema_id": "engine-tests",
        "classes": [
            {
                "name": "Statement",
                "fields": {
                    "Name": {"method": "EXACT"},
                    "Total": {"method": "NUMERIC_EXACT", "threshold": 0.01},
                    "Holder": {
                        "fields": {
                            "Name": {"method": "FUZZY", "threshold": 0.8},
                            "Address": {
                                "fields": {
                                    "City": {"method": "EXACT"},
                                    "Geo": {
                                        "fields": {
                                            "Lat": {"method": "NUMERIC_EXACT", "threshold": 0.001}
                                        }
                                    },
                                }
                            },
                        }
                    },
                    "Items": {
                        "items": {
                            "fields": {
                                "code": {"method": "EXACT"},
                                "amount": {"method": "NUMERIC_EXACT", "threshold": 0.01},
                            }
                        }
                    },
                    "Tags": {"items": {"method": "EXACT"}},
                },
            },
            {"name": "Receipt", "fields": {"Store": {"method": "EXACT"}}},
        ],
        "default_class": "Statement",
    }
)
ONE_FIELD = DocumentSchema.model_validate(
    {"classes": [{"name": "Doc", "fields": {"F": {"method": "EXACT"}}}]}
)


def doc(value: Any) -> dict[str, Any]:
    return {} if value is MISSING else {"F": value}


def rows_by_path(comparison: DocumentComparison) -> dict[str, dict[str, Any]]:
    rows = comparison.row_dicts()
    by_path = {row["path"]: row for row in rows}
    assert len(by_path) == len(rows), "a path was compared twice"
    return by_path


def outcomes(comparison: DocumentComparison) -> dict[str, str]:
    return {path: row["outcome"] for path, row in rows_by_path(comparison).items()}


def single(expected: Any, predicted: Any, schema: DocumentSchema = ONE_FIELD) -> dict[str, Any]:
    (row,) = FieldComparer(schema).compare(expected, predicted).row_dicts()
    return row


# --- the null rules (DESIGN §3) --------------------------------------------------


@pytest.mark.parametrize("predicted", EMPTIES, ids=EMPTY_IDS)
@pytest.mark.parametrize("expected", EMPTIES, ids=EMPTY_IDS)
def test_empty_against_empty_is_tn(expected: Any, predicted: Any) -> None:
    row = single(doc(expected), doc(predicted))
    assert (row["path"], row["outcome"], row["score"]) == ("$.F", "TN", None)
    assert row["reason"] == "Both empty"
    assert row["matched"] is True


@pytest.mark.parametrize("expected", EMPTIES, ids=EMPTY_IDS)
def test_empty_against_value_is_fa(expected: Any) -> None:
    row = single(doc(expected), {"F": "x"})
    assert (row["outcome"], row["actual"], row["score"]) == ("FA", "x", None)
    assert row["reason"] == "Predicted a value where none was expected"
    assert row["matched"] is False


@pytest.mark.parametrize("predicted", EMPTIES, ids=EMPTY_IDS)
def test_value_against_empty_is_fn(predicted: Any) -> None:
    row = single({"F": "x"}, doc(predicted))
    assert (row["outcome"], row["expected"], row["score"]) == ("FN", "x", None)
    assert row["reason"] == "Missing from the prediction"


def test_value_against_value() -> None:
    assert single({"F": "x"}, {"F": "x"})["outcome"] == "TP"
    wrong = single({"F": "x"}, {"F": "y"})
    assert (wrong["outcome"], wrong["score"], wrong["matched"]) == ("FD", 0.0, False)
    assert wrong["reason"] == "Values do not match exactly"


def test_configured_fields_absent_on_both_sides_are_tn() -> None:
    comparison = FieldComparer(SCHEMA).compare({}, {})
    assert outcomes(comparison) == {
        "$.Name": "TN",
        "$.Total": "TN",
        "$.Holder.Name": "TN",
        "$.Holder.Address.City": "TN",
        "$.Holder.Address.Geo.Lat": "TN",
        "$.Tags": "TN",
    }
    # A list absent on both sides is one true negative, as in Stickler 1.0: a leaf
    # for a list of values, an item count for a list of objects.
    empty = [0, 0, 0, 0, 1, 0]
    assert comparison.items == {"$.Items": empty, "$.Tags": empty}
    assert comparison.counts == Counts(tn=6)


def test_empty_group_on_one_side() -> None:
    comparison = FieldComparer(SCHEMA).compare(
        {"Holder": {"Name": "Ann Lee", "Address": {"City": "Oslo"}}}, {"Holder": None}
    )
    got = outcomes(comparison)
    assert got["$.Holder.Name"] == "FN"
    assert got["$.Holder.Address.City"] == "FN"
    assert got["$.Holder.Address.Geo.Lat"] == "TN"


# --- wrong types -----------------------------------------------------------------


@pytest.mark.parametrize("predicted", [["x"], {"x": 1}, [{"a": "b"}], {"F": "x"}])
def test_container_where_a_scalar_is_due_is_fd(predicted: Any) -> None:
    row = single({"F": "x"}, {"F": predicted})
    assert (row["outcome"], row["score"]) == ("FD", 0.0)
    assert row["reason"].startswith("Wrong type")
    assert row["actual"] == predicted


@pytest.mark.parametrize("predicted", [["x"], {"x": 1}])
def test_container_where_a_scalar_is_due_and_nothing_expected_is_fa(predicted: Any) -> None:
    """FA, and the reason says why: the value has the wrong type (as it does for a
    string where an object or list is due, below)."""
    row = single({}, {"F": predicted})
    assert row["outcome"] == "FA"
    assert row["reason"].startswith("Wrong type"), row["reason"]


def test_string_where_an_object_is_due() -> None:
    comparison = FieldComparer(SCHEMA).compare(
        {"Holder": {"Name": "Ann Lee", "Address": {"City": "Oslo"}}},
        {"Holder": "Ann Lee, Oslo"},
    )
    rows = rows_by_path(comparison)
    assert rows["$.Holder.Name"]["outcome"] == "FD"
    assert rows["$.Holder.Address.City"]["outcome"] == "FD"
    # Nothing was expected at Lat, so the wrongly typed prediction is a false alarm there.
    assert rows["$.Holder.Address.Geo.Lat"]["outcome"] == "FA"
    assert rows["$.Holder.Address.Geo.Lat"]["reason"].startswith("Wrong type")
    for path in ("$.Holder.Name", "$.Holder.Address.City"):
        assert rows[path]["reason"] == ("Wrong type: predicted str where an object was expected")
        assert rows[path]["actual"] == "Ann Lee, Oslo"


def test_string_where_an_object_is_due_and_nothing_expected() -> None:
    comparison = FieldComparer(SCHEMA).compare({}, {"Holder": "Ann Lee"})
    rows = rows_by_path(comparison)
    for path in ("$.Holder.Name", "$.Holder.Address.City", "$.Holder.Address.Geo.Lat"):
        assert rows[path]["outcome"] == "FA"
        assert rows[path]["reason"].startswith("Wrong type")


def test_string_where_a_list_is_due() -> None:
    comparison = FieldComparer(SCHEMA).compare(
        {"Items": [{"code": "A", "amount": 1}], "Tags": ["a", "b"]},
        {"Items": "A 1", "Tags": "a, b"},
    )
    rows = rows_by_path(comparison)
    for path in ("$.Items[0].code", "$.Items[0].amount", "$.Tags[0]", "$.Tags[1]"):
        assert rows[path]["outcome"] == "FD"
        assert rows[path]["reason"] == "Wrong type: predicted str where a list was expected"
    assert comparison.items == {"$.Items": [0, 0, 1, 0, 0, 0], "$.Tags": [0, 0, 2, 0, 0, 0]}


def test_object_where_a_list_is_due() -> None:
    comparison = FieldComparer(SCHEMA).compare(
        {"Items": [{"code": "A", "amount": 1}]}, {"Items": {"code": "A", "amount": 1}}
    )
    rows = rows_by_path(comparison)
    assert rows["$.Items[0].code"]["outcome"] == "FD"
    assert rows["$.Items[0].code"]["reason"].startswith("Wrong type: predicted dict")


def test_string_where_a_list_is_due_and_nothing_expected() -> None:
    comparison = FieldComparer(SCHEMA).compare({}, {"Items": "A 1", "Tags": "a"})
    rows = rows_by_path(comparison)
    assert rows["$.Items"]["outcome"] == "FA"
    assert rows["$.Tags"]["outcome"] == "FA"
    assert rows["$.Items"]["reason"].startswith("Wrong type")
    assert rows["$.Tags"]["reason"].startswith("Wrong type")
    assert comparison.counts == Counts(fa=2, tn=5)


def test_wrong_types_inside_list_items() -> None:
    comparison = FieldComparer(SCHEMA).compare(
        {"Items": [{"code": "A", "amount": 1}, {"code": "B", "amount": 2}]},
        {"Items": [{"code": "A", "amount": [1]}, {"code": "B", "amount": {"v": 2}}]},
    )
    rows = rows_by_path(comparison)
    # Each item still pairs on its code (similarity 0.5) and its amount is wrong.
    assert comparison.items == {"$.Items": [2, 0, 0, 0, 0, 0], "$.Tags": [0, 0, 0, 0, 1, 0]}
    assert rows["$.Items[0].amount"]["outcome"] == "FD"
    assert rows["$.Items[1].amount"]["outcome"] == "FD"
    assert rows["$.Items[0].amount"]["reason"].startswith("Wrong type: predicted list")
    assert rows["$.Items[1].amount"]["reason"].startswith("Wrong type: predicted dict")


@pytest.mark.parametrize(
    ("expected", "path", "declared", "found"),
    [
        ({"Holder": "Ann"}, "$.Holder", "an object", "a single value (str)"),
        ({"Holder": ["Ann"]}, "$.Holder", "an object", "a list"),
        ({"Name": ["ACME"]}, "$.Name", "a single value", "a list"),
        ({"Name": {"v": "ACME"}}, "$.Name", "a single value", "an object"),
        ({"Tags": "a"}, "$.Tags", "a list", "a single value (str)"),
        ({"Tags": {"a": 1}}, "$.Tags", "a list", "an object"),
        ({"Tags": [["a"]]}, "$.Tags[0]", "a single value", "a list"),
        ({"Items": [5]}, "$.Items[0]", "an object", "a single value (int)"),
        ({"Items": [{"code": ["A"]}]}, "$.Items[0].code", "a single value", "a list"),
        (
            {"Holder": {"Address": {"Geo": 7}}},
            "$.Holder.Address.Geo",
            "an object",
            "a single value (int)",
        ),
        (["x"], "$", "an object", "a list"),
    ],
)
def test_ground_truth_of_the_wrong_shape_is_an_input_error(
    expected: Any, path: str, declared: str, found: str
) -> None:
    # Even when the prediction has the same shape: the schema is what was evaluated.
    with pytest.raises(ShapeMismatchError) as raised:
        FieldComparer(SCHEMA).compare(expected, expected, document_id="d-7")
    error = raised.value
    assert (error.path, error.declared, error.found, error.documents) == (path, declared, found, 1)
    assert isinstance(error, ValueError)
    assert "document 'd-7'" in str(error)
    assert "--allow-shape-mismatch" in str(error)
    counted = FieldComparer(SCHEMA, shape_mismatch="count").compare(expected, expected)
    assert counted.invalid == [(path, declared, found)]
    assert (counted.cells, counted.counts) == ({}, Counts())


def test_wrong_shape_in_the_prediction_stays_a_model_error() -> None:
    comparison = FieldComparer(SCHEMA).compare({"Name": "ACME"}, {"Name": ["ACME"]})
    row = rows_by_path(comparison)["$.Name"]
    assert (row["outcome"], row["reason"]) == (
        "FD",
        "Wrong type: predicted list where a single value was expected",
    )


@pytest.mark.parametrize(
    "predicted",
    [5, True, 1.5, "text", ["a"], [{"x": 1}], {"x": [1, 2]}, [[1]], [None, {}], {"": None}],
)
def test_any_prediction_shape_never_crashes(predicted: Any) -> None:
    expected = {
        "Name": "n",
        "Total": 1,
        "Holder": {"Name": "a", "Address": {"City": "c", "Geo": {"Lat": 1.5}}},
        "Items": [{"code": "A", "amount": 1}],
        "Tags": ["t"],
    }
    for key in expected:
        comparison = FieldComparer(SCHEMA).compare(expected, {**expected, key: predicted})
        assert sum(Counter(row["outcome"] for row in comparison.row_dicts()).values()) == (
            comparison.counts.total + comparison.discovered_counts.total
        )
    FieldComparer(SCHEMA).compare(expected, predicted)
    if isinstance(predicted, dict):
        FieldComparer(SCHEMA).compare(predicted, expected)
    else:
        # As ground truth, anything but an object contradicts the schema.
        with pytest.raises(ShapeMismatchError):
            FieldComparer(SCHEMA).compare(predicted, expected)


# --- nested groups ---------------------------------------------------------------


def test_nested_groups() -> None:
    expected = {
        "Name": "ACME",
        "Holder": {"Name": "Ann Lee", "Address": {"City": "Oslo", "Geo": {"Lat": 59.913}}},
    }
    predicted = {
        "Name": "ACME",
        "Holder": {"Name": "ann lee.", "Address": {"City": "oslo", "Geo": {"Lat": 59.9135}}},
    }
    comparison = FieldComparer(SCHEMA).compare(expected, predicted)
    rows = rows_by_path(comparison)
    assert outcomes(comparison) == {
        "$.Name": "TP",
        "$.Total": "TN",
        "$.Holder.Name": "TP",  # ratio("ann lee", "ann lee.") = 1 - 1/15 >= 0.8
        "$.Holder.Address.City": "FD",  # EXACT is case-sensitive
        "$.Holder.Address.Geo.Lat": "TP",  # |59.913 - 59.9135| <= 0.001
        "$.Tags": "TN",
    }
    assert rows["$.Holder.Address.Geo.Lat"]["template"] == "$.Holder.Address.Geo.Lat"
    assert rows["$.Holder.Address.Geo.Lat"]["method"] == "NUMERIC_EXACT (tolerance: 0.001)"
    assert rows["$.Holder.Name"]["score"] == pytest.approx(1 - 1 / 15)
    assert comparison.counts == Counts(tp=3, fd=1, tn=2)
    assert comparison.cells["$.Holder.Address.City"] == [0, 0, 1, 0, 0]
    assert comparison.fields["$.Holder.Address.City"].kind == "scalar"


def test_keys_that_need_quoting() -> None:
    comparison = compare_document({"a.b": "x", "c": {"d e": "y"}}, {"a.b": "x", "c": {"d e": "z"}})
    assert outcomes(comparison) == {"$['a.b']": "TP", "$.c.d e": "FD"}


# --- discovered attributes --------------------------------------------------------


def test_discovered_attributes_are_flagged_and_inferred() -> None:
    expected = {"Name": "ACME", "Note": "abcdefgh", "Count": 100, "Paid": True, "Memo": "abcdefgh"}
    predicted = {"Name": "ACME", "Note": "abcdefgi", "Count": 100.01, "Paid": False, "Memo": "xyz"}
    comparison = FieldComparer(SCHEMA).compare(expected, predicted)
    rows = rows_by_path(comparison)
    assert rows["$.Name"]["discovered"] is False
    assert "[Discovered" not in rows["$.Name"]["reason"]

    note = rows["$.Note"]
    assert note["discovered"] is True
    assert note["method"] == "FUZZY (threshold: 0.85)"
    assert note["threshold"] == 0.85
    assert note["outcome"] == "TP"  # ratio 1 - 2/16 = 0.875
    assert "[Discovered" in note["reason"]
    assert note["reason"].startswith(
        "[Discovered: not in the schema; compared with FUZZY (threshold: 0.85)]"
    )
    assert rows["$.Memo"]["outcome"] == "FD"

    count = rows["$.Count"]
    assert count["discovered"] is True
    assert count["method"] == "NUMERIC_EXACT (tolerance: 0.01)"
    assert count["threshold"] == 0.01
    assert count["outcome"] == "TP"

    paid = rows["$.Paid"]
    assert (paid["method"], paid["outcome"], paid["discovered"]) == ("EXACT", "FD", True)

    info = comparison.fields
    assert info["$.Note"].discovered is True
    assert info["$.Note"].method == "FUZZY"
    assert info["$.Count"].method == "NUMERIC_EXACT"
    assert info["$.Name"].discovered is False
    assert comparison.configured is True
    assert comparison.document_class == "Statement"


def test_discovered_number_outside_tolerance() -> None:
    rows = rows_by_path(FieldComparer(SCHEMA).compare({"Count": 100}, {"Count": 100.02}))
    assert rows["$.Count"]["outcome"] == "FD"


def test_discovered_attribute_on_one_side_only() -> None:
    comparison = FieldComparer(SCHEMA).compare({"Name": "A", "Note": "n"}, {"Name": "A", "Ref": 7})
    rows = rows_by_path(comparison)
    assert rows["$.Note"]["outcome"] == "FN"
    assert rows["$.Ref"]["outcome"] == "FA"
    assert rows["$.Ref"]["method"] == "NUMERIC_EXACT (tolerance: 0.01)"
    assert rows["$.Note"]["discovered"] is True
    assert rows["$.Ref"]["discovered"] is True


def test_discovered_nested_objects_and_lists() -> None:
    expected = {"Meta": {"source": "scan", "pages": 2}, "Lines": [{"x": "abc"}, {"x": "def"}]}
    predicted = {"Meta": {"source": "scan", "pages": 3}, "Lines": [{"x": "def"}]}
    comparison = FieldComparer(SCHEMA).compare(expected, predicted)
    rows = rows_by_path(comparison)
    assert rows["$.Meta.source"]["outcome"] == "TP"
    assert rows["$.Meta.pages"]["outcome"] == "FD"
    assert rows["$.Lines[1].x"]["outcome"] == "TP"
    assert rows["$.Lines[0].x"]["outcome"] == "FN"
    for path in ("$.Meta.source", "$.Meta.pages", "$.Lines[0].x", "$.Lines[1].x"):
        assert rows[path]["discovered"] is True
        assert "[Discovered" in rows[path]["reason"]
    assert comparison.items["$.Lines"] == [1, 0, 1, 0, 0, 0]


def test_discovered_wrong_type_keeps_the_note_and_says_wrong_type() -> None:
    rows = rows_by_path(FieldComparer(SCHEMA).compare({"Note": "abc"}, {"Note": ["abc"]}))
    assert rows["$.Note"]["outcome"] == "FD"
    assert rows["$.Note"]["discovered"] is True
    assert "Wrong type" in rows["$.Note"]["reason"]


# --- classes ----------------------------------------------------------------------


def test_class_selection() -> None:
    comparer = FieldComparer(SCHEMA)
    receipt = comparer.compare({"Store": "s"}, {"Store": "s"}, document_class="Receipt")
    assert (receipt.document_class, receipt.configured) == ("Receipt", True)
    assert outcomes(receipt) == {"$.Store": "TP"}
    default = comparer.compare({"Store": "s"}, {"Store": "s"})
    assert default.document_class == "Statement"
    assert rows_by_path(default)["$.Store"]["discovered"] is True


def test_unconfigured_class_infers_every_rule_without_flagging() -> None:
    comparer = FieldComparer(SCHEMA)
    expected = {"Vendor": "abcdefgh", "Total": 12, "Lines": [{"sku": "A1", "qty": 2}]}
    predicted = {"Vendor": "abcdefgi", "Total": 12.001, "Lines": [{"sku": "A1", "qty": 3}]}
    comparison = comparer.compare(expected, predicted, document_class="Invoice", document_id="i-1")
    assert comparison.configured is False
    assert comparison.document_class == "Invoice"
    assert comparison.id == "i-1"
    rows = rows_by_path(comparison)
    assert outcomes(comparison) == {
        "$.Vendor": "TP",
        "$.Total": "TP",
        "$.Lines[0].sku": "TP",
        "$.Lines[0].qty": "FD",
    }
    for row in rows.values():
        assert row["discovered"] is False
        assert "[Discovered" not in row["reason"]
    assert rows["$.Vendor"]["method"] == "FUZZY (threshold: 0.85)"
    assert rows["$.Total"]["method"] == "NUMERIC_EXACT (tolerance: 0.01)"
    assert all(not info.discovered for info in comparison.fields.values())


def test_compare_document_without_schema() -> None:
    comparison = compare_document({"a": "x", "b": 1}, {"a": "x", "b": 2})
    assert comparison.configured is False
    assert comparison.document_class is None
    assert outcomes(comparison) == {"$.a": "TP", "$.b": "FD"}


def test_two_classes_and_no_default_leave_unclassified_documents_unconfigured() -> None:
    schema = DocumentSchema.model_validate(
        {
            "classes": [
                {"name": "A", "fields": {"x": {"method": "EXACT"}}},
                {"name": "B", "fields": {"x": {"method": "EXACT"}}},
            ]
        }
    )
    comparison = FieldComparer(schema).compare({"x": "Abc"}, {"x": "abc"})
    assert comparison.configured is False
    assert outcomes(comparison) == {"$.x": "TP"}  # inferred FUZZY lower-cases


# --- rows, confidence and metrics -------------------------------------------------


def test_row_dict_keys() -> None:
    comparison = FieldComparer(SCHEMA).compare({"Name": "a"}, {"Name": "a"})
    for row in comparison.row_dicts():
        assert list(row) == [*ROW_FIELDS, "matched"]
    frame = comparison.rows_frame()
    assert list(frame.columns) == ["document_id", "document_class", *ROW_FIELDS, "matched"]
    assert len(frame) == len(comparison.row_dicts())


def test_confidence_map_on_scalars() -> None:
    comparison = FieldComparer(SCHEMA).compare(
        {"Name": "a", "Holder": {"Name": "Ann"}},
        {"Name": "b", "Holder": {"Name": "Ann"}},
        confidence={"$.Name": 0.7, "Holder.Name": 0.95},
    )
    rows = rows_by_path(comparison)
    assert rows["$.Name"]["confidence"] == 0.7
    assert rows["$.Holder.Name"]["confidence"] == 0.95
    assert rows["$.Total"]["confidence"] is None


def test_explainability_info_on_scalars() -> None:
    info = [
        {
            "Name": {"confidence": 0.8, "geometry": []},
            "Holder": {"Address": {"City": {"confidence": 0.6}}},
            "Total": 0.5,
        }
    ]
    comparison = FieldComparer(SCHEMA).compare(
        {"Name": "a", "Holder": {"Address": {"City": "Oslo"}}},
        {"Name": "a", "Holder": {"Address": {"City": "Oslo"}}},
        explainability_info=info,
        confidence={"$.Total": 0.25},  # the map wins on conflicts
    )
    rows = rows_by_path(comparison)
    assert rows["$.Name"]["confidence"] == 0.8
    assert rows["$.Holder.Address.City"]["confidence"] == 0.6
    assert rows["$.Total"]["confidence"] == 0.25
    assert rows["$.Holder.Name"]["confidence"] is None


def test_document_metrics_by_hand() -> None:
    schema = DocumentSchema.model_validate(
        {"classes": [{"name": "D", "fields": {k: {"method": "EXACT"} for k in "abcdef"}}]}
    )
    comparison = FieldComparer(schema).compare(
        {"a": "1", "b": "2", "c": "3", "d": "4"},
        {"a": "1", "b": "2", "c": "x", "e": "5"},
    )
    assert outcomes(comparison) == {
        "$.a": "TP",
        "$.b": "TP",
        "$.c": "FD",
        "$.d": "FN",
        "$.e": "FA",
        "$.f": "TN",
    }
    assert comparison.counts == Counts(tp=2, fa=1, fd=1, fn=1, tn=1)
    metrics = comparison.metrics
    assert metrics["precision"] == pytest.approx(2 / 4)
    assert metrics["recall"] == pytest.approx(2 / 3)
    assert metrics["f1"] == pytest.approx(4 / 7)
    assert metrics["accuracy"] == pytest.approx(3 / 6)
    assert metrics["far"] == pytest.approx(1 / 2)
    assert metrics["fdr"] == pytest.approx(1 / 3)


def test_zero_denominators_give_none() -> None:
    comparison = FieldComparer(ONE_FIELD).compare({}, {})
    assert comparison.metrics == {
        "precision": None,
        "recall": None,
        "f1": None,
        "accuracy": 1.0,
        "far": 0.0,
        "fdr": None,
    }
    empty = FieldComparer(DocumentSchema()).compare({}, {})
    assert empty.counts == Counts()
    assert set(empty.metrics.values()) == {None}


def test_field_and_item_count_views() -> None:
    comparison = FieldComparer(SCHEMA).compare(
        {"Name": "a", "Tags": ["x", "y"]}, {"Name": "b", "Tags": ["y"]}
    )
    assert comparison.field_counts()["$.Name"] == Counts(fd=1)
    assert comparison.field_counts()["$.Tags[]"] == Counts(tp=1, fn=1)
    assert comparison.item_counts()["$.Tags"].as_dict() == {
        "matched": 1,
        "weak": 0,
        "missed": 1,
        "extra": 0,
        "empty": 0,
        "invented": 0,
    }
    assert comparison.fields["$.Tags"].kind == "list"
    assert comparison.fields["$.Tags"].method == "HUNGARIAN"
