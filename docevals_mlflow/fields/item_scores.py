"""Scoring item pairs for list pairing: one :class:`Column` per attribute, its score
for every (expected, predicted) item pair in flat arrays, and their weighted mean."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from docevals_mlflow.core.assignment import linear_sum_assignment
from docevals_mlflow.core.paths import key_segment
from docevals_mlflow.core.values import is_empty
from docevals_mlflow.fields.leaves import ScalarNode
from docevals_mlflow.fields.objects import ObjectNode

if TYPE_CHECKING:
    from docevals_mlflow.fields.state import Node


def _get(item: Any, key: str) -> Any:
    if type(item) is dict or isinstance(item, Mapping):
        return item.get(key)
    return None


class Column:
    """One attribute across every item of the lists being paired: values, presence,
    comparison keys (prepared once) and the flat pair scores, reused to score the
    attribute of each paired item."""

    __slots__ = (
        "configured",
        "expected_keys",
        "expected_present",
        "expected_values",
        "key",
        "node",
        "pair_codes",
        "pair_counts",
        "pair_scores",
        "pair_unparsed",
        "predicted_keys",
        "predicted_present",
        "predicted_values",
        "scores",
        "segment",
        "wrong_types",
    )

    def __init__(self, key: str, configured: bool, node: Node) -> None:
        self.key = key
        self.segment = key_segment(key)
        self.configured = configured
        self.node = node
        self.expected_values: list[Any] = []
        self.predicted_values: list[Any] = []
        self.expected_keys: list[Any] = []
        self.predicted_keys: list[Any] = []
        self.expected_present: list[bool] = []
        self.predicted_present: list[bool] = []
        self.scores: Any = None
        self.pair_codes: list[int] | None = None
        """Per paired item of every list in the batch: an outcome code (_TP, ...)."""
        self.pair_scores: list[float] = []
        self.pair_counts: list[list[int]] = []
        """Per list: ``[tp, fa, fd, fn, tn]`` over its paired items."""
        self.wrong_types = False
        """Some predicted value of this attribute is an object or a list (rows then
        need a "Wrong type" reason)."""
        self.pair_unparsed: list[int] | None = None
        """Per list, for a numeric attribute: values of its paired items that do not
        read as numbers (both sides)."""


_CONTAINERS = frozenset({dict, list})

NESTED_OBJECT_THRESHOLD = 0.7
"""Stickler's default threshold of an object field, which clips an object nested two
levels inside a list item (the schema has no threshold for objects)."""


def _group_scores(
    node: ObjectNode, expected_values: list[Any], predicted_values: list[Any], index: PairIndex
) -> Any:
    """Per item pair, the score of an object nested in the items, as Stickler scores a
    nested model there (``compare_with``'s overall score): the weighted mean over
    *every* configured attribute of its score, clipped to 0 below the attribute's
    threshold, 1 where both sides are empty and 0 where one side is."""
    total: Any = None
    weight_sum = 0.0
    for key, child in node.children.items():
        left = [_get(value, key) for value in expected_values]
        right = [_get(value, key) for value in predicted_values]
        if isinstance(child, ScalarNode):
            comparator = child.comparator
            left_present, left_keys = comparator.prepare_many(left)
            right_present, right_keys = comparator.prepare_many(right)
            raw = index.scores(comparator, left_keys, right_keys)
            scores = np.where(raw >= comparator.threshold - 1e-10, raw, 0.0)
        elif isinstance(child, ObjectNode):
            left_present = [isinstance(value, Mapping) for value in left]
            right_present = [isinstance(value, Mapping) for value in right]
            raw, _ = score_pairs(child, left, right, index, False)
            scores = np.where(raw >= NESTED_OBJECT_THRESHOLD, raw, 0.0)
        elif (item := _value_item(child)) is not None:
            left_present = [_has_items(value) for value in left]
            right_present = [_has_items(value) for value in right]
            scores = _list_scores(item, left, right, index, clip=True)
        else:
            continue
        both_left, both_right = index.masks(
            np.array(left_present, dtype=bool), np.array(right_present, dtype=bool)
        )
        scored = np.where(
            both_left & both_right, scores, np.where(both_left | both_right, 0.0, 1.0)
        )
        weighted = scored * child.weight if child.weight != 1.0 else scored
        total = weighted if total is None else total + weighted
        weight_sum += child.weight
    if total is None:
        return np.ones(index.size, dtype=np.float64)
    return total / weight_sum


def _value_item(node: Node) -> ScalarNode | None:
    """The item node of a list of values, else ``None``."""
    item = getattr(node, "item", None)
    return item if isinstance(item, ScalarNode) else None


def _has_items(value: Any) -> bool:
    return type(value) is list and any(not is_empty(item) for item in value)


def _list_scores(
    item: ScalarNode,
    expected_values: list[Any],
    predicted_values: list[Any],
    index: PairIndex,
    *,
    clip: bool,
) -> Any:
    """Per item pair, Stickler's similarity of two lists of values nested in the
    items: the mean score of the optimal min(m, n) pairs (each clipped to 0 below the
    item threshold when ``clip``), times min(m, n) / max(m, n). 0 where a side has no
    items (the caller masks what is absent)."""
    comparator = item.comparator

    def prepared(values: list[Any]) -> list[list[Any]]:
        return [
            [comparator.prepare(entry) for entry in value if not is_empty(entry)]
            if type(value) is list
            else []
            for value in values
        ]

    left_keys, right_keys = prepared(expected_values), prepared(predicted_values)
    if index.left is None:
        lefts = np.repeat(np.arange(index.m), index.n)
        rights = np.tile(np.arange(index.n), index.m)
    else:
        lefts, rights = index.left, index.right
    scores = np.zeros(index.size, dtype=np.float64)
    for position in range(index.size):
        a, b = left_keys[lefts[position]], right_keys[rights[position]]
        if not a or not b:
            continue
        similarity = comparator.matrix(a, b)
        rows, cols = linear_sum_assignment(similarity, maximize=True)
        paired = similarity[rows, cols]
        if clip:
            paired = np.where(paired >= comparator.threshold - 1e-10, paired, 0.0)
        scores[position] = float(paired.mean()) * len(rows) / max(len(a), len(b))
    return scores


def containers_in_scalar_columns(columns: list[Column], items: int) -> list[bool] | None:
    """Per expected item, whether a configured scalar attribute holds a non-empty
    object or list; ``None`` (the usual answer, checked in C per column) when none does."""
    flags: list[bool] | None = None
    for column in columns:
        if not column.configured or not isinstance(column.node, ScalarNode):
            continue
        if column.node.structured:
            continue  # objects and lists are this method's values (ANLS_STAR)
        values = column.expected_values
        if _CONTAINERS.isdisjoint(map(type, values)):
            continue
        found = [type(value) in _CONTAINERS and bool(value) for value in values]
        flags = found if flags is None else [a or b for a, b in zip(flags, found, strict=True)]
    if flags is None or not any(flags):
        return None
    assert len(flags) == items
    return flags


class PairIndex:
    """Which expected and predicted item each flat pair element stands for: ``left``
    and ``right`` index arrays across several lists, or ``None`` for one list of
    ``m`` x ``n`` items (row-major)."""

    __slots__ = ("left", "m", "n", "right", "size")

    def __init__(self, left: Any, right: Any, m: int, n: int, size: int) -> None:
        self.left = left
        self.right = right
        self.m = m
        self.n = n
        self.size = size

    def scores(self, comparator: Any, left_keys: list[Any], right_keys: list[Any]) -> Any:
        if self.left is None:
            return comparator.matrix(left_keys, right_keys).ravel()
        return comparator.pairwise(left_keys, right_keys, self.left, self.right)

    def masks(self, left_present: Any, right_present: Any) -> tuple[Any, Any]:
        if self.left is None:
            return np.repeat(left_present, self.n), np.tile(right_present, self.m)
        return left_present[self.left], right_present[self.right]


def score_pairs(
    node: ObjectNode,
    expected_all: list[Any],
    predicted_all: list[Any],
    index: PairIndex,
    every_key_configured: bool,
) -> tuple[Any, list[Column]]:
    """The similarity of every item pair, and the columns scored on the way."""
    total: Any = None
    weight_sum: Any = 0.0
    columns: list[Column] = []
    all_dicts = set(map(type, expected_all)) | set(map(type, predicted_all)) <= {dict}
    for key, configured, child in node.item_columns(
        [*expected_all, *predicted_all], known_configured=every_key_configured
    ):
        column = Column(key, configured, child)
        columns.append(column)
        if all_dicts:
            column.expected_values = [item.get(key) for item in expected_all]
            column.predicted_values = [item.get(key) for item in predicted_all]
        else:
            column.expected_values = [_get(item, key) for item in expected_all]
            column.predicted_values = [_get(item, key) for item in predicted_all]
        if node.configured and not configured:
            # Stickler pairs on the configured attributes only.
            continue
        scored = _score_column(column, child, index)
        if scored is None:
            continue
        scores, all_left, all_right = scored
        weight = child.weight
        if all_left and all_right:
            # Every item has this attribute on both sides (the usual case): no masks.
            contribution = scores * weight if weight != 1.0 else scores
            weight_sum = weight_sum + weight
        else:
            left_pairs, right_pairs = index.masks(
                np.array(column.expected_present, dtype=bool),
                np.array(column.predicted_present, dtype=bool),
            )
            contribution = np.where(left_pairs & right_pairs, scores * weight, 0.0)
            weight_sum = weight_sum + weight * (left_pairs | right_pairs)
        total = contribution.copy() if total is None else total + contribution
    if total is None:
        return np.ones(index.size, dtype=np.float64), columns
    if isinstance(weight_sum, float):
        return total / weight_sum, columns
    with np.errstate(invalid="ignore", divide="ignore"):
        similarity = np.where(
            weight_sum > 0, total / np.where(weight_sum > 0, weight_sum, 1.0), 1.0
        )
    return similarity, columns


def _score_column(column: Column, child: Node, index: PairIndex) -> tuple[Any, bool, bool] | None:
    """The attribute's score for every item pair, and whether every item has it on
    each side; ``None`` when it takes no part (no item has it, or it is a list of
    objects). Records the presence (and comparison keys) in ``column``."""
    if isinstance(child, ScalarNode):
        comparator = child.comparator
        column.expected_present, column.expected_keys = comparator.prepare_many(
            column.expected_values
        )
        column.predicted_present, column.predicted_keys = comparator.prepare_many(
            column.predicted_values
        )
        all_left, all_right = all(column.expected_present), all(column.predicted_present)
        if not (all_left or all_right) and not (
            any(column.expected_present) or any(column.predicted_present)
        ):
            return None
        column.scores = index.scores(comparator, column.expected_keys, column.predicted_keys)
        return column.scores, all_left, all_right
    if isinstance(child, ObjectNode):
        # A nested object is one attribute: absent (None) on a side, or scored as
        # Stickler scores a nested model (see _group_scores); ``{}`` is present.
        left_present = [isinstance(value, Mapping) for value in column.expected_values]
        right_present = [isinstance(value, Mapping) for value in column.predicted_values]
        if not any(left_present) and not any(right_present):
            return None
        scores = _group_scores(child, column.expected_values, column.predicted_values, index)
    elif (item := _value_item(child)) is not None:
        # A nested list of values: Stickler's raw list similarity.
        left_present = [_has_items(value) for value in column.expected_values]
        right_present = [_has_items(value) for value in column.predicted_values]
        if not any(left_present) and not any(right_present):
            return None
        scores = _list_scores(
            item, column.expected_values, column.predicted_values, index, clip=False
        )
    else:
        return None
    column.expected_present, column.predicted_present = left_present, right_present
    return scores, all(left_present), all(right_present)
