"""The seed's three metrics on hand-checked packets (the seed's own example first)."""

from __future__ import annotations

from docevals_mlflow.split.evaluate import evaluate_split
from docevals_mlflow.split.seed_metrics import (
    OrderedSplitAccuracy,
    PageLevelAccuracy,
    SplitAccuracy,
    page_level_accuracy,
    split_accuracy_with_order,
    split_accuracy_without_order,
)

EXPECTED = [
    {"section_id": "section_1", "document_class": "Invoice", "page_indices": [0, 1, 2]},
    {"section_id": "section_2", "document_class": "W2", "page_indices": [3, 4]},
    {"section_id": "section_3", "document_class": "Receipt", "page_indices": [5, 6]},
]
PREDICTED = [
    {"section_id": "pred_section_1", "document_class": "Invoice", "page_indices": [0, 1, 2]},
    {"section_id": "pred_section_2", "document_class": "W2", "page_indices": [4, 3]},
    {"section_id": "pred_section_3", "document_class": "Invoice", "page_indices": [5]},
    {"section_id": "pred_section_4", "document_class": "Receipt", "page_indices": [6, 7]},
]


def test_page_level_accuracy_counts_pages_of_either_side():
    result = page_level_accuracy(EXPECTED, PREDICTED)
    assert isinstance(result, PageLevelAccuracy)
    # Pages 0-7: page 5 is Receipt/Invoice, page 7 exists only in the prediction.
    assert (result.correct_pages, result.total_pages, result.accuracy) == (6, 8, 0.75)
    wrong = [row for row in result.page_details if not row.correct]
    assert [(r.page_index, r.ground_truth_class, r.predicted_class) for r in wrong] == [
        (5, "Receipt", "Invoice"),
        (7, "Missing", "Receipt"),
    ]
    assert [row.page_index for row in result.page_details] == list(range(8))


def test_split_accuracy_without_order_compares_page_sets():
    result = split_accuracy_without_order(EXPECTED, PREDICTED)
    assert isinstance(result, SplitAccuracy)
    assert (result.correct_sections, result.total_sections) == (2, 3)
    second = result.section_details[1]
    assert second.matched
    assert second.matched_section_id == "pred_section_2"
    # Without order, the seed shows both page lists sorted.
    assert second.predicted_pages == [3, 4]
    third = result.section_details[2]
    assert (
        third.matched,
        third.matched_section_id,
        third.predicted_class,
        third.predicted_pages,
    ) == (
        False,
        None,
        "No Match",
        [],
    )


def test_split_accuracy_with_order_needs_the_page_list():
    result = split_accuracy_with_order(EXPECTED, PREDICTED)
    assert isinstance(result, OrderedSplitAccuracy)
    assert (result.correct_sections, result.total_sections) == (1, 3)
    second = result.section_details[1]
    # The set matched, the order did not: the section is named, but not matched.
    assert (second.matched, second.order_matched, second.matched_section_id) == (
        False,
        False,
        "pred_section_2",
    )
    assert second.predicted_pages == [4, 3]


def test_unmatched_predicted_sections_are_the_seed_over_segmentation_rows():
    report = evaluate_split(EXPECTED, PREDICTED)
    assert [s.section_id for s in report.unmatched_predicted_sections] == [
        "pred_section_3",
        "pred_section_4",
    ]
    assert report.unmatched_predicted_sections[1].page_indices == [6, 7]
    # A set match with the wrong order still "uses" the predicted section.
    assert "pred_section_2" not in {s.section_id for s in report.unmatched_predicted_sections}


def test_class_mismatch_is_no_split_match():
    expected = [{"section_id": "a", "document_class": "Invoice", "page_indices": [0, 1]}]
    predicted = [{"section_id": "b", "document_class": "W2", "page_indices": [0, 1]}]
    report = evaluate_split(expected, predicted)
    assert report.split_accuracy_without_order.accuracy == 0.0
    assert report.page_level_accuracy.accuracy == 0.0
    assert [s.section_id for s in report.unmatched_predicted_sections] == ["b"]


def test_perfect_prediction_in_another_section_order():
    report = evaluate_split(EXPECTED, list(reversed(EXPECTED)))
    assert report.page_level_accuracy.accuracy == 1.0
    assert report.split_accuracy_without_order.accuracy == 1.0
    assert report.split_accuracy_with_order.accuracy == 1.0
    assert report.unmatched_predicted_sections == []
    assert report.perfect


def test_undefined_accuracies_are_none_and_keep_the_seed_zero():
    report = evaluate_split([], [{"section_id": "p", "document_class": "A", "page_indices": [0]}])
    assert report.split_accuracy_without_order.accuracy is None
    assert report.split_accuracy_without_order.seed_accuracy == 0.0
    # Pages exist (on the predicted side): page accuracy is defined, and 0.
    assert report.page_level_accuracy.accuracy == 0.0


def test_seed_view_has_the_seed_shape():
    view = evaluate_split(EXPECTED, PREDICTED).seed_view()
    assert set(view) == {
        "page_level_accuracy",
        "split_accuracy_without_order",
        "split_accuracy_with_order",
        "errors",
    }
    assert set(view["page_level_accuracy"]) == {
        "accuracy",
        "total_pages",
        "correct_pages",
        "page_details",
    }
    assert set(view["split_accuracy_with_order"]["section_details"][0]) == {
        "section_id",
        "ground_truth_class",
        "ground_truth_pages",
        "matched",
        "order_matched",
        "matched_section_id",
        "predicted_class",
        "predicted_pages",
    }
