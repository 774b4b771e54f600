"""Import JSON Schema with ``x-aws-idp-evaluation-*`` / ``x-aws-stickler-*`` extensions.

Accepted forms: one class schema, ``{"classes": [...]}``, or ``oneOf``/``anyOf`` of
``$ref`` s into ``$defs``. :mod:`.json_refs` resolves ``$ref`` s and unwraps nullable
forms; :mod:`.json_rules` reads the evaluation extensions on each node. This module
assembles the classes and fields:

* A scalar method on an array of scalars applies to its items (the items' own keys win).
  An array of objects is matched with ``HUNGARIAN`` (stated or not); its match threshold
  is the first of ``x-aws-idp-evaluation-match-threshold``,
  ``x-aws-idp-evaluation-threshold``, then ``x-aws-stickler-match-threshold`` (on the
  array, or on its ``items`` where Stickler writes it), else the native default.
* A method that scores whole values (``ANLS_STAR``, Stickler's ``AnlsStarComparator``)
  on an object or an array makes it one field scored whole.
* Any other method on an object property is an error. ``x-aws-stickler-threshold`` on an object
  (Stickler's gate on the object's mean score, written by its exporter) and the
  class-level match threshold have no native equivalent and are ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

from docevals_mlflow.errors import InputError
from docevals_mlflow.fields.importers.common import (
    IDP_DEFAULT_MATCH_THRESHOLD,
    _AnyMethod,
    _is_list,
    _number,
    _scalar_spec,
    _schema_id,
    _text,
    _Where,
)
from docevals_mlflow.fields.importers.json_refs import _deref, _json_kind, _JsonContext, _normalize
from docevals_mlflow.fields.importers.json_rules import (
    _IDP_MATCH_THRESHOLD,
    _IDP_THRESHOLD,
    _STICKLER_MATCH_THRESHOLD,
    _json_method,
    _json_rule,
    _json_weight,
    _ScalarRule,
)
from docevals_mlflow.fields.registry import registered_field_method
from docevals_mlflow.fields.schema import ClassSchema, DocumentSchema, FieldSpec


def looks_like_json_schema(data: Any) -> bool:
    """True for a mapping with ``properties``, ``$schema`` or ``$defs`` at the top level,
    or with a ``classes`` list whose entries have ``properties``."""
    if not isinstance(data, Mapping):
        return False
    if any(key in data for key in ("properties", "$schema", "$defs")):
        return True
    classes = data.get("classes")
    return _is_list(classes) and any(
        isinstance(entry, Mapping) and "properties" in entry for entry in classes
    )


def schema_from_json_schema(schema: Mapping[str, Any]) -> DocumentSchema:
    """Import JSON Schema with ``x-aws-idp-evaluation-*`` / ``x-aws-stickler-*`` extensions.

    Accepts one class schema, ``{"classes": [...]}``, or ``oneOf``/``anyOf`` of class
    schemas (usually ``$ref`` s into ``$defs``). A class is named by
    ``x-aws-idp-document-type``, else ``title``, else ``x-aws-stickler-model-name``, else
    the ``$defs`` name it was referenced by, else ``document``. ``schema_id`` is the
    top-level ``schema_id`` or ``$id``, else ``json-schema``. Every problem is an
    :class:`InputError` naming the class, the property path (``transactions[].amount``)
    and the offending key.
    """
    if not isinstance(schema, Mapping):
        raise InputError(
            f"a JSON Schema must be an object (got {type(schema).__name__})",
            expected="an object schema with 'properties', or 'classes'",
        )
    schema_id = _schema_id(schema, ("schema_id", "$id"), "json-schema")
    classes = schema.get("classes")
    branches_key = next((key for key in ("oneOf", "anyOf") if key in schema), None)
    if classes is not None:
        if not _is_list(classes):
            raise InputError(
                "'classes' must be a list of JSON Schemas",
                path="classes",
                expected="a list of object schemas",
            )
        # A class's own "$defs" come first; the container's are shared by every class.
        built = [
            _json_class(
                entry,
                f"classes[{index}]",
                (entry, schema) if isinstance(entry, Mapping) else (schema,),
            )
            for index, entry in enumerate(classes)
        ]
    elif branches_key is not None and "properties" not in schema:
        branches = schema[branches_key]
        if not _is_list(branches):
            raise InputError(f"'{branches_key}' must be a list of schemas", path=branches_key)
        built = [
            _json_class(branch, f"{branches_key}[{index}]", (schema,))
            for index, branch in enumerate(branches)
        ]
    else:
        built = [_json_class(schema, None, (schema,))]
    return DocumentSchema(schema_id=schema_id, version="1", classes=built)


def _json_class(node: Any, slot: str | None, roots: tuple[Mapping[str, Any], ...]) -> ClassSchema:
    if not isinstance(node, Mapping):
        raise InputError(
            f"{slot or 'the schema'} is not a JSON Schema object (got {type(node).__name__})",
            path=slot,
            expected="an object schema",
        )
    fallback = "document"
    ref = node.get("$ref")
    if isinstance(ref, str):
        # A class reached through "#/$defs/Invoice" is best named "Invoice".
        fallback = unquote(ref.rsplit("/", 1)[-1]) or fallback
    anonymous = _JsonContext(_Where(None, "property"), roots)
    node, active = _deref(node, anonymous, slot, ())

    name: Any = fallback
    for key in ("x-aws-idp-document-type", "title", "x-aws-stickler-model-name"):
        if node.get(key) is not None:
            name = node[key]
            break
    if not isinstance(name, str) or not name.strip():
        raise InputError(
            f"class name {name!r} must be non-empty text", path=slot, expected="non-empty text"
        )
    context = _JsonContext(_Where(name, "property"), roots)

    declared = node.get("type")
    types = declared if isinstance(declared, list) else [declared]
    non_null = [item for item in types if item not in (None, "null")]
    if non_null != ["object"] and not (not non_null and "properties" in node):
        raise context.where.error(
            None,
            f"a class schema must be of type 'object' (type is {declared!r})",
            expected="an object schema with 'properties'",
        )
    properties = node.get("properties", {})
    if not isinstance(properties, Mapping):
        raise context.where.error(None, "'properties' must be an object")
    fields = {
        str(key): _json_field(value, str(key), context, active) for key, value in properties.items()
    }
    return ClassSchema(name=name, description=_text(node.get("description")), fields=fields)


def _json_field(
    node: Any,
    path: str,
    context: _JsonContext,
    active: tuple[str, ...],
    inherited: _ScalarRule | None = None,
) -> FieldSpec:
    node, active = _normalize(node, context, path, active)
    return _json_normalized_field(node, path, context, active, inherited)


def _json_normalized_field(
    node: Mapping[str, Any],
    path: str,
    context: _JsonContext,
    active: tuple[str, ...],
    inherited: _ScalarRule | None,
) -> FieldSpec:
    kind = _json_kind(node, context, path)
    method, method_key = _json_method(node, context, path)
    weight = _json_weight(node, context, path)
    description = _text(node.get("description"))
    if kind != "scalar" and _scores_whole_values(method):
        # Stickler puts its ANLS* comparator on dicts and lists it scores whole: the
        # value is one field, whatever properties or items the schema declares.
        kind = "scalar"

    if kind == "object":
        if method is not None:
            raise context.where.error(
                path,
                f"{method_key} {method} does not apply to an object; set it on its properties",
            )
        if node.get(_IDP_THRESHOLD) is not None:
            raise context.where.error(
                path,
                f"{_IDP_THRESHOLD} does not apply to an object; set it on its properties",
            )
        properties = node["properties"]
        if not isinstance(properties, Mapping):
            raise context.where.error(path, "'properties' must be an object")
        fields = {
            str(key): _json_field(value, f"{path}.{key}", context, active)
            for key, value in properties.items()
        }
        return FieldSpec(fields=fields, weight=weight or 1.0, description=description)

    if kind == "array":
        return _json_array(node, method, weight, description, path, context, active)

    if method == "HUNGARIAN":
        raise context.where.error(
            path, f"{method_key} HUNGARIAN matches the items of a list; this is not an array"
        )
    rule = _json_rule(node, method, context, path)
    if inherited is not None:
        rule = rule.under(inherited)
    return _scalar_spec(
        rule.method,
        rule.threshold,
        context.where,
        path,
        rule.threshold_key,
        description=description,
        weight=weight,
        relative_tolerance=rule.relative_tolerance,
        fuzzy_scorer=rule.fuzzy_scorer,
        date_order=rule.date_order,
        case_sensitive=rule.case_sensitive,
        options=dict(rule.options or ()),
    )


def _scores_whole_values(method: _AnyMethod | None) -> bool:
    record = registered_field_method(method) if isinstance(method, str) else None
    return record is not None and record.structured_values


def _json_array(
    node: Mapping[str, Any],
    method: _AnyMethod | None,
    weight: float | None,
    description: str | None,
    path: str,
    context: _JsonContext,
    active: tuple[str, ...],
) -> FieldSpec:
    item_path = f"{path}[]"
    raw_items = node.get("items")
    if _is_list(raw_items):
        raise context.where.error(path, "tuple-form 'items' (a list of schemas) is not supported")
    items_node, items_active = _normalize(
        {} if raw_items is None else raw_items, context, item_path, active
    )
    items_kind = _json_kind(items_node, context, item_path)
    hungarian = method == "HUNGARIAN" or (method is None and items_kind != "scalar")
    if not hungarian and items_kind != "scalar":
        raise context.where.error(
            path,
            f"{method} cannot compare a list of objects or lists; use HUNGARIAN "
            f"(with {_IDP_MATCH_THRESHOLD} for the match threshold)",
        )

    candidates: list[tuple[str, Mapping[str, Any]]] = [(_IDP_MATCH_THRESHOLD, node)]
    if hungarian:
        candidates.append((_IDP_THRESHOLD, node))
    candidates += [
        (_IDP_MATCH_THRESHOLD, items_node),
        (_STICKLER_MATCH_THRESHOLD, node),
        (_STICKLER_MATCH_THRESHOLD, items_node),
    ]
    match_threshold = IDP_DEFAULT_MATCH_THRESHOLD
    for key, source in candidates:
        if source.get(key) is not None:
            match_threshold = _number(
                source[key], context.where, path if source is node else item_path, key
            )
            break

    # A scalar rule on an array of scalars is the rule for each item.
    inherited = None if hungarian else _json_rule(node, method, context, path)
    items = _json_normalized_field(items_node, item_path, context, items_active, inherited)
    return FieldSpec(
        items=items,
        match_threshold=match_threshold,
        weight=weight or 1.0,
        description=description,
    )
