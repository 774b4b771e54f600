"""Outcomes of paired list items: decided in bulk for every configured scalar
attribute (:func:`decide_matched`), then counted and turned into rows per list
(:func:`emit_fast_pairs`); other attributes take the general path."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from docevals_mlflow.fields.item_scores import Column
from docevals_mlflow.fields.leaves import ScalarNode
from docevals_mlflow.fields.state import DocumentState, Walk, WrongType


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
        """Every item is a plain dict: paired items take :func:`emit_fast_pairs`."""
        self.request = 0
        self.matched_start = 0
        self.suspect = False
        """An expected item holds an object or a list in a configured scalar
        attribute: ground truth of the wrong shape, for the list to record."""


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


def decide_matched(
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
        if (dict in kinds or list in kinds) and not node.structured:
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
            column.pair_unparsed = _unparsed_per_list(
                column, expected_present, predicted_present, left, right, owner, request_count
            )


def _unparsed_per_list(
    column: Column,
    expected_present: Any,
    predicted_present: Any,
    left: Any,
    right: Any,
    owner: Any,
    request_count: int,
) -> list[int]:
    """Per list, the values of a numeric attribute's paired items that do not read
    as numbers (both sides)."""
    # Unreadable numbers have NaN keys (empty values too, hence the presence).
    unread = (
        expected_present & np.isnan(np.array(column.expected_keys, dtype=np.float64)[left])
    ).astype(np.int64) + (
        predicted_present & np.isnan(np.array(column.predicted_keys, dtype=np.float64)[right])
    )
    counts: list[int] = (
        np.bincount(owner, weights=unread, minlength=request_count).astype(np.int64).tolist()
    )
    return counts


def emit_fast_pairs(
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
        _count_pairs(block, fast, state)
    keep = state.keep_rows
    confidence = state.confidence
    confident = bool(confidence and ppath)
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
    # Without wrong types or confidences every reason is a table lookup: one
    # comprehension per item.
    plain = keep and not confident and not any(column.wrong_types for column in fast)
    yield from _pair_rows(
        block,
        pairs,
        fast_data,
        slow,
        (expected_positions, predicted_positions, expected_values, predicted_values),
        path,
        ppath,
        state,
        plain=plain,
        detailed=keep and not plain,
        confident=confident,
    )


def _pair_rows(
    block: Block,
    pairs: list[tuple[int, int]],
    fast_data: list[tuple[Any, ...]],
    slow: list[Column],
    items: tuple[Sequence[int], Sequence[int], list[Any], list[Any]],
    path: str,
    ppath: str | None,
    state: DocumentState,
    *,
    plain: bool,
    detailed: bool,
    confident: bool,
) -> Walk:
    """Per paired item: its bulk-decided rows (``plain``: by table lookup;
    ``detailed``: with confidences or wrong-type reasons), then its other attributes."""
    expected_positions, predicted_positions, expected_values, predicted_values = items
    base = block.matched_start
    expected_start, predicted_start = block.expected_start, block.predicted_start
    extend = state.rows.extend
    outcomes, reasons = _FAST_OUTCOMES, _FAST_REASONS
    for k, (row, col) in enumerate(pairs):
        at = base + k
        left = expected_start + row
        right = predicted_start + col
        item_path = f"{path}[{expected_positions[row]}]"
        item_ppath = f"{ppath}[{predicted_positions[col]}]" if ppath else None
        if plain:
            extend(
                [
                    (
                        item_path + segment,
                        node,
                        expected_column[left],
                        predicted_column[right],
                        scores[at],
                        outcomes[codes[at]],
                        None,
                        reasons[codes[at]],
                    )
                    for segment, node, codes, scores, expected_column, predicted_column in fast_data
                ]
            )
        elif detailed:
            confident_ppath = item_ppath if confident else None
            _add_detailed_rows(fast_data, at, left, right, item_path, confident_ppath, state)
        if slow:
            yield from compare_paired_items(
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


def _count_pairs(block: Block, fast: list[Column], state: DocumentState) -> None:
    """Add the list's bulk-decided outcome counts (and unreadable numbers) to the
    document's cells."""
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


def _add_detailed_rows(
    fast_data: list[tuple[Any, ...]],
    at: int,
    left: int,
    right: int,
    item_path: str,
    item_ppath: str | None,
    state: DocumentState,
) -> None:
    """The rows of one paired item when some need more than a table lookup: a
    confidence (``item_ppath`` given) or a wrong-type reason."""
    outcomes, reasons = _FAST_OUTCOMES, _FAST_REASONS
    confidence = state.confidence if item_ppath is not None else None
    add_row = state.rows.append
    for segment, node, codes, scores, expected_column, predicted_column in fast_data:
        code = codes[at]
        other = predicted_column[right]
        add_row(
            (
                item_path + segment,
                node,
                expected_column[left],
                other,
                scores[at],
                outcomes[code],
                confidence.get(item_ppath + segment)
                if confidence is not None and item_ppath is not None
                else None,
                reasons[code] if code < _FD_WRONG else WrongType(other, "a single value").reason(),
            )
        )


def compare_paired_items(
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
