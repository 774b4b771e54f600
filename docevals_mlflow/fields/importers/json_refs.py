"""``$ref`` resolution and schema normalisation for the JSON Schema importer.

Local ``$ref`` s are resolved; keys written beside a ``$ref`` override the target's.
Nullable forms (``["string", "null"]``, ``anyOf`` of a schema and ``null``) are
unwrapped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import unquote

from docevals_mlflow.fields.importers.common import _is_list, _Where

_Kind = Literal["scalar", "object", "array"]

_JSON_SCALAR_TYPES = ("string", "number", "integer", "boolean", "null")
_JSON_TYPES = (*_JSON_SCALAR_TYPES, "object", "array")


@dataclass(frozen=True)
class _JsonContext:
    """Where errors are reported, and the documents ``$ref`` pointers are resolved in."""

    where: _Where
    roots: tuple[Mapping[str, Any], ...]


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
