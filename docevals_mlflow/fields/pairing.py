"""Pairing list items: vectorised item similarity and bulk outcome decisions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any

import numpy as np

from docevals_mlflow.core.assignment import linear_sum_assignment
from docevals_mlflow.core.paths import key_segment
from docevals_mlflow.core.values import is_empty
from docevals_mlflow.fields.leaves import ScalarNode
from docevals_mlflow.fields.objects import ObjectNode
from docevals_mlflow.fields.state import (
    DocumentState,
    SimilarityRequest,
    SimilarityResult,
    Walk,
    WrongType,
)

if TYPE_CHECKING:
    from docevals_mlflow.fields.state import Node


def _get(item: Any, key: str) -> Any:
    if type(item) is dict or isinstance(item, Mapping):
        return item.get(key)
    return None


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
        self.wrong_types = False
        """Some predicted value of this attribute is an object or a list (rows then
        need a "Wrong type" reason)."""
        self.pair_unparsed: list[int] | None = None
        """Per list, for a numeric attribute: values of its paired items that do not
        read as numbers (both sides)."""
        """Per list: ``[tp, fa, fd, fn, tn]`` over its paired items."""


class Block:
    """One list's view into a :class:`Column` set: where its items and pairs start."""

    __slots__ = (
        "columns",
        "expected_start",
        "fast",
        "matched_start",
        "pair_start",
        "predicted_start",
        "request",
        "suspect",
        "width",
    )

    def __init__(
        self,
        columns: list[Column],
        expected_start: int,
        predicted_start: int,
        pair_start: int,
        width: int,
    ) -> None:
        self.columns = columns
        self.expected_start = expected_start
        self.predicted_start = predicted_start
        self.pair_start = pair_start
        self.width = width
        self.fast = False
        """Every item is a plain dict: paired items take :func:`_emit_fast_pairs`."""
        self.request = 0
        self.matched_start = 0
        self.suspect = False
        """An expected item holds an object or a list in a configured scalar
        attribute: ground truth of the wrong shape, for the list to record."""


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
    if len(requests) > 1 and not requests[0][0].discovered_keys(
        list(chain.from_iterable(chain.from_iterable(request[1:3] for request in requests)))
    ):
        every_key_configured = True
    elif len(requests) > 1:
        # Lists whose items carry unconfigured keys are paired on their own, so that
        # the rules inferred for those keys come from that document alone.
        alone = [
            index
            for index, request in enumerate(requests)
            if request[0].discovered_keys([*request[1], *request[2]])
        ]
        if alone:
            answers: dict[int, SimilarityResult] = {
                index: batch_item_similarity([requests[index]])[0] for index in alone
            }
            together = [index for index in range(len(requests)) if index not in answers]
            if together:
                batched = batch_item_similarity([requests[index] for index in together])
                answers.update(zip(together, batched, strict=True))
            return [answers[index] for index in range(len(requests))]
        every_key_configured = True
    node = requests[0][0]
    expected_all = list(chain.from_iterable(request[1] for request in requests))
    predicted_all = list(chain.from_iterable(request[2] for request in requests))
    m = [len(request[1]) for request in requests]
    n = [len(request[2]) for request in requests]
    pair_count = sum(rows * cols for rows, cols in zip(m, n, strict=True))
    pairs_index: _PairIndex
    if len(requests) == 1:
        pairs_index = _PairIndex(None, None, m[0], n[0], pair_count)
    else:
        m_array, n_array = np.array(m, dtype=np.int64), np.array(n, dtype=np.int64)
        counts = m_array * n_array
        owner = np.repeat(np.arange(len(requests)), counts)
        local = np.arange(pair_count) - (np.cumsum(counts) - counts)[owner]
        width = n_array[owner]
        pairs_index = _PairIndex(
            (np.cumsum(m_array) - m_array)[owner] + local // width,
            (np.cumsum(n_array) - n_array)[owner] + local % width,
            m[0],
            n[0],
            pair_count,
        )
    similarity, columns = _similarity(
        node, expected_all, predicted_all, pairs_index, every_key_configured
    )
    suspect = _containers_in_scalar_columns(columns, len(expected_all))

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
        _decide_matched(
            columns,
            np.array(matched_left, dtype=np.int64),
            np.array(matched_right, dtype=np.int64),
            np.array(matched_pair, dtype=np.int64),
            np.array(matched_owner, dtype=np.int64),
            len(requests),
        )
    return results


_CONTAINERS = frozenset({dict, list})
_ONLY_DICT = frozenset({dict})

NESTED_OBJECT_THRESHOLD = 0.7
"""Stickler's default threshold of an object field, which clips an object nested two
levels inside a list item (the schema has no threshold for objects)."""


def _group_scores(
    node: ObjectNode, expected_values: list[Any], predicted_values: list[Any], index: _PairIndex
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
            raw, _ = _similarity(child, left, right, index, False)
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
    index: _PairIndex,
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


def _containers_in_scalar_columns(columns: list[Column], items: int) -> list[bool] | None:
    """Per expected item, whether a configured scalar attribute holds a non-empty
    object or list; ``None`` (the usual answer, checked in C per column) when none does."""
    flags: list[bool] | None = None
    for column in columns:
        if not column.configured or not isinstance(column.node, ScalarNode):
            continue
        values = column.expected_values
        if _CONTAINERS.isdisjoint(map(type, values)):
            continue
        found = [type(value) in _CONTAINERS and bool(value) for value in values]
        flags = found if flags is None else [a or b for a, b in zip(flags, found, strict=True)]
    if flags is None or not any(flags):
        return None
    assert len(flags) == items
    return flags


class _PairIndex:
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


def _similarity(
    node: ObjectNode,
    expected_all: list[Any],
    predicted_all: list[Any],
    index: _PairIndex,
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
                continue
            scores = index.scores(comparator, column.expected_keys, column.predicted_keys)
            column.scores = scores
            weight = child.weight
        elif isinstance(child, ObjectNode):
            # A nested object is one attribute: absent (None) on a side, or scored as
            # Stickler scores a nested model (see _group_scores); ``{}`` is present.
            left_present = [isinstance(value, Mapping) for value in column.expected_values]
            right_present = [isinstance(value, Mapping) for value in column.predicted_values]
            if not any(left_present) and not any(right_present):
                continue
            all_left, all_right = all(left_present), all(right_present)
            scores = _group_scores(child, column.expected_values, column.predicted_values, index)
            column.expected_present, column.predicted_present = left_present, right_present
            weight = child.weight
        elif (item := _value_item(child)) is not None:
            # A nested list of values: Stickler's raw list similarity.
            left_present = [_has_items(value) for value in column.expected_values]
            right_present = [_has_items(value) for value in column.predicted_values]
            if not any(left_present) and not any(right_present):
                continue
            all_left, all_right = all(left_present), all(right_present)
            scores = _list_scores(
                item, column.expected_values, column.predicted_values, index, clip=False
            )
            column.expected_present, column.predicted_present = left_present, right_present
            weight = child.weight
        else:
            continue
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


_TP, _FA, _FD, _FN, _TN, _FD_WRONG, _FA_WRONG = range(7)
_FAST_OUTCOMES = ("TP", "FA", "FD", "FN", "TN", "FD", "FA")
_FAST_REASONS: tuple[str | None, ...] = (
    None,
    "Predicted a value where none was expected",
    None,
    "Missing from the prediction",
    "Both empty",
    None,
    None,
)


def _decide_matched(
    columns: list[Column],
    left: Any,
    right: Any,
    pair: Any,
    owner: Any,
    request_count: int,
) -> None:
    """Outcomes of every configured scalar attribute of every paired item, at once.

    The rules of :meth:`ScalarNode.settle_unscored` and ``settle_scored``,
    vectorised: both empty TN, expected empty FA, predicted empty FN, a container
    where a value is due FD, otherwise TP or FD by score.
    """
    for column in columns:
        node = column.node
        if (
            not column.configured
            or column.scores is None
            or not isinstance(node, ScalarNode)
            or node.deferred
        ):
            continue
        expected_present = np.array(column.expected_present, dtype=bool)[left]
        predicted_present = np.array(column.predicted_present, dtype=bool)[right]
        values = column.predicted_values
        scores = column.scores[pair]
        scored = np.where(scores >= node.comparator.threshold, _TP, _FD)
        alarm: Any = _FA
        kinds = set(map(type, values))
        if dict in kinds or list in kinds:
            column.wrong_types = True
            container = np.array(
                [type(values[index]) in (dict, list) for index in right.tolist()], dtype=bool
            )
            scored = np.where(container, _FD_WRONG, scored)
            alarm = np.where(container, _FA_WRONG, _FA)
        codes = np.where(
            expected_present,
            np.where(predicted_present, scored, _FN),
            np.where(predicted_present, alarm, _TN),
        )
        cells = np.bincount(owner * 7 + codes, minlength=request_count * 7).reshape(-1, 7)
        cells[:, _FD] += cells[:, _FD_WRONG]
        cells[:, _FA] += cells[:, _FA_WRONG]
        column.pair_codes = codes.tolist()
        # The row's score: the comparator's for TP/FD, 0 for a container, none (NaN
        # here, None once the row is expanded) else.
        column.pair_scores = np.where(
            (codes == _TP) | (codes == _FD), scores, np.where(codes == _FD_WRONG, 0.0, np.nan)
        ).tolist()
        column.pair_counts = cells[:, :5].tolist()
        if node.readable is not None:
            # Unreadable numbers have NaN keys (empty values too, hence the presence).
            unread = (
                expected_present & np.isnan(np.array(column.expected_keys, dtype=np.float64)[left])
            ).astype(np.int64) + (
                predicted_present
                & np.isnan(np.array(column.predicted_keys, dtype=np.float64)[right])
            )
            column.pair_unparsed = (
                np.bincount(owner, weights=unread, minlength=request_count)
                .astype(np.int64)
                .tolist()
            )


def _emit_fast_pairs(
    block: Block,
    pairs: list[tuple[int, int]],
    expected_positions: Sequence[int],
    predicted_positions: Sequence[int],
    expected_values: list[Any],
    predicted_values: list[Any],
    path: str,
    ppath: str | None,
    state: DocumentState,
) -> Walk:
    """Count (and keep rows of) paired items whose outcomes were decided in bulk;
    attributes that were not (discovered, nested, never present) take the general
    path."""
    fast = [column for column in block.columns if column.pair_codes is not None]
    slow = [column for column in block.columns if column.pair_codes is None]
    if pairs:
        for column in fast:
            node = column.node
            assert isinstance(node, ScalarNode)
            cells = state.cells.get(node.template)
            if cells is None:
                cells = state.cells[node.template] = [0, 0, 0, 0, 0]
                state.nodes[node.template] = node
            tp, fa, fd, fn, tn = column.pair_counts[block.request]
            cells[0] += tp
            cells[1] += fa
            cells[2] += fd
            cells[3] += fn
            cells[4] += tn
            if column.pair_unparsed is not None and column.pair_unparsed[block.request]:
                unparsed = state.unparsed
                unparsed[node.template] = (
                    unparsed.get(node.template, 0) + column.pair_unparsed[block.request]
                )
    keep = state.keep_rows
    confidence = state.confidence
    add_row = state.rows.append
    base = block.matched_start
    fast_data = [
        (
            column.segment,
            column.node,
            column.pair_codes,
            column.pair_scores,
            column.expected_values,
            column.predicted_values,
        )
        for column in fast
    ]
    expected_start, predicted_start = block.expected_start, block.predicted_start
    confident = bool(confidence and ppath)
    # Without wrong types every reason is a table lookup: one comprehension per item.
    plain = not any(column.wrong_types for column in fast)
    extend = state.rows.extend
    outcomes, reasons = _FAST_OUTCOMES, _FAST_REASONS
    for k, (row, col) in enumerate(pairs):
        at = base + k
        left = expected_start + row
        right = predicted_start + col
        item_path = f"{path}[{expected_positions[row]}]"
        item_ppath = f"{ppath}[{predicted_positions[col]}]" if ppath else None
        if keep and plain and not confident:
            extend(
                [
                    (
                        item_path + segment,
                        node,
                        expected_column[left],
                        predicted_column[right],
                        scores[at],
                        outcomes[codes[at]],  # type: ignore[index]
                        None,
                        reasons[codes[at]],  # type: ignore[index]
                    )
                    for segment, node, codes, scores, expected_column, predicted_column in fast_data
                ]
            )
        elif keep:
            for segment, node, codes, scores, expected_column, predicted_column in fast_data:
                code = codes[at]  # type: ignore[index]
                other = predicted_column[right]
                add_row(
                    (
                        item_path + segment,
                        node,
                        expected_column[left],
                        other,
                        scores[at],
                        outcomes[code],
                        confidence.get(item_ppath + segment) if confident else None,  # type: ignore[union-attr, operator]
                        reasons[code]
                        if code < _FD_WRONG
                        else WrongType(other, "a single value").reason(),
                    )
                )
        if slow:
            yield from _compare_paired_items(
                block,
                slow,
                row,
                col,
                expected_values[row],
                predicted_values[col],
                item_path,
                item_ppath,
                state,
            )


def _compare_paired_items(
    block: Block,
    columns: list[Column],
    row: int,
    col: int,
    expected: dict[str, Any],
    predicted: dict[str, Any],
    path: str,
    ppath: str | None,
    state: DocumentState,
) -> Walk:
    """Compare two paired items, reusing the scores computed for pairing."""
    left = block.expected_start + row
    right = block.predicted_start + col
    pair = block.pair_start + row * block.width + col
    for column in columns:
        key = column.key
        if not column.configured and key not in expected and key not in predicted:
            continue
        value = column.expected_values[left]
        other = column.predicted_values[right]
        child_path = path + column.segment
        child_ppath = ppath + column.segment if ppath else None
        node = column.node
        if not isinstance(node, ScalarNode):
            yield from node.walk(value, other, child_path, child_ppath, state)
        elif column.scores is None or node.deferred:
            # A deferred comparator paired items with a proxy score; its own decision
            # on the pair comes later, in one batch.
            node.compare(value, other, child_path, child_ppath, state)
        else:
            if node.readable is not None:
                node.count_unparsed(state, value, other)
            if (
                # Both present and plain: the common case needs no emptiness re-check.
                column.expected_present[left]
                and column.predicted_present[right]
                and type(other) is not dict
                and type(other) is not list
            ) or not node.settle_unscored(value, other, child_path, child_ppath, state):
                node.settle_scored(
                    value,
                    other,
                    column.expected_keys[left],
                    column.predicted_keys[right],
                    float(column.scores[pair]),
                    child_path,
                    child_ppath,
                    state,
                )
