"""Our seed metrics equal ``stickler.doc_split`` figure for figure, details included;
our graded scores equal its ``evaluate_packet``.

Runs only where stickler-eval is installed (the ``bench`` extra, installed in CI).
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from docevals_mlflow.split.evaluate import evaluate_split
from tests.split.strategies import packet_pairs

pytest.importorskip("stickler")
pytest.importorskip("pandas")

from stickler.doc_split import DocSplitClassificationMetrics, evaluate_packet

SEED_EXAMPLE = (
    [
        {"section_id": "section_1", "document_class": "Invoice", "page_indices": [0, 1, 2]},
        {"section_id": "section_2", "document_class": "W2", "page_indices": [3, 4]},
        {"section_id": "section_3", "document_class": "Receipt", "page_indices": [5, 6]},
    ],
    [
        {"section_id": "pred_section_1", "document_class": "Invoice", "page_indices": [0, 1, 2]},
        {"section_id": "pred_section_2", "document_class": "W2", "page_indices": [4, 3]},
        {"section_id": "pred_section_3", "document_class": "Invoice", "page_indices": [5]},
        {"section_id": "pred_section_4", "document_class": "Receipt", "page_indices": [6, 7]},
    ],
)


def stickler_metrics(
    expected: list[dict[str, Any]], predicted: list[dict[str, Any]]
) -> dict[str, Any]:
    calculator = DocSplitClassificationMetrics()
    calculator.load_sections(expected, predicted)
    return calculator.calculate_all_metrics()


def test_seed_example_equals_stickler():
    expected, predicted = SEED_EXAMPLE
    ours = evaluate_split(expected, predicted)
    assert ours.seed_view() == stickler_metrics(expected, predicted)
    assert ours.page_level_accuracy.accuracy == 0.75
    assert ours.split_accuracy_without_order.correct_sections == 2
    assert ours.split_accuracy_with_order.correct_sections == 1


@settings(max_examples=300, deadline=None)
@given(packet_pairs(allow_empty=True))
def test_seed_metrics_equal_stickler(pair):
    expected, predicted = pair
    ours = evaluate_split(expected, predicted)
    theirs = stickler_metrics(expected, predicted)
    assert ours.seed_view() == theirs
    # Our own figures equal the seed's wherever the seed's is defined.
    for name in (
        "page_level_accuracy",
        "split_accuracy_without_order",
        "split_accuracy_with_order",
    ):
        mine = getattr(ours, name)
        if mine.accuracy is not None:
            assert mine.accuracy == theirs[name]["accuracy"]
        else:
            assert theirs[name]["accuracy"] == 0.0


def test_empty_packets_keep_the_seed_figure():
    ours = evaluate_split([], [])
    theirs = stickler_metrics([], [])
    assert ours.seed_view() == theirs
    assert ours.page_level_accuracy.accuracy is None
    assert ours.page_level_accuracy.seed_accuracy == 0.0
    assert ours.split_accuracy_with_order.accuracy is None


def test_a_class_named_missing_is_the_seed_quirk_we_fix():
    expected = [{"section_id": "a", "document_class": "Missing", "page_indices": [0, 1]}]
    predicted = [{"section_id": "b", "document_class": "Missing", "page_indices": [0]}]
    ours = evaluate_split(expected, predicted)
    theirs = stickler_metrics(expected, predicted)
    assert ours.seed_view() == theirs
    # Page 1 is only expected; the seed calls it correct ("Missing" == "Missing").
    assert theirs["page_level_accuracy"]["accuracy"] == 1.0
    assert ours.page_level_accuracy.seed_accuracy == 1.0
    assert ours.page_level_accuracy.accuracy == 0.5


def stickler_rows(
    expected: list[dict[str, Any]], predicted: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    where: dict[int, tuple[str, int, str]] = {}
    for section in predicted:
        for position, page in enumerate(section["page_indices"]):
            where[page] = (section["section_id"], position, section["document_class"])
    rows = []
    for section in expected:
        for position, page in enumerate(section["page_indices"]):
            group, predicted_position, predicted_class = where[page]
            rows.append(
                {
                    "group_id": section["section_id"],
                    "group_id_predicted": group,
                    "page_number": position,
                    "page_number_predicted": predicted_position,
                    "class_label": section["document_class"],
                    "class_label_predicted": predicted_class,
                }
            )
    return rows


def same_pages(pair: tuple[list[dict[str, Any]], list[dict[str, Any]]]) -> bool:
    expected, predicted = pair

    def pages(sections: list[dict[str, Any]]) -> set[int]:
        return {page for section in sections for page in section["page_indices"]}

    return bool(pages(expected)) and pages(expected) == pages(predicted)


@settings(max_examples=200, deadline=None)
@given(packet_pairs().filter(same_pages))
def test_graded_scores_equal_stickler_evaluate_packet(pair):
    expected, predicted = pair
    ours = evaluate_split(expected, predicted).graded
    theirs = evaluate_packet(stickler_rows(expected, predicted))
    assert ours.v_measure == pytest.approx(theirs["v_measure"], abs=1e-12)
    assert ours.rand_index == pytest.approx(theirs["rand_index"], abs=1e-12)
    assert ours.clustering_score == pytest.approx(theirs["clustering_score"], abs=1e-12)
    assert ours.kendall_tau == pytest.approx(theirs["avg_ordering_score"], abs=1e-12)
    assert ours.packet_score == pytest.approx(theirs["final_score"], abs=1e-12)
    for section_id, tau in theirs["group_ordering_scores"].items():
        assert ours.section_tau[section_id] == pytest.approx(tau, abs=1e-12)
        assert not math.isnan(ours.section_tau[section_id] or 0.0)


@pytest.mark.parametrize("size", [129, 300])
def test_large_sections_use_the_same_tau(size):
    # Above LARGE_SECTION pages, tau-b comes from scipy instead of the pairwise pass.
    pages = list(range(size))
    shuffled = pages[::2] + pages[1::2]
    expected = [{"section_id": "a", "document_class": "X", "page_indices": pages}]
    predicted = [{"section_id": "b", "document_class": "X", "page_indices": shuffled}]
    ours = evaluate_split(expected, predicted).graded
    theirs = evaluate_packet(stickler_rows(expected, predicted))
    assert ours.kendall_tau == pytest.approx(theirs["avg_ordering_score"], abs=1e-12)


@given(st.data())
@settings(max_examples=30, deadline=None)
def test_accelerator_nested_form_reads_like_stickler(data):
    expected, predicted = data.draw(packet_pairs(max_pages=10))

    def nested(sections: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            {
                "section_id": section["section_id"],
                "document_class": {"type": section["document_class"]},
                "split_document": {"page_indices": section["page_indices"]},
            }
            for section in sections
        ]

    ours = evaluate_split(nested(expected), nested(predicted))
    assert ours.seed_view() == stickler_metrics(nested(expected), nested(predicted))
