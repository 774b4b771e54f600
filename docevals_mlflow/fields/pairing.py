"""Pairing list items: each list's optimal one-to-one pairing from the item
similarities of :mod:`~docevals_mlflow.fields.item_scores`, with the outcomes of
plain paired items decided in bulk (:mod:`~docevals_mlflow.fields.paired_items`)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from typing import Any

import numpy as np

from docevals_mlflow.core.assignment import linear_sum_assignment
from docevals_mlflow.fields.item_scores import (
    Column,
    PairIndex,
    containers_in_scalar_columns,
    score_pairs,
)
from docevals_mlflow.fields.objects import ObjectNode
from docevals_mlflow.fields.paired_items import Block, decide_matched
from docevals_mlflow.fields.state import SimilarityRequest, SimilarityResult

WeakPair = tuple[int, int, float]
"""``(expected row, predicted column, similarity)`` of a pair below the threshold."""


def assign(
    similarity: Any, threshold: float, keep_weak: bool = False
) -> tuple[list[tuple[int, int]], list[WeakPair]]:
    """Optimal one-to-one pairing: the pairs at or above ``threshold``, and the
    assigned pairs below it (weak pairs; empty unless ``keep_weak``, for which they
    are no pairs at all)."""
    rows, cols = linear_sum_assignment(similarity, maximize=True)
    scores = similarity[rows, cols]
    keep = scores >= threshold
    pairs = list(zip(rows[keep].tolist(), cols[keep].tolist(), strict=True))
    if not keep_weak or keep.all():
        return pairs, []
    weak = ~keep
    return pairs, list(
        zip(rows[weak].tolist(), cols[weak].tolist(), scores[weak].tolist(), strict=True)
    )


def item_similarity(
    node: ObjectNode,
    expected: list[Any],
    predicted: list[Any],
    threshold: float,
    keep_weak: bool = False,
) -> SimilarityResult:
    """Pairing of one list's items (see :func:`batch_item_similarity`)."""
    return batch_item_similarity([(node, expected, predicted, threshold, keep_weak)])[0]


def batch_item_similarity(requests: Sequence[SimilarityRequest]) -> list[SimilarityResult]:
    """``len(expected) x len(predicted)`` item similarities for lists of one item node,
    and each list's pairing.

    Similarity is Stickler's: the weighted mean, over the item's attributes present
    on at least one side, of the attribute's score (0 where only one side has it);
    items with no such attribute are fully similar. A nested object takes part as
    one attribute scored the same way; nested lists do not take part (they are
    compared once items are paired). Attributes the schema does not name take no
    part either when the item is configured (Stickler ignores them).

    Vectorised: every (expected, predicted) item pair of every list is one element
    of flat arrays, and each attribute is scored for all pairs in one call
    (``Comparator.matrix`` for a single list, ``Comparator.pairwise`` for several).
    """
    every_key_configured = False
    if len(requests) > 1:
        if requests[0][0].discovered_keys(
            list(chain.from_iterable(chain.from_iterable(request[1:3] for request in requests)))
        ):
            answers = _pair_discovered_alone(requests)
            if answers is not None:
                return answers
        every_key_configured = True
    node = requests[0][0]
    expected_all = list(chain.from_iterable(request[1] for request in requests))
    predicted_all = list(chain.from_iterable(request[2] for request in requests))
    m = [len(request[1]) for request in requests]
    n = [len(request[2]) for request in requests]
    similarity, columns = score_pairs(
        node, expected_all, predicted_all, _pair_index(m, n), every_key_configured
    )
    return _assign_lists(requests, m, n, similarity, columns, len(expected_all))


def _pair_discovered_alone(
    requests: Sequence[SimilarityRequest],
) -> list[SimilarityResult] | None:
    """Pair on their own the lists whose items carry unconfigured keys, so that the
    rules inferred for those keys come from that document alone, and the others
    together; ``None`` when every list's keys are configured after all."""
    alone = [
        index
        for index, request in enumerate(requests)
        if request[0].discovered_keys([*request[1], *request[2]])
    ]
    if not alone:
        return None
    answers: dict[int, SimilarityResult] = {
        index: batch_item_similarity([requests[index]])[0] for index in alone
    }
    together = [index for index in range(len(requests)) if index not in answers]
    if together:
        batched = batch_item_similarity([requests[index] for index in together])
        answers.update(zip(together, batched, strict=True))
    return [answers[index] for index in range(len(requests))]


def _pair_index(m: list[int], n: list[int]) -> PairIndex:
    """Which items each flat pair element stands for, for lists of ``m[i]`` expected
    and ``n[i]`` predicted items."""
    pair_count = sum(rows * cols for rows, cols in zip(m, n, strict=True))
    if len(m) == 1:
        return PairIndex(None, None, m[0], n[0], pair_count)
    m_array, n_array = np.array(m, dtype=np.int64), np.array(n, dtype=np.int64)
    counts = m_array * n_array
    owner = np.repeat(np.arange(len(m)), counts)
    local = np.arange(pair_count) - (np.cumsum(counts) - counts)[owner]
    width = n_array[owner]
    return PairIndex(
        (np.cumsum(m_array) - m_array)[owner] + local // width,
        (np.cumsum(n_array) - n_array)[owner] + local % width,
        m[0],
        n[0],
        pair_count,
    )


def _assign_lists(
    requests: Sequence[SimilarityRequest],
    m: list[int],
    n: list[int],
    similarity: Any,
    columns: list[Column],
    expected_count: int,
) -> list[SimilarityResult]:
    """Each list's pairing from its block of the flat similarities; the outcomes of
    the pairs of lists of plain dicts are then decided in bulk."""
    suspect = containers_in_scalar_columns(columns, expected_count)
    results: list[SimilarityResult] = []
    expected_start = predicted_start = pair_start = matched = 0
    matched_left: list[int] = []
    matched_right: list[int] = []
    matched_pair: list[int] = []
    matched_owner: list[int] = []
    for index, ((_, expected, predicted, threshold, keep_weak), rows, cols) in enumerate(
        zip(requests, m, n, strict=True)
    ):
        block = Block(columns, expected_start, predicted_start, pair_start, cols)
        if suspect is not None:
            block.suspect = any(suspect[expected_start : expected_start + rows])
        size = rows * cols
        pairs, weak = assign(
            similarity[pair_start : pair_start + size].reshape(rows, cols), threshold, keep_weak
        )
        if _ONLY_DICT.issuperset(map(type, expected)) and _ONLY_DICT.issuperset(
            map(type, predicted)
        ):
            block.fast = True
            block.request = index
            block.matched_start = matched
            for row, col in pairs:
                matched_left.append(expected_start + row)
                matched_right.append(predicted_start + col)
                matched_pair.append(pair_start + row * cols + col)
                matched_owner.append(index)
            matched += len(pairs)
        results.append((pairs, weak, block))
        expected_start += rows
        predicted_start += cols
        pair_start += size
    if matched:
        decide_matched(
            columns,
            np.array(matched_left, dtype=np.int64),
            np.array(matched_right, dtype=np.int64),
            np.array(matched_pair, dtype=np.int64),
            np.array(matched_owner, dtype=np.int64),
            len(requests),
        )
    return results


_ONLY_DICT = frozenset({dict})
