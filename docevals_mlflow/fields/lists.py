"""Lists (IDP list attributes, HUNGARIAN): items paired by optimal assignment."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from docevals_mlflow.core.values import is_empty
from docevals_mlflow.fields.leaves import ScalarNode
from docevals_mlflow.fields.objects import ObjectNode
from docevals_mlflow.fields.pairing import (
    Block,
    _compare_paired_items,
    _emit_fast_pairs,
    assign,
)
from docevals_mlflow.fields.schema import FieldSpec
from docevals_mlflow.fields.state import DocumentState, Walk, WrongType

if TYPE_CHECKING:
    from docevals_mlflow.fields.state import Node

_COMPARATOR_NAMES = {"NUMERIC_EXACT": "NUMERIC"}


class ArrayNode:
    """A list (IDP list attribute / HUNGARIAN): items paired by optimal assignment."""

    __slots__ = ("item", "label", "match_threshold", "template")

    def __init__(self, template: str, item: Node, match_threshold: float) -> None:
        self.template = template
        self.item = item
        self.match_threshold = match_threshold
        if isinstance(item, ScalarNode):
            method = _COMPARATOR_NAMES.get(item.method, item.method)
            detail = f"comparator: {method}"
            if item.method in ("FUZZY", "LEVENSHTEIN"):
                detail += f", threshold: {item.threshold:g}"
            self.label = f"HUNGARIAN ({detail})"
        else:
            self.label = f"HUNGARIAN (match threshold: {match_threshold:g})"

    def _count_items(self, state: DocumentState, matched: int, missed: int, extra: int) -> None:
        counts = state.items.get(self.template)
        if counts is None:
            counts = state.items[self.template] = [0, 0, 0]
            state.nodes[self.template] = self
        counts[0] += matched
        counts[1] += missed
        counts[2] += extra

    def walk(
        self, expected: Any, predicted: Any, path: str, ppath: str | None, state: DocumentState
    ) -> Walk:
        """Pair and compare list items; yields to obtain the item similarities."""
        expected_list = _as_list(expected)
        if type(predicted) is WrongType or (
            not isinstance(predicted, list) and not is_empty(predicted)
        ):
            wrong = predicted if type(predicted) is WrongType else WrongType(predicted, "a list")
            yield from self._against_wrong(expected_list, wrong, path, state)
            return
        predicted_list: list[Any] = predicted if isinstance(predicted, list) else []
        expected_positions, expected_values = _non_empty(expected_list)
        predicted_positions, predicted_values = _non_empty(predicted_list)
        item = self.item
        block: Block | None = None
        if not expected_values or not predicted_values:
            pairs: list[tuple[int, int]] = []
        elif isinstance(item, ScalarNode):
            comparator = item.comparator
            similarity = comparator.matrix(
                [comparator.prepare(v) for v in expected_values],
                [comparator.prepare(v) for v in predicted_values],
            )
            pairs = assign(similarity, comparator.threshold)
        else:
            assert isinstance(item, ObjectNode)
            pairs, block = yield (item, expected_values, predicted_values, self.match_threshold)
        if block is not None and block.fast:
            yield from _emit_fast_pairs(
                block,
                pairs,
                expected_positions,
                predicted_positions,
                expected_values,
                predicted_values,
                path,
                ppath,
                state,
            )
        for row, col in () if block is not None and block.fast else pairs:
            i, value = expected_positions[row], expected_values[row]
            j, other = predicted_positions[col], predicted_values[col]
            item_path = f"{path}[{i}]"
            item_ppath = f"{ppath}[{j}]" if ppath else None
            if block is not None and type(value) is dict and type(other) is dict:
                yield from _compare_paired_items(
                    block, block.columns, row, col, value, other, item_path, item_ppath, state
                )
            elif isinstance(item, ScalarNode):
                item.compare(value, other, item_path, item_ppath, state)
            else:
                yield from item.walk(value, other, item_path, item_ppath, state)
        paired_expected = {row for row, _ in pairs}
        paired_predicted = {col for _, col in pairs}
        for row, (i, value) in enumerate(zip(expected_positions, expected_values, strict=True)):
            if row not in paired_expected:
                item.one_sided(value, f"{path}[{i}]", None, state, True)
        extra = 0
        for col, (j, value) in enumerate(zip(predicted_positions, predicted_values, strict=True)):
            if col not in paired_predicted:
                item.one_sided(
                    value,
                    f"{path}[{len(expected_list) + extra}]",
                    f"{ppath}[{j}]" if ppath else None,
                    state,
                    False,
                )
                extra += 1
        self._count_items(
            state,
            len(pairs),
            len(expected_values) - len(pairs),
            len(predicted_values) - len(pairs),
        )

    def _against_wrong(
        self, expected_list: list[Any], wrong: WrongType, path: str, state: DocumentState
    ) -> Walk:
        items = [(i, v) for i, v in enumerate(expected_list) if not is_empty(v)]
        for i, value in items:
            if isinstance(self.item, ScalarNode):
                self.item.compare(value, wrong, f"{path}[{i}]", None, state)
            else:
                yield from self.item.walk(value, wrong, f"{path}[{i}]", None, state)
        if not items:
            # Nothing expected, something of the wrong shape predicted: one false alarm.
            holder = self.item if isinstance(self.item, ScalarNode) else None
            node = holder or _wrong_shape_node(self)
            node.emit(state, path, None, None, wrong.value, None, "FA", wrong.reason())
        self._count_items(state, 0, len(items), 0)

    def one_sided(
        self, value: Any, path: str, ppath: str | None, state: DocumentState, expected_side: bool
    ) -> None:
        """Items of a list inside an unpaired item: all missed (or all extra)."""
        items = [(i, v) for i, v in enumerate(_as_list(value)) if not is_empty(v)]
        for i, item in items:
            self.item.one_sided(
                item, f"{path}[{i}]", f"{ppath}[{i}]" if ppath else None, state, expected_side
            )
        if expected_side:
            self._count_items(state, 0, len(items), 0)
        else:
            self._count_items(state, 0, 0, len(items))


def _wrong_shape_node(array: ArrayNode) -> ScalarNode:
    # The list's own template holds its item counts; the false alarm is an item-level
    # leaf, so it is counted under the item template.
    item = array.item
    assert isinstance(item, ObjectNode)
    node = item.compiler.compile(FieldSpec(method="EXACT"), array.template + "[]")
    assert isinstance(node, ScalarNode)
    return node


def _non_empty(items: list[Any]) -> tuple[Sequence[int], list[Any]]:
    """Positions and values of the non-empty items of a list."""
    if all(type(item) is dict and item for item in items):
        return range(len(items)), items
    positions = [index for index, item in enumerate(items) if not is_empty(item)]
    return positions, [items[index] for index in positions]


def _as_list(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    if is_empty(value):
        return []
    return [value]
