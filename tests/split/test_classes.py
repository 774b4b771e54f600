"""Per-class page scores and the confusion matrix."""

from __future__ import annotations

import pytest

from docevals_mlflow.split.batch import evaluate_split_batch
from docevals_mlflow.split.evaluate import evaluate_split
from tests.split.test_seed_metrics import EXPECTED, PREDICTED


def test_per_class_scores_by_hand():
    classes = evaluate_split(EXPECTED, PREDICTED).classes
    invoice, receipt, w2 = (classes.classes[name] for name in ("Invoice", "Receipt", "W2"))
    # Invoice: pages 0-2 right, page 5 (Receipt) predicted Invoice.
    assert (invoice.tp, invoice.fp, invoice.fn, invoice.support, invoice.predicted) == (
        3,
        1,
        0,
        3,
        4,
    )
    assert invoice.precision == 0.75
    assert invoice.recall == 1.0
    assert invoice.f1 == pytest.approx(6 / 7)
    # Receipt: page 6 right, page 5 missed, page 7 predicted but not expected at all.
    assert (receipt.tp, receipt.fp, receipt.fn) == (1, 1, 1)
    assert (w2.precision, w2.recall, w2.f1) == (1.0, 1.0, 1.0)
    assert classes.macro_f1 == pytest.approx((6 / 7 + 0.5 + 1.0) / 3)
    assert classes.micro_precision == 6 / 8
    assert classes.micro_recall == 6 / 7


def test_confusion_matrix_has_a_missing_row_only_when_needed():
    confusion = evaluate_split(EXPECTED, PREDICTED).classes.confusion
    assert confusion.labels == ["Invoice", "Receipt", "W2", None]
    assert confusion.counts == [
        [3, 0, 0, 0],
        [1, 1, 0, 0],
        [0, 0, 2, 0],
        [0, 1, 0, 0],  # page 7: not expected, predicted Receipt
    ]
    same_pages = evaluate_split(EXPECTED, EXPECTED).classes.confusion
    assert same_pages.labels == ["Invoice", "Receipt", "W2"]


def test_most_frequent_keeps_the_busiest_classes_in_label_order():
    confusion = evaluate_split(EXPECTED, PREDICTED).classes.confusion
    # Pages on either side: Invoice 3+4, Receipt 2+2, W2 2+2, missing 1+0.
    assert confusion.most_frequent(10) == [0, 1, 2, 3]
    assert confusion.most_frequent(1) == [0]
    assert confusion.most_frequent(3) == [0, 1, 2]


def test_a_class_only_predicted_has_no_recall_and_zero_f1():
    expected = [{"section_id": "a", "document_class": "A", "page_indices": [0, 1]}]
    predicted = [
        {"section_id": "a", "document_class": "A", "page_indices": [0]},
        {"section_id": "b", "document_class": "B", "page_indices": [1]},
    ]
    classes = evaluate_split(expected, predicted).classes
    assert classes.classes["B"].recall is None
    assert classes.classes["B"].precision == 0.0
    assert classes.classes["B"].f1 == 0.0
    assert classes.classes["A"].recall == 0.5


def test_batch_confusion_merges_different_label_sets():
    first = ([{"section_id": "a", "document_class": "A", "page_indices": [0, 1]}],) * 2
    second = (
        [{"section_id": "a", "document_class": "B", "page_indices": [0]}],
        [{"section_id": "a", "document_class": "C", "page_indices": [0, 1]}],
    )
    report = evaluate_split_batch([first, second])
    confusion = report.classes.confusion
    assert confusion.labels == ["A", "B", "C", None]
    assert confusion.counts == [
        [2, 0, 0, 0],
        [0, 0, 1, 0],
        [0, 0, 0, 0],
        [0, 0, 1, 0],
    ]
    assert report.classes.classes["A"].f1 == 1.0
    assert report.classes.classes["C"].precision == 0.0
