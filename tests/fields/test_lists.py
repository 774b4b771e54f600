"""Lists: Hungarian pairing of items, item counts, path naming and confidence.

Item counts are ``[matched, weak, missed, extra, empty, invented]``.
"""

from __future__ import annotations

from typing import Any

import pytest
from rapidfuzz import fuzz

from docevals_mlflow.errors import ShapeMismatchError
from docevals_mlflow.fields.compare import DocumentComparison, FieldComparer
from docevals_mlflow.fields.counts import Counts
from docevals_mlflow.fields.schema import DocumentSchema

ITEM = {
    "fields": {
        "code": {"method": "EXACT"},
        "amount": {"method": "NUMERIC_EXACT", "threshold": 0.01},
        "desc": {"method": "FUZZY", "threshold": 0.8},
    }
}
SCHEMA = DocumentSchema.model_validate(
    {
        "classes": [
            {
                "name": "Doc",
                "fields": {
                    "Items": {"items": ITEM},
                    "Strict": {"match_threshold": 0.9, "items": ITEM},
                    "StrictPaired": {"match_threshold": 0.9, "pairing": "strict", "items": ITEM},
                    "Pairs": {
                        "items": {
                            "fields": {"code": {"method": "EXACT"}, "amount": {"method": "EXACT"}}
                        }
                    },
                    "Weighted": {
                        "items": {
                            "fields": {
                                "code": {"method": "EXACT", "weight": 3},
                                "amount": {"method": "EXACT"},
                            }
                        }
                    },
                    "Grid": {
                        "items": {"fields": {key: {"method": "EXACT"} for key in "abcd"}},
                    },
                    "Nested": {
                        "items": {
                            "fields": {
                                "code": {"method": "EXACT"},
                                "sub": {"items": {"method": "EXACT"}},
                                "meta": {"fields": {"ref": {"method": "EXACT"}}},
                            }
                        }
                    },
                    "Tags": {"items": {"method": "EXACT"}},
                    "Names": {"items": {"method": "FUZZY", "threshold": 0.8}},
                    "StrictTags": {"pairing": "strict", "items": {"method": "EXACT"}},
                    "StrictNames": {
                        "pairing": "strict",
                        "items": {"method": "FUZZY", "threshold": 0.8},
                    },
                },
            }
        ]
    }
)

A = {"code": "A1", "amount": 10, "desc": "office chair"}
B = {"code": "B2", "amount": "20.00", "desc": "desk lamp"}
C = {"code": "C3", "amount": 30.5, "desc": "paper"}
X = {"code": "X9", "amount": 99, "desc": "stapler"}


def compare(
    expected: dict[str, Any], predicted: dict[str, Any], **kwargs: Any
) -> DocumentComparison:
    return FieldComparer(SCHEMA).compare(expected, predicted, **kwargs)


def counts(comparison: DocumentComparison) -> Counts:
    """The document's cells without the true negatives of the schema's other lists,
    absent from these documents (each is one TN, as in Stickler 1.0)."""
    total = Counts()
    for row in comparison.row_dicts():
        if row["reason"] != "Both lists empty":
            total.add(Counts(**{row["outcome"].lower(): 1}))
    return total


def rows_by_path(comparison: DocumentComparison) -> dict[str, dict[str, Any]]:
    rows = comparison.row_dicts()
    by_path = {row["path"]: row for row in rows}
    assert len(by_path) == len(rows), "a path was compared twice"
    return by_path


def outcomes(comparison: DocumentComparison, prefix: str = "$.Items") -> dict[str, str]:
    return {
        path: row["outcome"]
        for path, row in rows_by_path(comparison).items()
        if path.startswith(prefix + "[")
    }


def leaves(index: int, outcome: str, prefix: str = "$.Items") -> dict[str, str]:
    return {f"{prefix}[{index}].{key}": outcome for key in ("code", "amount", "desc")}


# --- lists of objects --------------------------------------------------------------


def test_reordered_items_still_pair() -> None:
    comparison = compare({"Items": [A, B, C]}, {"Items": [C, A, B]})
    assert outcomes(comparison) == {**leaves(0, "TP"), **leaves(1, "TP"), **leaves(2, "TP")}
    assert comparison.items["$.Items"] == [3, 0, 0, 0, 0, 0]
    rows = rows_by_path(comparison)
    # Paths name the expected item; the predicted value is the one it was paired with.
    assert rows["$.Items[1].code"]["expected"] == "B2"
    assert rows["$.Items[1].code"]["actual"] == "B2"
    assert rows["$.Items[1].amount"]["template"] == "$.Items[].amount"


def test_missing_item() -> None:
    comparison = compare({"Items": [A, B, C]}, {"Items": [A, C]})
    assert outcomes(comparison) == {**leaves(0, "TP"), **leaves(1, "FN"), **leaves(2, "TP")}
    assert comparison.items["$.Items"] == [2, 0, 1, 0, 0, 0]
    row = rows_by_path(comparison)["$.Items[1].desc"]
    assert (row["expected"], row["actual"], row["score"]) == ("desk lamp", None, None)
    assert row["reason"] == "Expected item has no matching predicted item"


def test_missing_item_counts_only_its_non_empty_leaves() -> None:
    partial = {"code": "B2", "amount": None, "desc": ""}
    comparison = compare({"Items": [A, partial]}, {"Items": [A]})
    assert outcomes(comparison) == {**leaves(0, "TP"), "$.Items[1].code": "FN"}
    assert comparison.items["$.Items"] == [1, 0, 1, 0, 0, 0]


def test_extra_items_are_numbered_after_the_expected_list() -> None:
    comparison = compare({"Items": [A, B]}, {"Items": [X, A, {**X, "code": "Y8"}, B]})
    assert outcomes(comparison) == {
        **leaves(0, "TP"),
        **leaves(1, "TP"),
        **leaves(2, "FA"),
        **leaves(3, "FA"),
    }
    rows = rows_by_path(comparison)
    assert rows["$.Items[2].code"]["actual"] == "X9"
    assert rows["$.Items[3].code"]["actual"] == "Y8"
    assert rows["$.Items[2].code"]["reason"] == "Predicted item matches no expected item"
    assert comparison.items["$.Items"] == [2, 0, 0, 2, 0, 0]


def test_extra_item_index_counts_empty_expected_items() -> None:
    comparison = compare({"Items": [A, None]}, {"Items": [A, X]})
    assert outcomes(comparison) == {**leaves(0, "TP"), **leaves(2, "FA")}
    assert comparison.items["$.Items"] == [1, 0, 0, 1, 0, 0]


def test_duplicate_items() -> None:
    comparison = compare({"Items": [A, A]}, {"Items": [A]})
    assert comparison.items["$.Items"] == [1, 0, 1, 0, 0, 0]
    assert comparison.field_counts()["$.Items[].code"] == Counts(tp=1, fn=1)
    comparison = compare({"Items": [A]}, {"Items": [A, A]})
    assert comparison.items["$.Items"] == [1, 0, 0, 1, 0, 0]
    assert comparison.field_counts()["$.Items[].code"] == Counts(tp=1, fa=1)
    comparison = compare({"Items": [A, A, B]}, {"Items": [B, A, A]})
    assert comparison.items["$.Items"] == [3, 0, 0, 0, 0, 0]
    assert counts(comparison) == Counts(tp=9)


@pytest.mark.parametrize("expected", [[], None, "missing", [None, "", "  "]])
@pytest.mark.parametrize("predicted", [[], None, "missing", [None]])
def test_lists_empty_on_both_sides_are_one_true_negative(expected: Any, predicted: Any) -> None:
    # As in Stickler 1.0: nothing expected and nothing predicted is a correct
    # answer, one TN (a leaf for a list of values, an item for a list of objects).
    def side(value: Any) -> dict[str, Any]:
        return {} if value == "missing" else {"Items": value, "Tags": value}

    comparison = compare(side(expected), side(predicted))
    assert outcomes(comparison) == {}
    assert outcomes(comparison, "$.Tags") == {}
    assert comparison.items["$.Items"] == [0, 0, 0, 0, 1, 0]
    assert comparison.items["$.Tags"] == [0, 0, 0, 0, 1, 0]
    assert "$.Items[].code" not in comparison.cells
    assert comparison.field_counts()["$.Tags[]"] == Counts(tn=1)
    row = rows_by_path(comparison)["$.Tags"]
    assert (row["outcome"], row["reason"]) == ("TN", "Both lists empty")


def test_empty_objects_are_items() -> None:
    # {} and an item holding only unconfigured keys are items, as in Stickler: two of
    # them are fully similar (nothing configured disagrees) and pair.
    comparison = compare({"Items": [A, {}]}, {"Items": [{"note": "Services"}, A]})
    assert comparison.items["$.Items"] == [2, 0, 0, 0, 0, 0]
    # The unconfigured key is compared (a discovered field) but takes no part in
    # pairing and, by default, none in the document's figures.
    assert outcomes(comparison) == {**leaves(0, "TP"), **leaves(1, "TN"), "$.Items[1].note": "FA"}
    assert comparison.discovered_counts == Counts(fa=1)
    assert comparison.counts.fa == 0
    # Against a real item it is a weak pair: what the real item holds is FA.
    comparison = compare({"Items": [{}]}, {"Items": [B]})
    assert comparison.items["$.Items"] == [0, 1, 0, 0, 0, 0]
    assert counts(comparison) == Counts(fa=3)


def test_items_invented_where_none_were_expected() -> None:
    comparison = compare({"Items": [], "Tags": None}, {"Items": [A], "Tags": ["a", "b"]})
    assert comparison.items["$.Items"] == [0, 0, 0, 1, 0, 1]
    assert comparison.items["$.Tags"] == [0, 0, 0, 2, 0, 1]
    assert comparison.item_counts()["$.Items"].metrics()["far"] == 1.0


def test_one_wrong_attribute_out_of_three_pairs_and_counts_one_fd() -> None:
    wrong = {**A, "amount": 12}
    comparison = compare({"Items": [A]}, {"Items": [wrong]})
    assert outcomes(comparison) == {
        "$.Items[0].code": "TP",
        "$.Items[0].amount": "FD",
        "$.Items[0].desc": "TP",
    }
    assert comparison.items["$.Items"] == [1, 0, 0, 0, 0, 0]
    assert counts(comparison) == Counts(tp=2, fd=1)


def test_pair_below_the_match_threshold_is_a_weak_pair() -> None:
    # Stickler 1.0: the assignment pairs min(m, n) items; a pair below the threshold
    # is one FD at item level, and its attributes are FD where both hold a value,
    # even those that happen to agree (they belong to different items).
    wrong = {**A, "amount": 12, "desc": None}  # similarity (1 + 0 + 0) / 3 < 0.9
    comparison = compare({"Strict": [A]}, {"Strict": [wrong]})
    assert outcomes(comparison, "$.Strict") == {
        "$.Strict[0].code": "FD",
        "$.Strict[0].amount": "FD",
        "$.Strict[0].desc": "FN",
    }
    assert comparison.items["$.Strict"] == [0, 1, 0, 0, 0, 0]
    assert counts(comparison) == Counts(fd=2, fn=1)
    row = rows_by_path(comparison)["$.Strict[0].code"]
    assert row["reason"] == "Weak pair (item similarity 0.33 < 0.9)"
    assert (row["expected"], row["actual"], row["score"]) == ("A1", "A1", None)
    # A fully equal item is matched.
    assert compare({"Strict": [A]}, {"Strict": [A]}).items["$.Strict"] == [1, 0, 0, 0, 0, 0]


def test_strict_pairing_leaves_the_weak_pair_unpaired() -> None:
    wrong = {**A, "amount": 12}  # similarity 2/3 < 0.9
    comparison = compare({"StrictPaired": [A]}, {"StrictPaired": [wrong]})
    assert outcomes(comparison, "$.StrictPaired") == {
        **leaves(0, "FN", "$.StrictPaired"),
        **leaves(1, "FA", "$.StrictPaired"),
    }
    assert comparison.items["$.StrictPaired"] == [0, 0, 1, 1, 0, 0]
    assert counts(comparison) == Counts(fa=3, fn=3)
    same = compare({"StrictPaired": [A]}, {"StrictPaired": [A]})
    assert same.items["$.StrictPaired"] == [1, 0, 0, 0, 0, 0]


def test_list_pairing_override_applies_to_every_list() -> None:
    wrong = {**A, "amount": 12}
    comparer = FieldComparer(SCHEMA, list_pairing="strict")
    comparison = comparer.compare(
        {"Strict": [A], "Tags": ["a"]}, {"Strict": [wrong], "Tags": ["b"]}
    )
    assert comparison.items["$.Strict"] == [0, 0, 1, 1, 0, 0]
    assert comparison.items["$.Tags"] == [0, 0, 1, 1, 0, 0]
    assert comparison.fields["$.Strict"].label == (
        "HUNGARIAN (match threshold: 0.9, strict pairing)"
    )
    comparer = FieldComparer(SCHEMA, list_pairing="stickler")
    comparison = comparer.compare({"StrictTags": ["a"]}, {"StrictTags": ["b"]})
    assert comparison.items["$.StrictTags"] == [0, 1, 0, 0, 0, 0]


def test_match_threshold_is_inclusive() -> None:
    # Two attributes, one agrees: similarity exactly 0.5, the default match threshold.
    comparison = compare(
        {"Pairs": [{"code": "A", "amount": "1"}]}, {"Pairs": [{"code": "A", "amount": "2"}]}
    )
    assert comparison.items["$.Pairs"] == [1, 0, 0, 0, 0, 0]
    assert counts(comparison) == Counts(tp=1, fd=1)


def test_similarity_uses_attributes_present_on_either_side() -> None:
    # amount is on the expected side only: similarity (1 + 0) / 2 = 0.5, paired.
    comparison = compare({"Pairs": [{"code": "A", "amount": "1"}]}, {"Pairs": [{"code": "A"}]})
    assert comparison.items["$.Pairs"] == [1, 0, 0, 0, 0, 0]
    assert outcomes(comparison, "$.Pairs") == {"$.Pairs[0].code": "TP", "$.Pairs[0].amount": "FN"}
    # Attributes empty on both sides do not count: similarity 1/1, and a TN row.
    comparison = compare({"Items": [{"code": "A1"}]}, {"Items": [{"code": "A1", "desc": " "}]})
    assert outcomes(comparison) == {
        "$.Items[0].code": "TP",
        "$.Items[0].amount": "TN",
        "$.Items[0].desc": "TN",
    }


def test_attribute_weights_in_similarity() -> None:
    # code weighs 3, amount 1: a wrong code leaves 1/4, a wrong amount 3/4.
    expected = {"Weighted": [{"code": "A", "amount": "1"}]}
    wrong_code = compare(expected, {"Weighted": [{"code": "B", "amount": "1"}]})
    assert wrong_code.items["$.Weighted"] == [0, 1, 0, 0, 0, 0]
    wrong_amount = compare(expected, {"Weighted": [{"code": "A", "amount": "2"}]})
    assert wrong_amount.items["$.Weighted"] == [1, 0, 0, 0, 0, 0]


def test_pairing_maximises_total_similarity_not_greedy() -> None:
    a = {"a": "1", "b": "1", "c": "1", "d": "1"}
    b = {"a": "1", "b": "1", "c": "1", "d": "y"}
    p = {"a": "1", "b": "1", "c": "1", "d": "x"}  # a: 3/4, b: 3/4
    q = {"a": "1", "b": "1", "c": "x", "d": "1"}  # a: 3/4, b: 2/4
    # Best total: a-q + b-p = 1.5 (a greedy a-p first would leave b-q, 1.25).
    comparison = compare({"Grid": [a, b]}, {"Grid": [p, q]}, confidence={"$.Grid[1].c": 0.4})
    assert comparison.items["$.Grid"] == [2, 0, 0, 0, 0, 0]
    assert counts(comparison) == Counts(tp=6, fd=2)
    rows = rows_by_path(comparison)
    assert rows["$.Grid[0].c"]["actual"] == "x"  # a was paired with q
    assert rows["$.Grid[0].c"]["confidence"] == 0.4  # q's confidence
    assert rows["$.Grid[1].d"]["actual"] == "x"  # b was paired with p


def test_non_object_items_in_a_list_of_objects() -> None:
    comparison = compare({"Items": [A]}, {"Items": [A, "junk"]})
    rows = rows_by_path(comparison)
    assert rows["$.Items[1]"]["outcome"] == "FA"
    assert rows["$.Items[1]"]["actual"] == "junk"
    assert comparison.items["$.Items"] == [1, 0, 0, 1, 0, 0]


def test_ground_truth_item_of_the_wrong_shape_is_an_input_error() -> None:
    with pytest.raises(ShapeMismatchError) as raised:
        compare({"Items": ["junk", A]}, {"Items": [A]}, document_id="d1")
    assert raised.value.path == "$.Items[0]"
    assert (raised.value.declared, raised.value.found) == ("an object", "a single value (str)")
    assert "document 'd1'" in str(raised.value)
    comparer = FieldComparer(SCHEMA, shape_mismatch="count")
    comparison = comparer.compare({"Items": ["junk", A], "Tags": [["a"]]}, {"Items": [A]})
    assert comparison.invalid == [
        ("$.Items[0]", "an object", "a single value (str)"),
        ("$.Tags[0]", "a single value", "a list"),
    ]
    assert comparison.cells == {}
    assert counts(comparison) == Counts()


def test_container_attribute_where_nothing_expected_says_wrong_type() -> None:
    comparison = compare({"Items": [A]}, {"Items": [{**A, "desc": ["office chair"]}]})
    row = rows_by_path(comparison)["$.Items[0].desc"]
    assert row["outcome"] == "FD"
    assert row["reason"].startswith("Wrong type")
    comparison = compare(
        {"Items": [{"code": "A1", "amount": 10}]},
        {"Items": [{"code": "A1", "amount": 10, "desc": ["office chair"]}]},
    )
    row = rows_by_path(comparison)["$.Items[0].desc"]
    assert row["outcome"] == "FA"
    assert row["reason"].startswith("Wrong type"), row["reason"]


def test_nested_lists_and_groups_inside_items() -> None:
    first = {"code": "A", "sub": ["x", "y"], "meta": {"ref": "r1"}}
    second = {"code": "B", "sub": ["z"], "meta": {"ref": "r2"}}
    comparison = compare(
        {"Nested": [first, second]},
        {
            "Nested": [
                {"code": "B", "sub": ["z", "w"], "meta": {"ref": "r2"}},
                {**first, "sub": ["y"]},
            ]
        },
    )
    assert outcomes(comparison, "$.Nested") == {
        "$.Nested[0].code": "TP",
        "$.Nested[0].sub[1]": "TP",
        "$.Nested[0].sub[0]": "FN",
        "$.Nested[0].meta.ref": "TP",
        "$.Nested[1].code": "TP",
        "$.Nested[1].sub[0]": "TP",
        "$.Nested[1].sub[1]": "FA",
        "$.Nested[1].meta.ref": "TP",
    }
    assert comparison.items["$.Nested"] == [2, 0, 0, 0, 0, 0]
    assert comparison.items["$.Nested[].sub"] == [2, 0, 1, 1, 0, 0]


def test_unpaired_item_with_nested_list_counts_its_items() -> None:
    item = {"code": "A", "sub": ["x", "y"], "meta": {"ref": "r1"}}
    comparison = compare({"Nested": [item]}, {"Nested": []})
    assert outcomes(comparison, "$.Nested") == {
        "$.Nested[0].code": "FN",
        "$.Nested[0].sub[0]": "FN",
        "$.Nested[0].sub[1]": "FN",
        "$.Nested[0].meta.ref": "FN",
    }
    assert comparison.items["$.Nested"] == [0, 0, 1, 0, 0, 0]
    assert comparison.items["$.Nested[].sub"] == [0, 0, 2, 0, 0, 0]
    comparison = compare({"Nested": []}, {"Nested": [item]})
    assert comparison.items["$.Nested"] == [0, 0, 0, 1, 0, 1]
    assert comparison.items["$.Nested[].sub"] == [0, 0, 0, 2, 0, 0]
    assert counts(comparison) == Counts(fa=4)


# --- lists of scalars --------------------------------------------------------------


def test_list_of_exact_scalars() -> None:
    # min(m, n) pairs: b-b matches, a-c is a weak pair, one FD (Stickler 1.0).
    comparison = compare({"Tags": ["a", "b"]}, {"Tags": ["b", "c"]})
    assert outcomes(comparison, "$.Tags") == {"$.Tags[1]": "TP", "$.Tags[0]": "FD"}
    assert comparison.items["$.Tags"] == [1, 1, 0, 0, 0, 0]
    assert counts(comparison) == Counts(tp=1, fd=1)
    rows = rows_by_path(comparison)
    assert rows["$.Tags[1]"]["method"] == "HUNGARIAN (comparator: EXACT)"
    assert rows["$.Tags[1]"]["template"] == "$.Tags[]"
    assert rows["$.Tags[0]"]["actual"] == "c"


def test_list_of_exact_scalars_strict() -> None:
    comparison = compare({"StrictTags": ["a", "b"]}, {"StrictTags": ["b", "c"]})
    assert outcomes(comparison, "$.StrictTags") == {
        "$.StrictTags[1]": "TP",
        "$.StrictTags[0]": "FN",
        "$.StrictTags[2]": "FA",
    }
    assert comparison.items["$.StrictTags"] == [1, 0, 1, 1, 0, 0]
    assert counts(comparison) == Counts(tp=1, fa=1, fn=1)
    rows = rows_by_path(comparison)
    assert rows["$.StrictTags[1]"]["method"] == "HUNGARIAN (comparator: EXACT, strict pairing)"
    assert rows["$.StrictTags[2]"]["actual"] == "c"


def test_list_of_scalars_with_duplicates() -> None:
    comparison = compare({"Tags": ["a", "a", "b"]}, {"Tags": ["a", "b", "b"]})
    assert comparison.items["$.Tags"] == [2, 1, 0, 0, 0, 0]
    assert counts(comparison) == Counts(tp=2, fd=1)
    comparison = compare({"StrictTags": ["a", "a", "b"]}, {"StrictTags": ["a", "b", "b"]})
    assert comparison.items["$.StrictTags"] == [2, 0, 1, 1, 0, 0]
    assert counts(comparison) == Counts(tp=2, fa=1, fn=1)


def test_list_of_fuzzy_scalars() -> None:
    assert fuzz.ratio("jonathan smith", "jonathon smith") / 100 >= 0.8
    assert fuzz.ratio("paper", "pepper") / 100 < 0.8
    expected = ["Jonathan Smith", "ACME Corporation", "paper"]
    predicted = ["acme corporation", "Jonathon Smith", "pepper"]
    comparison = compare({"Names": expected}, {"Names": predicted})
    rows = rows_by_path(comparison)
    assert outcomes(comparison, "$.Names") == {
        "$.Names[0]": "TP",
        "$.Names[1]": "TP",
        "$.Names[2]": "FD",  # paired below the item threshold: a weak pair, one FD
    }
    assert rows["$.Names[0]"]["actual"] == "Jonathon Smith"
    assert rows["$.Names[0]"]["score"] == pytest.approx(1 - 2 / 28)
    assert rows["$.Names[0]"]["method"] == "HUNGARIAN (comparator: FUZZY, threshold: 0.8)"
    assert rows["$.Names[2]"]["actual"] == "pepper"
    assert comparison.items["$.Names"] == [2, 1, 0, 0, 0, 0]
    strict = compare({"StrictNames": expected}, {"StrictNames": predicted})
    assert outcomes(strict, "$.StrictNames") == {
        "$.StrictNames[0]": "TP",
        "$.StrictNames[1]": "TP",
        "$.StrictNames[2]": "FN",  # not a pair with strict pairing: FN + FA
        "$.StrictNames[3]": "FA",
    }
    assert strict.items["$.StrictNames"] == [2, 0, 1, 1, 0, 0]


# --- confidence -------------------------------------------------------------------


def test_confidence_is_looked_up_by_predicted_index() -> None:
    comparison = compare(
        {"Items": [A, B]},
        {"Items": [B, A, X]},
        confidence={"$.Items[0].amount": 0.9, "$.Items[1].code": 0.7, "$.Items[2].desc": 0.2},
    )
    rows = rows_by_path(comparison)
    assert rows["$.Items[1].amount"]["confidence"] == 0.9  # expected B, predicted item 0
    assert rows["$.Items[0].amount"]["confidence"] is None
    assert rows["$.Items[0].code"]["confidence"] == 0.7  # expected A, predicted item 1
    assert rows["$.Items[2].desc"]["confidence"] == 0.2  # the extra item X, predicted item 2
    assert rows["$.Items[2].desc"]["outcome"] == "FA"


def test_missed_items_carry_no_confidence() -> None:
    comparison = compare({"Items": [A, B]}, {"Items": [B]}, confidence={"$.Items[1].code": 0.5})
    rows = rows_by_path(comparison)
    assert rows["$.Items[0].code"]["outcome"] == "FN"
    assert rows["$.Items[0].code"]["confidence"] is None
    assert rows["$.Items[1].code"]["confidence"] is None  # predicted has no item 1


def test_confidence_on_lists_of_scalars() -> None:
    comparison = compare(
        {"Tags": ["a", "b"]}, {"Tags": ["b", "a", "c"]}, confidence={"Tags[0]": 0.3, "Tags[2]": 0.1}
    )
    rows = rows_by_path(comparison)
    assert rows["$.Tags[1]"]["confidence"] == 0.3
    assert rows["$.Tags[0]"]["confidence"] is None
    assert rows["$.Tags[2]"]["confidence"] == 0.1


def test_explainability_info_in_idp_form() -> None:
    info = [
        {
            "Items": [
                {"code": {"confidence": 0.81}, "amount": {"confidence": 0.8}},
                {"code": {"confidence": 0.31}, "amount": {"confidence": 0.3}},
            ],
            "Tags": [{"confidence": 0.6}, {"confidence": 0.5}],
        }
    ]
    comparison = compare(
        {"Items": [A, B], "Tags": ["a", "b"]},
        {"Items": [B, A], "Tags": ["b", "a"]},
        explainability_info=info,
    )
    rows = rows_by_path(comparison)
    assert rows["$.Items[1].amount"]["confidence"] == 0.8
    assert rows["$.Items[1].code"]["confidence"] == 0.81
    assert rows["$.Items[0].amount"]["confidence"] == 0.3
    assert rows["$.Items[0].desc"]["confidence"] is None
    assert rows["$.Tags[1]"]["confidence"] == 0.6
    assert rows["$.Tags[0]"]["confidence"] == 0.5


def test_list_labels_and_field_info() -> None:
    comparison = compare({"Items": [A], "Tags": ["a"]}, {"Items": [A], "Tags": ["a"]})
    assert comparison.fields["$.Items"].label == "HUNGARIAN (match threshold: 0.5)"
    assert comparison.fields["$.Items"].threshold == 0.5
    assert comparison.fields["$.Tags"].label == "HUNGARIAN (comparator: EXACT)"
    assert comparison.fields["$.Items[].desc"].label == "FUZZY (threshold: 0.8)"
    strict = compare({"Strict": [A]}, {"Strict": [A]})
    assert strict.fields["$.Strict"].label == "HUNGARIAN (match threshold: 0.9)"
    paired = compare({"StrictPaired": [A]}, {"StrictPaired": [A]})
    assert paired.fields["$.StrictPaired"].label == (
        "HUNGARIAN (match threshold: 0.9, strict pairing)"
    )
