"""One-to-one section matching: hand-checked cases and an optimality property."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from docevals_mlflow.split.evaluate import evaluate_split
from docevals_mlflow.split.matching import assign
from tests.split.strategies import packet_pairs
from tests.split.test_boundaries import sections


def test_over_segmentation_costs_precision():
    matching = evaluate_split(sections([0, 1, 2, 3]), sections([0, 1], [2, 3])).matching
    assert (matching.exact.tp, matching.exact.fp, matching.exact.fn) == (0, 2, 1)
    assert matching.exact.f1 == 0.0
    assert matching.split_sections == 1
    assert matching.merged_sections == 0
    detail = matching.section_details[0]
    assert (detail.overlap, detail.iou, detail.fragments) == (2, 0.5, 2)
    assert len(matching.unpaired_predicted) == 1
    assert matching.mean_iou == 0.5


def test_merged_sections_pair_with_the_class_that_agrees():
    expected = [
        {"section_id": "a", "document_class": "W2", "page_indices": [0, 1]},
        {"section_id": "b", "document_class": "Invoice", "page_indices": [2, 3]},
    ]
    predicted = [{"section_id": "p", "document_class": "Invoice", "page_indices": [0, 1, 2, 3]}]
    matching = evaluate_split(expected, predicted).matching
    assert matching.merged_sections == 1
    first, second = matching.section_details
    assert first.matched_section_id is None
    assert first.iou == 0.0
    assert (second.matched_section_id, second.iou, second.exact) == ("p", 0.5, False)


def test_exact_and_ordered_matches():
    expected = sections([0, 1], [2, 3])
    predicted = [
        {"section_id": "x", "document_class": "A", "page_indices": [1, 0]},
        {"section_id": "y", "document_class": "A", "page_indices": [2, 3]},
        {"section_id": "z", "document_class": "A", "page_indices": [4]},
    ]
    matching = evaluate_split(expected, predicted).matching
    assert (matching.exact.tp, matching.exact.fp, matching.exact.fn) == (2, 1, 0)
    assert (matching.ordered.tp, matching.ordered.fp, matching.ordered.fn) == (1, 2, 1)
    assert matching.exact.precision == pytest.approx(2 / 3)
    assert matching.unpaired_predicted == ["z"]
    assert matching.mean_iou == 1.0


def test_empty_sections_pair_only_with_each_other():
    expected = [{"section_id": "e", "document_class": "A", "page_indices": []}]
    predicted = [
        {"section_id": "p", "document_class": "A", "page_indices": [0]},
        {"section_id": "q", "document_class": "A", "page_indices": []},
    ]
    detail = evaluate_split(expected, predicted).matching.section_details[0]
    assert (detail.matched_section_id, detail.exact, detail.iou) == ("q", True, 1.0)


def no_empty(pair: tuple[list[dict[str, Any]], list[dict[str, Any]]]) -> bool:
    return all(section["page_indices"] for side in pair for section in side)


@settings(max_examples=200, deadline=None)
@given(packet_pairs().filter(no_empty))
def test_without_empty_sections_exact_matches_are_the_seed_split_matches(pair):
    # Sections of one side never overlap, so a set match is already one-to-one.
    report = evaluate_split(*pair)
    assert report.matching.exact.tp == report.split_accuracy_without_order.correct_sections
    assert report.matching.ordered.tp == report.split_accuracy_with_order.correct_sections


def brute_force(weights: np.ndarray) -> float:
    rows, cols = weights.shape
    best = 0.0
    if rows <= cols:
        for chosen in itertools.permutations(range(cols), rows):
            best = max(best, sum(weights[r, c] for r, c in enumerate(chosen)))
    else:
        for chosen in itertools.permutations(range(rows), cols):
            best = max(best, sum(weights[r, c] for c, r in enumerate(chosen)))
    return best


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 5).flatmap(
        lambda rows: st.integers(1, 5).flatmap(
            lambda cols: st.lists(
                st.one_of(st.just(0.0), st.floats(0.01, 1.0)),
                min_size=rows * cols,
                max_size=rows * cols,
            ).map(lambda values: np.array(values).reshape(rows, cols))
        )
    )
)
def test_assignment_is_optimal_and_one_to_one(weights):
    rows, cols = np.nonzero(weights)
    picked = assign(rows, cols, weights[rows, cols])
    picked_rows, picked_cols = rows[picked], cols[picked]
    assert len(set(picked_rows.tolist())) == picked_rows.size
    assert len(set(picked_cols.tolist())) == picked_cols.size
    assert weights[picked_rows, picked_cols].sum() == pytest.approx(brute_force(weights), abs=1e-9)
