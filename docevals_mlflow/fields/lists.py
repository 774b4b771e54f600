"""Lists (IDP list attributes, HUNGARIAN): items paired by optimal assignment.

With ``pairing: stickler`` (the default) the assignment pairs min(m, n) items, as
Stickler 1.0 does; a pair below the threshold is a *weak* pair: one FD at item level,
and its attributes FD where both sides hold a value. With ``pairing: strict`` a weak
pair is no pair: both items are left over, their attributes FN and FA.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from docevals_mlflow.core.paths import key_segment
from docevals_mlflow.core.values import is_empty
from docevals_mlflow.fields.leaves import ScalarNode
from docevals_mlflow.fields.objects import ObjectNode
from docevals_mlflow.fields.pairing import (
    Block,
    _compare_paired_items,
    _emit_fast_pairs,
    assign,
)
from docevals_mlflow.fields.registry import registered_field_method
from docevals_mlflow.fields.schema import FieldSpec
from docevals_mlflow.fields.state import DocumentState, Walk, WrongType

if TYPE_CHECKING:
    from docevals_mlflow.fields.pairing import WeakPair
    from docevals_mlflow.fields.state import Node

_ONLY_DICT = frozenset({dict})


class ArrayNode:
    """A list (IDP list attribute / HUNGARIAN): items paired by optimal assignment."""

    __slots__ = (
        "configured",
        "discovered",
        "info",
        "item",
        "keep_weak",
        "label",
        "match_threshold",
        "pairing",
        "scalar_keys",
        "template",
        "weight",
    )

    def __init__(
        self,
        template: str,
        item: Node,
        match_threshold: float,
        pairing: str = "stickler",
        *,
        configured: bool = True,
        discovered: bool = False,
        weight: float = 1.0,
    ) -> None:
        self.template = template
        self.info: Any = None
        """The node's FieldInfo, made on first use."""
        self.weight = weight
        """The list's weight in the similarity of the list items holding it."""
        self.discovered = discovered
        self.configured = configured
        """From the schema (not inferred from the data): ground truth of another shape
        is an input error here."""
        self.item = item
        self.match_threshold = match_threshold
        self.pairing = pairing
        self.keep_weak = pairing == "stickler"
        self.scalar_keys: tuple[str, ...] = (
            tuple(key for key, child in item.children.items() if isinstance(child, ScalarNode))
            if isinstance(item, ObjectNode)
            else ()
        )
        """Configured scalar attributes of object items, whose ground-truth shape is
        checked up front (paired items' attributes are decided in bulk)."""
        strict = ", strict pairing" if pairing == "strict" else ""
        if isinstance(item, ScalarNode):
            # How the method is named here, and whether its threshold is shown, are the
            # method's own (FieldMethod.list_label, .threshold_in_list_label).
            record = registered_field_method(item.method)
            method = record.label_in_lists if record is not None else item.method
            detail = f"comparator: {method}"
            if record is not None and record.threshold_in_list_label:
                detail += f", threshold: {item.threshold:g}"
            self.label = f"HUNGARIAN ({detail}{strict})"
        else:
            self.label = f"HUNGARIAN (match threshold: {match_threshold:g}{strict})"

    def _count_items(
        self,
        state: DocumentState,
        matched: int = 0,
        weak: int = 0,
        missed: int = 0,
        extra: int = 0,
        empty: int = 0,
        invented: int = 0,
    ) -> None:
        counts = state.items.get(self.template)
        if counts is None:
            counts = state.items[self.template] = [0, 0, 0, 0, 0, 0]
            state.nodes[self.template] = self
        counts[0] += matched
        counts[1] += weak
        counts[2] += missed
        counts[3] += extra
        counts[4] += empty
        counts[5] += invented

    def walk(
        self, expected: Any, predicted: Any, path: str, ppath: str | None, state: DocumentState
    ) -> Walk:
        """Pair and compare list items; yields to obtain the item similarities."""
        if isinstance(expected, list):
            expected_list: list[Any] = expected
        elif is_empty(expected):
            expected_list = []
        elif self.configured:
            state.violation(path, "a list", expected)
            return
        else:
            # An inferred list holding a single value in this document: one item.
            expected_list = [expected]
        expected_positions, expected_values = self._expected_items(expected_list, path, state)
        if expected_positions is None:
            return
        if type(predicted) is WrongType or (
            not isinstance(predicted, list) and not is_empty(predicted)
        ):
            wrong = predicted if type(predicted) is WrongType else WrongType(predicted, "a list")
            yield from self._against_wrong(expected_positions, expected_values, wrong, path, state)
            return
        predicted_list: list[Any] = predicted if isinstance(predicted, list) else []
        predicted_positions, predicted_values = _present(predicted_list, self.item)
        if not expected_values and not predicted_values:
            self._both_empty(expected, predicted, path, ppath, state)
            return
        item = self.item
        block: Block | None = None
        weak: list[WeakPair] = []
        if not expected_values or not predicted_values:
            pairs: list[tuple[int, int]] = []
        elif isinstance(item, ScalarNode):
            comparator = item.comparator
            similarity = comparator.matrix(
                [comparator.prepare(v) for v in expected_values],
                [comparator.prepare(v) for v in predicted_values],
            )
            pairs, weak = assign(similarity, comparator.threshold, self.keep_weak)
        elif isinstance(item, ObjectNode):
            pairs, weak, block = yield (
                item,
                expected_values,
                predicted_values,
                self.match_threshold,
                self.keep_weak,
            )
            if (
                block.suspect
                and self.configured
                and not self._scalar_attributes_hold_values(
                    expected_positions, expected_values, path, state
                )
            ):
                return
        else:
            # A list of lists: inner lists pair by position-free identity only when
            # the assignment finds them equal; there is no attribute to score.
            pairs = []
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
        for row, col, score in weak:
            i, value = expected_positions[row], expected_values[row]
            j, other = predicted_positions[col], predicted_values[col]
            item_path = f"{path}[{i}]"
            item_ppath = f"{ppath}[{j}]" if ppath else None
            if isinstance(item, ScalarNode):
                # The comparator's own decision on the pair is FD (its score is below
                # the threshold), with the comparator's reason.
                item.compare(value, other, item_path, item_ppath, state)
            else:
                assert isinstance(item, ObjectNode)
                reason = f"Weak pair (item similarity {score:.2f} < {self.match_threshold:g})"
                item.weak_pair(value, other, item_path, item_ppath, state, reason)
        paired = len(pairs) + len(weak)
        if paired < len(expected_values):
            paired_expected = {row for row, _ in pairs} | {row for row, _, _ in weak}
            for row, (i, value) in enumerate(zip(expected_positions, expected_values, strict=True)):
                if row not in paired_expected:
                    item.one_sided(value, f"{path}[{i}]", None, state, True)
        if paired < len(predicted_values):
            paired_predicted = {col for _, col in pairs} | {col for _, col, _ in weak}
            extra = 0
            for col, (j, value) in enumerate(
                zip(predicted_positions, predicted_values, strict=True)
            ):
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
            matched=len(pairs),
            weak=len(weak),
            missed=len(expected_values) - paired,
            extra=len(predicted_values) - paired,
            invented=0 if expected_values else 1,
        )

    def _expected_items(
        self, items: list[Any], path: str, state: DocumentState
    ) -> tuple[Sequence[int] | None, list[Any]]:
        """Positions and values of the expected items, or ``None`` when an item's
        shape contradicts the schema (recorded as a violation)."""
        positions, values = _present(items, self.item)
        if not self.configured:
            return positions, values
        wanted = _item_shape(self.item)
        if type(positions) is range:
            return positions, values  # every item is a dict: the object shape holds
        for position, value in zip(positions, values, strict=True):
            if not _has_shape(value, wanted):
                state.violation(f"{path}[{position}]", wanted, value)
                return None, []
        return positions, values

    def _scalar_attributes_hold_values(
        self, positions: Sequence[int], values: list[Any], path: str, state: DocumentState
    ) -> bool:
        """Whether every configured scalar attribute of the expected items holds a
        single value (else the first violation is recorded). Only asked when pairing
        saw a container in such a column: paired items' attributes are decided in bulk,
        never one by one."""
        for position, value in zip(positions, values, strict=True):
            for key in self.scalar_keys:
                attribute = value.get(key) if isinstance(value, Mapping) else None
                if (type(attribute) is dict or type(attribute) is list) and attribute:
                    state.violation(
                        f"{path}[{position}]{key_segment(key)}", "a single value", attribute
                    )
                    return False
        return True

    def _both_empty(
        self, expected: Any, predicted: Any, path: str, ppath: str | None, state: DocumentState
    ) -> None:
        # Absent (or empty) on both sides is a true negative, as in Stickler 1.0: for
        # a list of values it is one TN leaf, for a list of objects one TN item.
        if isinstance(self.item, ScalarNode):
            self.item.emit(state, path, ppath, expected, predicted, None, "TN", "Both lists empty")
        self._count_items(state, empty=1)

    def _against_wrong(
        self,
        positions: Sequence[int],
        values: list[Any],
        wrong: WrongType,
        path: str,
        state: DocumentState,
    ) -> Walk:
        for i, value in zip(positions, values, strict=True):
            if isinstance(self.item, ScalarNode):
                self.item.compare(value, wrong, f"{path}[{i}]", None, state)
            else:
                yield from self.item.walk(value, wrong, f"{path}[{i}]", None, state)
        if not values:
            # Nothing expected, something of the wrong shape predicted: one false alarm.
            holder = self.item if isinstance(self.item, ScalarNode) else None
            node = holder or _wrong_shape_node(self)
            node.emit(state, path, None, None, wrong.value, None, "FA", wrong.reason())
        self._count_items(state, missed=len(values), invented=0 if values else 1)

    def one_sided(
        self, value: Any, path: str, ppath: str | None, state: DocumentState, expected_side: bool
    ) -> None:
        """Items of a list inside an unpaired item: all missed (or all extra)."""
        if not isinstance(value, list):
            if is_empty(value):
                return
            if expected_side and self.configured:
                state.violation(path, "a list", value)
                return
            value = [value]
        positions, items = _present(value, self.item)
        if expected_side and self.configured:
            wanted = _item_shape(self.item)
            for position, item in zip(positions, items, strict=True):
                if not _has_shape(item, wanted):
                    state.violation(f"{path}[{position}]", wanted, item)
                    return
        for i, item in zip(positions, items, strict=True):
            self.item.one_sided(
                item, f"{path}[{i}]", f"{ppath}[{i}]" if ppath else None, state, expected_side
            )
        if expected_side:
            self._count_items(state, missed=len(items))
        else:
            self._count_items(state, extra=len(items))


def _wrong_shape_node(array: ArrayNode) -> ScalarNode:
    # The list's own template holds its item counts; the false alarm is an item-level
    # leaf, so it is counted under the item template.
    item = array.item
    assert isinstance(item, ObjectNode)
    node = item.compiler.compile(FieldSpec(method="EXACT"), array.template + "[]")
    assert isinstance(node, ScalarNode)
    return node


def _item_shape(item: Node) -> str:
    if isinstance(item, ObjectNode):
        return "an object"
    if isinstance(item, ArrayNode):
        return "a list"
    return "a single value"


def _has_shape(value: Any, wanted: str) -> bool:
    if wanted == "an object":
        return isinstance(value, Mapping)
    if wanted == "a list":
        return isinstance(value, list)
    return not isinstance(value, Mapping | list)


def _present(items: list[Any], item: Node) -> tuple[Sequence[int], list[Any]]:
    """Positions and values of the items that count.

    Objects count whatever they hold (``{}`` and an item with only unconfigured keys
    are items, as in Stickler); values and lists count when not empty.
    """
    if isinstance(item, ObjectNode):
        if _ONLY_DICT.issuperset(map(type, items)):
            return range(len(items)), items
        positions = [
            index
            for index, entry in enumerate(items)
            if isinstance(entry, Mapping) or not is_empty(entry)
        ]
    else:
        positions = [index for index, entry in enumerate(items) if not is_empty(entry)]
    return positions, [items[index] for index in positions]
