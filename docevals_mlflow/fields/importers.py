"""Schema importers: the IDP configuration format, JSON Schema with evaluation
extensions, and schema inference from ground-truth documents.

**IDP configuration** (``classes → attributes``). ``attributeType`` is ``simple``
(the default), ``group`` (``groupAttributes``) or ``list``
(``listItemTemplate.itemAttributes``). Choices made where the format is loose:

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

**JSON Schema** (one class schema, ``{"classes": [...]}``, or ``oneOf``/``anyOf`` of
``$ref`` s into ``$defs``). Local ``$ref`` s are resolved; keys written beside a
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

**Inference** (:func:`infer_class_schema`) applies the IDP rules for classes without
configuration: text FUZZY 0.85, numbers NUMERIC_EXACT with tolerance 0.01, booleans
EXACT.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal, TypeGuard
from urllib.parse import unquote

from docevals_mlflow.core.values import as_number
from docevals_mlflow.errors import InputError
from docevals_mlflow.fields.schema import (
    DEFAULT_MATCH_THRESHOLD,
    ClassSchema,
    DateOrder,
    DocumentSchema,
    FieldSpec,
    FuzzyScorer,
    Method,
)

_AnyMethod = Method | Literal["HUNGARIAN"]
_Kind = Literal["scalar", "object", "array"]

# Spelled out rather than derived so mypy sees each value as the Literal it is.
_IDP_METHODS: dict[str, _AnyMethod] = {
    "EXACT": "EXACT",
    "NUMERIC_EXACT": "NUMERIC_EXACT",
    "FUZZY": "FUZZY",
    "HUNGARIAN": "HUNGARIAN",
    "SEMANTIC": "SEMANTIC",
    "LLM": "LLM",
    "LEVENSHTEIN": "LEVENSHTEIN",
    "DATE": "DATE",
    "NORMALIZED": "NORMALIZED",
}
_HUNGARIAN_COMPARATORS: dict[str, Method] = {
    "EXACT": "EXACT",
    "FUZZY": "FUZZY",
    "NUMERIC": "NUMERIC_EXACT",
}
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
_ATTRIBUTE_TYPES = ("simple", "group", "list")
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

# A list without a configured threshold gets the native pairing threshold, recorded
# explicitly. The IDP's 0.8 is not reused: Stickler always pairs items and applies
# 0.8 to call a *paired* object right or wrong, while here the threshold decides
# pairing itself, and 0.5 is what reproduces "the item was found, one attribute is
# wrong" (see docs/field-methods.md).
IDP_DEFAULT_MATCH_THRESHOLD = DEFAULT_MATCH_THRESHOLD
_INFERRED_TEXT_THRESHOLD = 0.85
_INFERRED_NUMBER_TOLERANCE = 0.01


# --- shared helpers -----------------------------------------------------------------


@dataclass(frozen=True)
class _Where:
    """The class an error belongs to, and what its fields are called in the source."""

    class_name: str | None
    noun: Literal["attribute", "property"]

    def error(self, path: str | None, message: str, *, expected: str | None = None) -> InputError:
        """An :class:`InputError` whose message names the class, the field path and ``message``."""
        parts = []
        if self.class_name is not None:
            parts.append(f"class {self.class_name!r}")
        if path:
            parts.append(f"{self.noun} {path!r}" if self.class_name is not None else path)
        prefix = ", ".join(parts)
        return InputError(
            f"{prefix}: {message}" if prefix else message,
            record=self.class_name,
            path=path,
            expected=expected,
        )


def _range_text(low: float, high: float | None, *, above: bool) -> str:
    if high is not None:
        return f"a number from {low:g} to {high:g}"
    return f"a number above {low:g}" if above else f"a number of at least {low:g}"


def _number(
    value: Any,
    where: _Where,
    path: str | None,
    key: str,
    *,
    high: float | None = 1.0,
    above_zero: bool = False,
) -> float:
    """``value`` as a float in ``[0, high]`` (``(0, ...)`` with ``above_zero``), or an error."""
    expected = _range_text(0.0, high, above=above_zero)
    number = as_number(value)
    if number is None:
        raise where.error(path, f"{key} {value!r} is not a number", expected=expected)
    if number < 0 or (above_zero and number == 0) or (high is not None and number > high):
        raise where.error(path, f"{key} {value!r} is out of range", expected=expected)
    return number


def _text(value: Any) -> str | None:
    # Descriptions only inform readers of the schema; a non-text one is not worth failing on.
    return value if isinstance(value, str) and value else None


def _is_list(value: Any) -> TypeGuard[list[Any] | tuple[Any, ...]]:
    return isinstance(value, (list, tuple))


def _schema_id(data: Mapping[str, Any], keys: tuple[str, ...], default: str) -> str:
    for key in keys:
        value = data.get(key)
        if value is None:
            continue
        if not isinstance(value, str) or not value.strip():
            raise InputError(f"{key} {value!r} must be non-empty text", path=key)
        return value
    return default


def _scalar_spec(
    method: Method | None,
    threshold: float | None,
    where: _Where,
    path: str,
    key: str,
    *,
    description: str | None = None,
    weight: float | None = None,
    relative_tolerance: float | None = None,
    fuzzy_scorer: FuzzyScorer | None = None,
    date_order: DateOrder | None = None,
    case_sensitive: bool | None = None,
) -> FieldSpec:
    # Checked here (not only by FieldSpec) so the error names the class, path and key.
    if threshold is not None and method != "NUMERIC_EXACT" and threshold > 1:
        raise where.error(
            path,
            f"{key} {threshold:g} is out of range for {method or 'the default method'}",
            expected=_range_text(0.0, 1.0, above=False),
        )
    options: dict[str, Any] = {
        "method": method,
        "threshold": threshold,
        "description": description,
        "weight": weight,
        "relative_tolerance": relative_tolerance,
        "fuzzy_scorer": fuzzy_scorer,
        "date_order": date_order,
        "case_sensitive": case_sensitive,
    }
    # Unset options are left out so the model's own defaults apply.
    return FieldSpec(**{name: value for name, value in options.items() if value is not None})


# --- IDP configuration ----------------------------------------------------------------


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


def _method_name(value: Any, where: _Where, path: str, key: str) -> _AnyMethod | None:
    """An IDP evaluation method name (any case), or ``None`` when not set."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    method = _IDP_METHODS.get(value.strip().upper()) if isinstance(value, str) else None
    if method is None:
        raise where.error(
            path, f"unknown {key} {value!r}; valid methods: {', '.join(_IDP_METHODS)}"
        )
    return method


def _idp_comparator(attribute: Mapping[str, Any], where: _Where, path: str) -> Method | None:
    value = attribute.get("hungarian_comparator")
    if value is None:
        return None
    comparator = (
        _HUNGARIAN_COMPARATORS.get(value.strip().upper()) if isinstance(value, str) else None
    )
    if comparator is None:
        raise where.error(
            path,
            f"unknown hungarian_comparator {value!r}; "
            f"valid comparators: {', '.join(_HUNGARIAN_COMPARATORS)}",
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
    tolerance_or_score = (
        None
        if threshold is None
        else _number(
            threshold,
            where,
            path,
            "evaluation_threshold",
            # For NUMERIC_EXACT the threshold is an absolute tolerance, not a score.
            high=None if method == "NUMERIC_EXACT" else 1.0,
        )
    )
    return _scalar_spec(
        method, tolerance_or_score, where, path, "evaluation_threshold", description=description
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
    comparator: Method | None,
    threshold: Any,
    where: _Where,
    path: str,
    description: str | None,
    item_description: str | None,
) -> FieldSpec:
    item_path = f"{path}[]"
    if method is None or method == "HUNGARIAN":
        item_method: Method = comparator or "EXACT"
        score = (
            None if threshold is None else _number(threshold, where, path, "evaluation_threshold")
        )
        # The IDP reads a HUNGARIAN threshold only for its FUZZY comparator.
        item_threshold = score if item_method == "FUZZY" else None
    else:
        item_method = method
        item_threshold = (
            None
            if threshold is None
            else _number(
                threshold,
                where,
                path,
                "evaluation_threshold",
                high=None if method == "NUMERIC_EXACT" else 1.0,
            )
        )
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


# --- JSON Schema ----------------------------------------------------------------------


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


# --- inference from ground truth ------------------------------------------------------


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
