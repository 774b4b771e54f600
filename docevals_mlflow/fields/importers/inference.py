"""Schema inference from ground-truth documents.

:func:`infer_class_schema` applies the IDP rules for classes without configuration:
text FUZZY 0.85, numbers NUMERIC_EXACT with tolerance 0.01, booleans EXACT.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

from docevals_mlflow.errors import InputError
from docevals_mlflow.fields.importers.common import IDP_DEFAULT_MATCH_THRESHOLD, _is_list
from docevals_mlflow.fields.schema import ClassSchema, FieldSpec

_INFERRED_TEXT_THRESHOLD = 0.85
_INFERRED_NUMBER_TOLERANCE = 0.01


@dataclass
class _Shape:
    """What the examples showed at one place: a scalar kind, an object or an array."""

    kind: Literal["null", "string", "number", "boolean", "object", "array"]
    fields: dict[str, _Shape] = dataclasses.field(default_factory=dict)
    item: _Shape | None = None

    @property
    def structured(self) -> bool:
        return self.kind in ("object", "array")


def _shape_of(value: Any) -> _Shape:
    if value is None:
        return _Shape("null")
    if isinstance(value, bool):
        return _Shape("boolean")
    if isinstance(value, (int, float, Decimal)):
        return _Shape("number")
    if isinstance(value, Mapping):
        shape = _Shape("object")
        for key, member in value.items():
            name = str(key)
            seen = shape.fields.get(name)
            member_shape = _shape_of(member)
            shape.fields[name] = member_shape if seen is None else _merge(seen, member_shape)
        return shape
    if _is_list(value):
        item: _Shape | None = None
        for member in value:
            member_shape = _shape_of(member)
            # Within one list, a scalar rule comes from the first non-null item.
            item = member_shape if item is None else _merge(item, member_shape, first_scalar=True)
        return _Shape("array", item=item)
    # Text, dates and anything else are compared as text.
    return _Shape("string")


def _merge(first: _Shape, second: _Shape, *, first_scalar: bool = False) -> _Shape:
    """Combine two observations of one place.

    Nulls give way to anything. Objects take the union of their keys in first-seen
    order; arrays merge their items as one list. A structure wins over a scalar (its
    fields are what can be compared) and the first structure wins over a different one.
    Two different scalar kinds become text, unless ``first_scalar`` keeps the first
    (the rule for items of one list).
    """
    if first.kind == "null":
        return second
    if second.kind == "null":
        return first
    if first.kind == "object" and second.kind == "object":
        fields = dict(first.fields)
        for name, shape in second.fields.items():
            fields[name] = shape if name not in fields else _merge(fields[name], shape)
        return _Shape("object", fields=fields)
    if first.kind == "array" and second.kind == "array":
        if first.item is None or second.item is None:
            return first if second.item is None else second
        return _Shape("array", item=_merge(first.item, second.item, first_scalar=True))
    if first.structured or second.structured:
        return first if first.structured else second
    if first.kind == second.kind or first_scalar:
        return first
    return _Shape("string")


def _spec_of(shape: _Shape | None) -> FieldSpec:
    if shape is None:
        return FieldSpec(method="EXACT")
    if shape.kind == "object":
        return FieldSpec(fields={name: _spec_of(member) for name, member in shape.fields.items()})
    if shape.kind == "array":
        item = shape.item
        # A list with no non-null item gives nothing to infer from: compare items exactly.
        return FieldSpec(
            items=_spec_of(None if item is None or item.kind == "null" else item),
            match_threshold=IDP_DEFAULT_MATCH_THRESHOLD,
        )
    if shape.kind == "number":
        return FieldSpec(method="NUMERIC_EXACT", threshold=_INFERRED_NUMBER_TOLERANCE)
    if shape.kind == "boolean":
        return FieldSpec(method="EXACT")
    # Text, and keys that were only ever null, are treated as text.
    return FieldSpec(method="FUZZY", threshold=_INFERRED_TEXT_THRESHOLD)


def infer_class_schema(name: str, examples: Iterable[Any]) -> ClassSchema:
    """Infer a class schema from ground-truth documents of that class (the IDP rules).

    Text is FUZZY (0.85), numbers NUMERIC_EXACT (tolerance 0.01), booleans EXACT;
    objects become objects with the union of keys seen (first-seen order); lists of
    objects become arrays of one object inferred from every item; lists of scalars take
    the rule of their first non-null item (EXACT if there is none); keys only ever null
    are text. A key seen as different scalar kinds across examples is text. Lists get
    the native pairing threshold.
    """
    merged = _Shape("object")
    for index, example in enumerate(examples, start=1):
        if not isinstance(example, Mapping):
            raise InputError(
                f"example {index} for class {name!r} is not an object "
                f"(got {type(example).__name__})",
                record=name,
                expected="one ground-truth document (an object) per example",
            )
        merged = _merge(merged, _shape_of(example))
    return ClassSchema(
        name=name,
        fields={key: _spec_of(member) for key, member in merged.fields.items()},
    )
