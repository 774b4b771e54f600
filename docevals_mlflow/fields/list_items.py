"""Which items of a list take part in its comparison, and whether the expected
items have the shape the schema gives them (else an input error is recorded)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from docevals_mlflow.core.paths import key_segment
from docevals_mlflow.core.values import is_empty
from docevals_mlflow.fields.leaves import ScalarNode
from docevals_mlflow.fields.objects import ObjectNode

if TYPE_CHECKING:
    from docevals_mlflow.fields.lists import ArrayNode
    from docevals_mlflow.fields.state import DocumentState, Node

_ONLY_DICT = frozenset({dict})


def expected_items(
    array: ArrayNode, items: list[Any], path: str, state: DocumentState
) -> tuple[Sequence[int] | None, list[Any]]:
    """Positions and values of the expected items, or ``None`` when an item's
    shape contradicts the schema (recorded as a violation)."""
    positions, values = present_items(items, array.item)
    if not array.configured:
        return positions, values
    wanted = item_shape(array.item)
    if type(positions) is range:
        return positions, values  # every item is a dict: the object shape holds
    for position, value in zip(positions, values, strict=True):
        if not has_shape(value, wanted):
            state.violation(f"{path}[{position}]", wanted, value)
            return None, []
    return positions, values


def scalar_attributes_hold_values(
    scalar_keys: tuple[str, ...],
    positions: Sequence[int],
    values: list[Any],
    path: str,
    state: DocumentState,
) -> bool:
    """Whether every configured scalar attribute (``scalar_keys``) of the expected
    items holds a single value (else the first violation is recorded). Only asked
    when pairing saw a container in such a column: paired items' attributes are
    decided in bulk, never one by one."""
    for position, value in zip(positions, values, strict=True):
        for key in scalar_keys:
            attribute = value.get(key) if isinstance(value, Mapping) else None
            if (type(attribute) is dict or type(attribute) is list) and attribute:
                state.violation(
                    f"{path}[{position}]{key_segment(key)}", "a single value", attribute
                )
                return False
    return True


def item_shape(item: Node) -> str:
    """What the schema makes each item of a list with ``item`` nodes."""
    if isinstance(item, ObjectNode):
        return "an object"
    if not isinstance(item, ScalarNode):
        return "a list"
    return "any value" if item.structured else "a single value"


def has_shape(value: Any, wanted: str) -> bool:
    """Whether ``value`` is of the shape :func:`item_shape` named."""
    if wanted == "an object":
        return isinstance(value, Mapping)
    if wanted == "a list":
        return isinstance(value, list)
    if wanted == "any value":
        return True
    return not isinstance(value, Mapping | list)


def present_items(items: list[Any], item: Node) -> tuple[Sequence[int], list[Any]]:
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
