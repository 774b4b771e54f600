"""Reading-order edit distance (OmniDocBench's definition), by hand and by property."""

from __future__ import annotations

import random

import pytest

from docevals_mlflow.docmetrics.reading_order import (
    order_edit_distance,
    score_order,
    score_orders,
)
from docevals_mlflow.errors import InputError


def test_worked_example_swap_of_two_columns() -> None:
    # A two-column page read across the columns instead of down each one.
    expected = ["title", "l1", "l2", "r1", "r2", "footer"]
    predicted = ["title", "l1", "r1", "l2", "r2", "footer"]
    score = score_order(expected, predicted, source="p4")
    assert (score.edits, score.distance) == (2, pytest.approx(2 / 6))


@pytest.mark.parametrize(
    ("expected", "predicted", "distance"),
    [
        ([1, 2, 3], [1, 2, 3], 0.0),
        ([1, 2, 3], [3, 2, 1], 2 / 3),
        ([1, 2, 3, 4], [1, 2, 3], 1 / 4),  # a block the parser missed
        ([1, 2], [1, 2, 9, 8], 2 / 4),  # blocks it invented
        ([], [], 0.0),
        ([1], [], 1.0),
        (["a", "b"], ["c", "d"], 1.0),
    ],
)
def test_distance_by_hand(expected: list[object], predicted: list[object], distance: float) -> None:
    assert order_edit_distance(expected, predicted) == pytest.approx(distance)


def test_repeated_id_names_page_and_positions() -> None:
    with pytest.raises(
        InputError,
        match=r"p2: block id 'b' appears twice in the predicted order \(positions 2 and 4\)",
    ):
        score_order(["a", "b", "c"], ["a", "b", "c", "b"], source="p2")


def test_batch_mean_per_page_and_overall_by_length() -> None:
    batch = score_orders([("p1", [1, 2], [2, 1]), ("p2", list(range(8)), list(range(8)))])
    assert batch.mean == pytest.approx((1.0 + 0.0) / 2)
    assert batch.overall == pytest.approx(2 / 10)
    with pytest.raises(InputError, match="no pages"):
        score_orders([])


@pytest.mark.parametrize("seed", range(20))
def test_distance_is_symmetric_bounded_and_zero_only_when_equal(seed: int) -> None:
    rnd = random.Random(seed)
    expected = list(range(rnd.randint(1, 12)))
    predicted = rnd.sample(expected, len(expected))
    d = order_edit_distance(expected, predicted)
    assert d == pytest.approx(order_edit_distance(predicted, expected))
    assert 0.0 <= d <= 1.0
    assert (d == 0.0) == (expected == predicted)
