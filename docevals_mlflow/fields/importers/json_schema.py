"""Import JSON Schema with ``x-aws-idp-evaluation-*`` / ``x-aws-stickler-*`` extensions.

Accepted forms: one class schema, ``{"classes": [...]}``, or ``oneOf``/``anyOf`` of
``$ref`` s into ``$defs``. Local ``$ref`` s are resolved; keys written beside a
``$ref`` override the target's. Nullable forms (``["string", "null"]``, ``anyOf`` of a
schema and ``null``) are unwrapped. Evaluation extensions:

* ``x-aws-idp-evaluation-*`` take precedence over ``x-aws-stickler-*`` key by key,
  because the IDP keys are what the IDP accelerator writes on purpose, while Stickler
  keys are often left behind by Stickler's own exporter.
* A property without a method keeps ``method=None``, so the schema records that it was
  not configured (the comparison then uses ``EXACT``).
* ``x-aws-stickler-threshold`` is a score threshold; for ``NUMERIC_EXACT`` the native
  threshold is an absolute tolerance, so it comes from ``x-aws-idp-evaluation-threshold``,
  ``x-aws-stickler-tolerance`` or the comparator config (``tolerance``,
  ``absolute_tolerance``), never from the Stickler score threshold.
* A scalar method on an array of scalars applies to its items (the items' own keys win).
  An array of objects is matched with ``HUNGARIAN`` (stated or not); its match threshold
  is the first of ``x-aws-idp-evaluation-match-threshold``,
  ``x-aws-idp-evaluation-threshold``, then ``x-aws-stickler-match-threshold`` (on the
  array, or on its ``items`` where Stickler writes it), else the native default.
* A method on an object property is an error. ``x-aws-stickler-threshold`` on an object
  (Stickler's gate on the object's mean score, written by its exporter) and the
  class-level match threshold have no native equivalent and are ignored.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import unquote

from docevals_mlflow.errors import InputError
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
)
from docevals_mlflow.fields.schema import (
    ClassSchema,
    DateOrder,
    DocumentSchema,
    FieldSpec,
    FuzzyScorer,
    Method,
)

_Kind = Literal["scalar", "object", "array"]

_STICKLER_COMPARATORS: dict[str, Method] = {
    "ExactComparator": "EXACT",
    "NumericComparator": "NUMERIC_EXACT",
    "FuzzyComparator": "FUZZY",
    "LevenshteinComparator": "LEVENSHTEIN",
    "SemanticComparator": "SEMANTIC",
    "LLMComparator": "LLM",
    "DateComparator": "DATE",
    "NormalizedComparator": "NORMALIZED",
}
_STICKLER_SHORT_NAMES: dict[str, Method] = {
    "exact": "EXACT",
    "numeric": "NUMERIC_EXACT",
    "fuzzy": "FUZZY",
    "levenshtein": "LEVENSHTEIN",
    "semantic": "SEMANTIC",
    "llm": "LLM",
    "date": "DATE",
    "normalized": "NORMALIZED",
}
# Both spellings are matched without regard to case: "exactcomparator" is no less clear.
_STICKLER_LOOKUP: dict[str, Method] = {
    **{name.casefold(): method for name, method in _STICKLER_COMPARATORS.items()},
    **_STICKLER_SHORT_NAMES,
}
_FUZZY_SCORERS: dict[str, FuzzyScorer] = {
    "ratio": "ratio",
    "partial_ratio": "partial_ratio",
    "token_sort_ratio": "token_sort_ratio",
    "token_set_ratio": "token_set_ratio",
}
_JSON_SCALAR_TYPES = ("string", "number", "integer", "boolean", "null")
_JSON_TYPES = (*_JSON_SCALAR_TYPES, "object", "array")

_IDP_METHOD = "x-aws-idp-evaluation-method"
_IDP_THRESHOLD = "x-aws-idp-evaluation-threshold"
_IDP_MATCH_THRESHOLD = "x-aws-idp-evaluation-match-threshold"
_IDP_WEIGHT = "x-aws-idp-evaluation-weight"
_STICKLER_COMPARATOR = "x-aws-stickler-comparator"
_STICKLER_THRESHOLD = "x-aws-stickler-threshold"
_STICKLER_MATCH_THRESHOLD = "x-aws-stickler-match-threshold"
_STICKLER_WEIGHT = "x-aws-stickler-weight"
_STICKLER_CONFIG = "x-aws-stickler-comparator-config"
_STICKLER_TOLERANCE = "x-aws-stickler-tolerance"


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


@dataclass(frozen=True)
class _JsonContext:
    """Where errors are reported, and the documents ``$ref`` pointers are resolved in."""

    where: _Where
    roots: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True)
class _ScalarRule:
    """A scalar comparison read from one schema node; unset parts are ``None``."""

    method: Method | None = None
    threshold: float | None = None
    threshold_key: str = _IDP_THRESHOLD
    relative_tolerance: float | None = None
    fuzzy_scorer: FuzzyScorer | None = None
    date_order: DateOrder | None = None
    case_sensitive: bool | None = None

    def under(self, outer: _ScalarRule) -> _ScalarRule:
        """This rule, falling back to ``outer`` (an array's rule) for its items.

        An item schema that names its own method keeps its whole rule: mixing the
        array's threshold into a different method would pair numbers that mean
        different things.
        """
        if self.method is not None:
            return self
        merged = {
            item.name: getattr(self, item.name)
            if getattr(self, item.name) is not None
            else getattr(outer, item.name)
            for item in dataclasses.fields(self)
        }
        merged["threshold_key"] = (
            self.threshold_key if self.threshold is not None else outer.threshold_key
        )
        return _ScalarRule(**merged)


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


def _pointer_target(root: Mapping[str, Any], parts: list[str]) -> Any:
    """The node a JSON pointer (already split and unescaped) names, or ``None``."""
    node: Any = root
    for part in parts:
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def _resolve_ref(ref: Any, context: _JsonContext, path: str | None) -> Mapping[str, Any]:
    if not isinstance(ref, str) or not (ref == "#" or ref.startswith("#/")):
        raise context.where.error(
            path,
            f"$ref {ref!r} is not a local reference",
            expected="a JSON pointer into this document, like '#/$defs/Address'",
        )
    parts = (
        [
            # RFC 6901: "~1" is "/" and "~0" is "~", decoded in that order.
            unquote(part).replace("~1", "/").replace("~0", "~")
            for part in ref[2:].split("/")
        ]
        if ref != "#"
        else []
    )
    for root in context.roots:
        target = _pointer_target(root, parts)
        if isinstance(target, Mapping):
            return target
        if target is not None:
            raise context.where.error(path, f"$ref {ref!r} does not point to a schema object")
    raise context.where.error(path, f"$ref {ref!r} does not resolve to anything in the schema")


def _deref(
    node: Mapping[str, Any], context: _JsonContext, path: str | None, active: tuple[str, ...]
) -> tuple[Mapping[str, Any], tuple[str, ...]]:
    """Follow ``$ref`` s; ``active`` holds the refs being expanded above this node."""
    while "$ref" in node:
        ref = node["$ref"]
        target = _resolve_ref(ref, context, path)
        if ref in active:
            cycle = " -> ".join((*active[active.index(ref) :], ref))
            raise context.where.error(
                path,
                f"$ref {ref!r} is recursive ({cycle}); a comparison schema must be finite",
            )
        active = (*active, ref)
        # Keys beside the $ref (a description, an evaluation method) refine the target.
        node = {**target, **{key: value for key, value in node.items() if key != "$ref"}}
    return node, active


def _is_null_schema(node: Mapping[str, Any]) -> bool:
    declared = node.get("type")
    return declared == "null" or declared == ["null"]


def _normalize(
    node: Any, context: _JsonContext, path: str, active: tuple[str, ...]
) -> tuple[Mapping[str, Any], tuple[str, ...]]:
    """Resolve refs and unwrap nullable ``anyOf``/``oneOf``/single ``allOf`` forms."""
    if node is True:
        # The JSON Schema "anything" schema: a scalar with nothing configured.
        node = {}
    if not isinstance(node, Mapping):
        raise context.where.error(
            path,
            f"schema is not an object (got {type(node).__name__})",
            expected="an object schema",
        )
    node, active = _deref(node, context, path, active)
    for keyword in ("anyOf", "oneOf", "allOf"):
        if keyword not in node:
            continue
        branches = node[keyword]
        if not _is_list(branches) or not branches:
            raise context.where.error(path, f"{keyword} must be a non-empty list of schemas")
        rest = {key: value for key, value in node.items() if key != keyword}
        resolved = []
        for branch in branches:
            if not isinstance(branch, Mapping):
                raise context.where.error(path, f"an {keyword} entry is not a schema object")
            resolved.append(_deref(branch, context, path, active))
        kept = [item for item in resolved if not _is_null_schema(item[0])]
        if keyword == "allOf" and len(resolved) > 1:
            raise context.where.error(path, "allOf with several schemas is not supported")
        if len(kept) == 1:
            branch, branch_active = kept[0]
            # The outer keys (extensions, description) win over the branch's.
            return _normalize({**branch, **rest}, context, path, branch_active)
        if not kept:
            return {**rest, "type": "null"}, active
        if all(_json_kind(item, context, path) == "scalar" for item, _ in kept):
            # Several scalar alternatives ("a number or a text") make one scalar field.
            types: set[str] = set()
            for item, _ in kept:
                declared = item.get("type", "string")
                types.update(declared if _is_list(declared) else [declared])
            return {**rest, "type": sorted(types - {"null"}) or ["string"]}, active
        raise context.where.error(
            path,
            f"{keyword} with several non-null schemas is supported only for scalars",
            expected="one schema, optionally with 'null'",
        )
    return node, active


def _json_kind(node: Mapping[str, Any], context: _JsonContext, path: str) -> _Kind:
    declared = node.get("type")
    if declared is None:
        types: list[Any] = []
    elif isinstance(declared, str):
        types = [declared]
    elif _is_list(declared):
        types = list(declared)
    else:
        raise context.where.error(path, f"type {declared!r} must be a string or a list")
    types = [item for item in types if item != "null"]
    unknown = [item for item in types if item not in _JSON_TYPES]
    if unknown:
        raise context.where.error(
            path, f"unknown type {unknown[0]!r}; valid types: {', '.join(_JSON_TYPES)}"
        )
    if len(types) > 1 and ("object" in types or "array" in types):
        raise context.where.error(
            path, f"type {declared!r} mixes a container with other types; this is not supported"
        )
    properties = node.get("properties")
    if "object" in types or (not types and properties):
        # An object without declared properties is compared as one value.
        return "object" if properties else "scalar"
    if "array" in types or (not types and "items" in node):
        return "array"
    return "scalar"


def _json_method(
    node: Mapping[str, Any], context: _JsonContext, path: str
) -> tuple[_AnyMethod | None, str | None]:
    """The configured method and the key it came from (IDP first, then Stickler)."""
    method = _method_name(node.get(_IDP_METHOD), context.where, path, _IDP_METHOD)
    if method is not None:
        return method, _IDP_METHOD
    value = node.get(_STICKLER_COMPARATOR)
    if value is None:
        return None, None
    stickler = _STICKLER_LOOKUP.get(value.strip().casefold()) if isinstance(value, str) else None
    if stickler is None:
        raise context.where.error(
            path,
            f"unknown {_STICKLER_COMPARATOR} {value!r}; valid comparators: "
            f"{', '.join(_STICKLER_COMPARATORS)} (or {', '.join(_STICKLER_SHORT_NAMES)})",
        )
    return stickler, _STICKLER_COMPARATOR


def _optional_number(
    node: Mapping[str, Any],
    key: str,
    context: _JsonContext,
    path: str,
    *,
    high: float | None = 1.0,
    above_zero: bool = False,
) -> float | None:
    value = node.get(key)
    if value is None:
        return None
    return _number(value, context.where, path, key, high=high, above_zero=above_zero)


def _json_rule(
    node: Mapping[str, Any],
    method: _AnyMethod | None,
    context: _JsonContext,
    path: str,
) -> _ScalarRule:
    """The scalar rule ``node`` configures for ``method`` (a HUNGARIAN node has none)."""
    if method == "HUNGARIAN":
        return _ScalarRule()
    config = node.get(_STICKLER_CONFIG)
    if config is None:
        config = {}
    if not isinstance(config, Mapping):
        raise context.where.error(path, f"{_STICKLER_CONFIG} must be an object")

    threshold: float | None = None
    threshold_key = _IDP_THRESHOLD
    relative_tolerance: float | None = None
    fuzzy_scorer: FuzzyScorer | None = None
    date_order: DateOrder | None = None
    case_sensitive: bool | None = None
    if method == "NUMERIC_EXACT":
        # A tolerance, never Stickler's score threshold (see the module docstring).
        for key, source in (
            (_IDP_THRESHOLD, node),
            (_STICKLER_TOLERANCE, node),
            ("tolerance", config),
            ("absolute_tolerance", config),
        ):
            if source.get(key) is not None:
                label = key if source is node else f"{_STICKLER_CONFIG}.{key}"
                threshold = _number(source[key], context.where, path, label, high=None)
                threshold_key = label
                break
        if config.get("relative_tolerance") is not None:
            relative_tolerance = _number(
                config["relative_tolerance"],
                context.where,
                path,
                f"{_STICKLER_CONFIG}.relative_tolerance",
                high=None,
            )
    else:
        for key in (_IDP_THRESHOLD, _STICKLER_THRESHOLD):
            if node.get(key) is not None:
                threshold = _number(node[key], context.where, path, key)
                threshold_key = key
                break
        if method == "FUZZY" and config.get("method") is not None:
            fuzzy_scorer = _FUZZY_SCORERS.get(str(config["method"]))
            if fuzzy_scorer is None:
                raise context.where.error(
                    path,
                    f"unknown {_STICKLER_CONFIG}.method {config['method']!r}; "
                    f"valid scorers: {', '.join(_FUZZY_SCORERS)}",
                )
        if method == "DATE" and config.get("dayfirst") is not None:
            day_first = _config_flag(config, "dayfirst", context, path)
            date_order = "day_first" if day_first else "month_first"
        if method in ("EXACT", "NORMALIZED") and config.get("case_sensitive") is not None:
            case_sensitive = _config_flag(config, "case_sensitive", context, path)
    return _ScalarRule(
        method=method,
        threshold=threshold,
        threshold_key=threshold_key,
        relative_tolerance=relative_tolerance,
        fuzzy_scorer=fuzzy_scorer,
        date_order=date_order,
        case_sensitive=case_sensitive,
    )


def _config_flag(config: Mapping[str, Any], key: str, context: _JsonContext, path: str) -> bool:
    value = config[key]
    if not isinstance(value, bool):
        raise context.where.error(path, f"{_STICKLER_CONFIG}.{key} {value!r} must be true or false")
    return value


def _json_weight(node: Mapping[str, Any], context: _JsonContext, path: str) -> float | None:
    for key in (_IDP_WEIGHT, _STICKLER_WEIGHT):
        weight = _optional_number(node, key, context, path, high=None, above_zero=True)
        if weight is not None:
            return weight
    return None


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
    )


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
