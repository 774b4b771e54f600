"""Lists (IDP list attributes, HUNGARIAN): items paired by optimal assignment.

With ``pairing: stickler`` (the default) the assignment pairs min(m, n) items, as
Stickler 1.0 does; a pair below the threshold is a *weak* pair: one FD at item level,
and its attributes FD where both sides hold a value. With ``pairing: strict`` a weak
pair is no pair: both items are left over, their attributes FN and FA.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from docevals_mlflow.core.values import is_empty
from docevals_mlflow.fields.leaves import ScalarNode
from docevals_mlflow.fields.list_items import (
    expected_items,
    has_shape,
    item_shape,
    present_items,
    scalar_attributes_hold_values,
)
from docevals_mlflow.fields.objects import ObjectNode
from docevals_mlflow.fields.paired_items import Block, compare_paired_items, emit_fast_pairs
from docevals_mlflow.fields.pairing import assign
from docevals_mlflow.fields.registry import registered_field_method
from docevals_mlflow.fields.schema import FieldSpec
from docevals_mlflow.fields.state import DocumentState, Walk, WrongType

if TYPE_CHECKING:
    from docevals_mlflow.fields.pairing import WeakPair
    from docevals_mlflow.fields.state import Node, SimilarityRequest, SimilarityResult

Paired = tuple[list[tuple[int, int]], list["WeakPair"], Block | None]
"""A list's pairs, weak pairs and the pairing's view of its items (object items only)."""


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
            tuple(
                key
                for key, child in item.children.items()
                if isinstance(child, ScalarNode) and not child.structured
            )
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
        expected_positions, expected_values = expected_items(self, expected_list, path, state)
        if expected_positions is None:
            return
        if type(predicted) is WrongType or (
            not isinstance(predicted, list) and not is_empty(predicted)
        ):
            wrong = predicted if type(predicted) is WrongType else WrongType(predicted, "a list")
            yield from self._against_wrong(expected_positions, expected_values, wrong, path, state)
            return
        predicted_list: list[Any] = predicted if isinstance(predicted, list) else []
        predicted_positions, predicted_values = present_items(predicted_list, self.item)
        if not expected_values and not predicted_values:
            self._both_empty(expected, predicted, path, ppath, state)
            return
        items = _Items(expected_positions, expected_values, predicted_positions, predicted_values)
        paired = yield from self._pair(items, path, state)
        if paired is None:
            return
        pairs, weak, block = paired
        yield from self._compare_pairs(items, pairs, block, path, ppath, state)
        self._settle_weak(items, weak, path, ppath, state)
        self._leftovers(items, pairs, weak, len(expected_list), path, ppath, state)

    def _pair(
        self, items: _Items, path: str, state: DocumentState
    ) -> Generator[SimilarityRequest, SimilarityResult, Paired | None]:
        """The list's pairs and weak pairs (yielding to obtain item similarities), and
        the pairing's view of the items when they are objects; ``None`` when an
        expected item turns out to hold a container where a value is due."""
        item = self.item
        expected_values, predicted_values = items.expected_values, items.predicted_values
        if not expected_values or not predicted_values:
            return [], [], None
        if isinstance(item, ScalarNode):
            comparator = item.comparator
            similarity = comparator.matrix(
                [comparator.prepare(v) for v in expected_values],
                [comparator.prepare(v) for v in predicted_values],
            )
            pairs, weak = assign(similarity, comparator.threshold, self.keep_weak)
            return pairs, weak, None
        if isinstance(item, ObjectNode):
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
                and not scalar_attributes_hold_values(
                    self.scalar_keys, items.expected_positions, expected_values, path, state
                )
            ):
                return None
            return pairs, weak, block
        # A list of lists: inner lists pair by position-free identity only when
        # the assignment finds them equal; there is no attribute to score.
        return [], [], None

    def _compare_pairs(
        self,
        items: _Items,
        pairs: list[tuple[int, int]],
        block: Block | None,
        path: str,
        ppath: str | None,
        state: DocumentState,
    ) -> Walk:
        """Compare the paired items: in bulk where pairing decided them, else one by one."""
        item = self.item
        expected_positions, expected_values = items.expected_positions, items.expected_values
        predicted_positions, predicted_values = items.predicted_positions, items.predicted_values
        if block is not None and block.fast:
            yield from emit_fast_pairs(
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
            return
        for row, col in pairs:
            i, value = expected_positions[row], expected_values[row]
            j, other = predicted_positions[col], predicted_values[col]
            item_path = f"{path}[{i}]"
            item_ppath = f"{ppath}[{j}]" if ppath else None
            if block is not None and type(value) is dict and type(other) is dict:
                yield from compare_paired_items(
                    block, block.columns, row, col, value, other, item_path, item_ppath, state
                )
            elif isinstance(item, ScalarNode):
                item.compare(value, other, item_path, item_ppath, state)
            else:
                yield from item.walk(value, other, item_path, item_ppath, state)

    def _settle_weak(
        self,
        items: _Items,
        weak: list[WeakPair],
        path: str,
        ppath: str | None,
        state: DocumentState,
    ) -> None:
        """Decide the pairs below the match threshold (``pairing: stickler``)."""
        item = self.item
        for row, col, score in weak:
            i, value = items.expected_positions[row], items.expected_values[row]
            j, other = items.predicted_positions[col], items.predicted_values[col]
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

    def _leftovers(
        self,
        items: _Items,
        pairs: list[tuple[int, int]],
        weak: list[WeakPair],
        expected_length: int,
        path: str,
        ppath: str | None,
        state: DocumentState,
    ) -> None:
        """Record the items left unpaired on either side, then the list's item counts.
        Extra predicted items take paths after the expected list's last position."""
        item = self.item
        expected_values, predicted_values = items.expected_values, items.predicted_values
        paired = len(pairs) + len(weak)
        if paired < len(expected_values):
            paired_expected = {row for row, _ in pairs} | {row for row, _, _ in weak}
            for row, (i, value) in enumerate(
                zip(items.expected_positions, expected_values, strict=True)
            ):
                if row not in paired_expected:
                    item.one_sided(value, f"{path}[{i}]", None, state, True)
        if paired < len(predicted_values):
            paired_predicted = {col for _, col in pairs} | {col for _, col, _ in weak}
            extra = 0
            for col, (j, value) in enumerate(
                zip(items.predicted_positions, predicted_values, strict=True)
            ):
                if col not in paired_predicted:
                    item.one_sided(
                        value,
                        f"{path}[{expected_length + extra}]",
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
        positions, items = present_items(value, self.item)
        if expected_side and self.configured:
            wanted = item_shape(self.item)
            for position, item in zip(positions, items, strict=True):
                if not has_shape(item, wanted):
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


class _Items(NamedTuple):
    """A list's present items on both sides: positions in the list and values."""

    expected_positions: Sequence[int]
    expected_values: list[Any]
    predicted_positions: Sequence[int]
    predicted_values: list[Any]
