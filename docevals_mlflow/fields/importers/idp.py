"""Import the IDP configuration format (``classes → attributes``).

``attributeType`` is ``simple`` (the default), ``group`` (``groupAttributes``) or
``list`` (``listItemTemplate.itemAttributes``). Choices made where the format is loose:

* Without ``attributeType``, an attribute with a ``listItemTemplate`` is a list and one
  with ``groupAttributes`` is a group, so a forgotten type does not silently flatten it.
* Thresholds may be written as numeric text (``"0.8"``), which the IDP accelerator
  also accepts; anything else that is not a number is an error.
* A list of objects is matched with ``HUNGARIAN``; its ``evaluation_threshold`` is the
  list's ``match_threshold`` (when absent, the native pairing default, 0.5, is
  recorded explicitly; IDP's 0.8 meant something else, see
  ``IDP_DEFAULT_MATCH_THRESHOLD``). Any other method there is an error, as in the IDP.
* A list of scalars (a list attribute without item attributes, or any attribute whose
  method is ``HUNGARIAN``) compares items with ``hungarian_comparator`` (``EXACT`` by
  default); ``evaluation_threshold`` applies to the items only with the ``FUZZY``
  comparator, as in the IDP. With another scalar method, that method (and threshold)
  applies to each item and ``hungarian_comparator`` is ignored.
* A method or threshold on a group has no meaning and is an error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from docevals_mlflow.errors import InputError
from docevals_mlflow.fields import registry
from docevals_mlflow.fields.importers.common import (
    IDP_DEFAULT_MATCH_THRESHOLD,
    _AnyMethod,
    _is_list,
    _method_name,
    _number,
    _scalar_spec,
    _schema_id,
    _text,
    _Where,
    listed,
    threshold_is_tolerance,
)
from docevals_mlflow.fields.schema import ClassSchema, DocumentSchema, FieldSpec

HUNGARIAN_LISTING_ORDER: tuple[str, ...] = ("EXACT", "FUZZY", "NUMERIC")
"""The order in which the IDP lists its ``hungarian_comparator`` names, for messages
(the names themselves are ``FieldMethod.idp_list_comparator``)."""


def _hungarian_comparators(*, load: bool) -> dict[str, str]:
    """``hungarian_comparator`` name → method, of the methods known (``load``: after
    loading the plugins)."""
    methods = registry.field_methods() if load else registry.BUILTIN_METHODS
    return {
        method.idp_list_comparator: method.name
        for method in methods
        if method.idp_list_comparator is not None
    }


_ATTRIBUTE_TYPES = ("simple", "group", "list")


def looks_like_idp_config(data: Any) -> bool:
    """True for a mapping whose ``classes`` list holds IDP classes (objects with ``attributes``)."""
    if not isinstance(data, Mapping):
        return False
    classes = data.get("classes")
    return _is_list(classes) and any(
        isinstance(entry, Mapping) and "attributes" in entry for entry in classes
    )


def schema_from_idp_config(config: Mapping[str, Any]) -> DocumentSchema:
    """Import the IDP configuration format (``classes → attributes``).

    Top-level keys other than ``classes`` (such as ``evaluation`` LLM settings) are
    ignored; ``schema_id`` is the config's ``schema_id`` or ``name``, else
    ``idp-config``. Every problem is an :class:`InputError` naming the class
    (``record``), the attribute path (``path``, like ``Transactions[].Amount``) and the
    offending key.
    """
    if not isinstance(config, Mapping):
        raise InputError(
            f"an IDP configuration must be an object (got {type(config).__name__})",
            expected="an object with 'classes'",
        )
    classes = config.get("classes")
    if not _is_list(classes):
        raise InputError(
            "'classes' must be a list of document classes",
            path="classes",
            expected="a list of objects with 'name' and 'attributes'",
        )
    schema_id = _schema_id(config, ("schema_id", "name"), "idp-config")
    built = [_idp_class(entry, index) for index, entry in enumerate(classes)]
    return DocumentSchema(schema_id=schema_id, version="1", classes=built)


def _idp_class(entry: Any, index: int) -> ClassSchema:
    slot = f"classes[{index}]"
    if not isinstance(entry, Mapping):
        raise InputError(
            f"{slot} is not an object (got {type(entry).__name__})",
            path=slot,
            expected="an object with 'name' and 'attributes'",
        )
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise InputError(f"{slot} has no 'name'", path=f"{slot}.name", expected="non-empty text")
    where = _Where(name, "attribute")
    attributes = entry.get("attributes")
    if attributes is None:
        # A class listed only for classification has nothing to compare.
        attributes = []
    if not _is_list(attributes):
        raise where.error(None, "'attributes' must be a list", expected="a list of attributes")
    return ClassSchema(
        name=name,
        description=_text(entry.get("description")),
        fields=_idp_attributes(attributes, where, None, "attributes"),
    )


def _idp_attributes(
    attributes: Iterable[Any], where: _Where, parent: str | None, slots: str
) -> dict[str, FieldSpec]:
    """The fields of one attribute list; ``parent`` prefixes paths, ``slots`` names the list."""
    fields: dict[str, FieldSpec] = {}
    for index, attribute in enumerate(attributes):
        slot = f"{slots}[{index}]"
        if not isinstance(attribute, Mapping):
            raise where.error(
                slot,
                f"attribute is not an object (got {type(attribute).__name__})",
                expected="an object with 'name'",
            )
        name = attribute.get("name")
        if not isinstance(name, str) or not name.strip():
            raise where.error(slot, "missing 'name'", expected="non-empty text")
        path = f"{parent}.{name}" if parent else name
        if name in fields:
            raise where.error(
                path, f"duplicate attribute name {name!r} (each 'name' must be unique)"
            )
        fields[name] = _idp_attribute(attribute, where, path)
    return fields


def _idp_kind(attribute: Mapping[str, Any], where: _Where, path: str) -> str:
    declared = attribute.get("attributeType")
    if declared is None:
        if attribute.get("listItemTemplate") is not None:
            return "list"
        if attribute.get("groupAttributes") is not None:
            return "group"
        return "simple"
    kind = declared.strip().lower() if isinstance(declared, str) else None
    if kind is None or kind not in _ATTRIBUTE_TYPES:
        raise where.error(
            path,
            f"unknown attributeType {declared!r}; valid types: {', '.join(_ATTRIBUTE_TYPES)}",
        )
    return kind


def _idp_comparator(attribute: Mapping[str, Any], where: _Where, path: str) -> str | None:
    value = attribute.get("hungarian_comparator")
    if value is None:
        return None
    name = value.strip().upper() if isinstance(value, str) else None
    # Built-in names first: plugins are loaded only for a name that is not one.
    comparator = _hungarian_comparators(load=False).get(name or "")
    if comparator is None and name is not None:
        comparator = _hungarian_comparators(load=True).get(name)
    if comparator is None:
        names = listed(list(_hungarian_comparators(load=True)), HUNGARIAN_LISTING_ORDER)
        raise where.error(
            path,
            f"unknown hungarian_comparator {value!r}; valid comparators: {', '.join(names)}",
        )
    return comparator


def _idp_attribute(attribute: Mapping[str, Any], where: _Where, path: str) -> FieldSpec:
    kind = _idp_kind(attribute, where, path)
    method = _method_name(attribute.get("evaluation_method"), where, path, "evaluation_method")
    # Validated even where it does not apply, so a typo never passes unnoticed.
    comparator = _idp_comparator(attribute, where, path)
    threshold = attribute.get("evaluation_threshold")
    description = _text(attribute.get("description"))

    if kind == "group":
        if method is not None:
            raise where.error(
                path,
                f"evaluation_method {method} does not apply to a group; "
                "set it on the groupAttributes",
            )
        if threshold is not None:
            raise where.error(
                path,
                "evaluation_threshold does not apply to a group; set it on the groupAttributes",
            )
        members = attribute.get("groupAttributes")
        if not _is_list(members) or not members:
            raise where.error(
                path,
                "group attribute has no groupAttributes",
                expected="a non-empty list of attributes",
            )
        return FieldSpec(
            fields=_idp_attributes(members, where, path, f"{path}.groupAttributes"),
            description=description,
        )

    if kind == "list":
        template = attribute.get("listItemTemplate")
        if template is not None and not isinstance(template, Mapping):
            raise where.error(
                path,
                "listItemTemplate must be an object",
                expected="an object with 'itemAttributes'",
            )
        template = template or {}
        item_attributes = template.get("itemAttributes")
        if item_attributes is not None and not _is_list(item_attributes):
            raise where.error(path, "listItemTemplate.itemAttributes must be a list of attributes")
        item_description = _text(template.get("itemDescription"))
        if item_attributes:
            return _idp_object_list(
                item_attributes, method, threshold, where, path, description, item_description
            )
        return _idp_scalar_list(
            method, comparator, threshold, where, path, description, item_description
        )

    if method == "HUNGARIAN":
        return _idp_scalar_list(method, comparator, threshold, where, path, description, None)
    tolerance_or_score = _idp_threshold(threshold, method, where, path)
    return _scalar_spec(
        method, tolerance_or_score, where, path, "evaluation_threshold", description=description
    )


def _idp_threshold(
    threshold: Any, method: _AnyMethod | None, where: _Where, path: str
) -> float | None:
    """``evaluation_threshold`` as a number for ``method``, or ``None`` when it is absent."""
    if threshold is None:
        return None
    return _number(
        threshold,
        where,
        path,
        "evaluation_threshold",
        # For NUMERIC_EXACT the threshold is an absolute tolerance, not a score.
        high=None if threshold_is_tolerance(method) else 1.0,
    )


def _idp_object_list(
    members: Iterable[Any],
    method: _AnyMethod | None,
    threshold: Any,
    where: _Where,
    path: str,
    description: str | None,
    item_description: str | None,
) -> FieldSpec:
    if method not in (None, "HUNGARIAN"):
        raise where.error(
            path,
            f"evaluation_method {method} cannot compare a list of objects; use HUNGARIAN "
            "(its evaluation_threshold is the list's match threshold)",
        )
    match_threshold = (
        IDP_DEFAULT_MATCH_THRESHOLD
        if threshold is None
        else _number(threshold, where, path, "evaluation_threshold")
    )
    items = FieldSpec(
        fields=_idp_attributes(
            members, where, f"{path}[]", f"{path}.listItemTemplate.itemAttributes"
        ),
        description=item_description,
    )
    return FieldSpec(items=items, match_threshold=match_threshold, description=description)


def _idp_scalar_list(
    method: _AnyMethod | None,
    comparator: str | None,
    threshold: Any,
    where: _Where,
    path: str,
    description: str | None,
    item_description: str | None,
) -> FieldSpec:
    item_path = f"{path}[]"
    if method is None or method == "HUNGARIAN":
        item_method = comparator or "EXACT"
        score = (
            None if threshold is None else _number(threshold, where, path, "evaluation_threshold")
        )
        # The IDP reads a HUNGARIAN threshold only for its FUZZY comparator: the one
        # graded comparator, whose list label shows its threshold.
        record = registry.get_field_method(item_method)
        item_threshold = score if record.threshold_in_list_label else None
    else:
        item_method = method
        item_threshold = _idp_threshold(threshold, method, where, path)
    items = _scalar_spec(
        item_method,
        item_threshold,
        where,
        item_path,
        "evaluation_threshold",
        description=item_description,
    )
    return FieldSpec(
        items=items, match_threshold=IDP_DEFAULT_MATCH_THRESHOLD, description=description
    )
