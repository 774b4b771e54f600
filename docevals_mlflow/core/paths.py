"""Field paths: ``$.items[0].code`` and ``$['a.b']`` as unambiguous tuples.

A path is a tuple of segments: ``str`` for an object key, ``int`` for a list index.
Formatting uses dot notation where it cannot be misread and bracket-quoted notation
otherwise, so ``{"a.b": 1}`` (``$['a.b']``) and ``{"a": {"b": 1}}`` (``$.a.b``) never
collide. Parsing accepts both notations, with or without the leading ``$``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping
from typing import Any

from docevals_mlflow.errors import InputError

Segment = str | int
FieldPath = tuple[Segment, ...]

_NEEDS_QUOTES = frozenset(".[]'\"\\")
_INDEX = re.compile(r"[0-9]+")


@functools.lru_cache(maxsize=4096)
def _dot_safe(key: str) -> bool:
    return (
        bool(key)
        and key == key.strip()
        and not key.startswith("$")
        and not any(char in _NEEDS_QUOTES for char in key)
    )


@functools.lru_cache(maxsize=65536)
def key_segment(key: str) -> str:
    """One object key as path text: ``.key`` where unambiguous, else ``['k.e.y']``."""
    if _dot_safe(key):
        return f".{key}"
    escaped = key.replace("\\", "\\\\").replace("'", "\\'")
    return f"['{escaped}']"


@functools.lru_cache(maxsize=65536)
def format_path(path: FieldPath) -> str:
    """Render a path tuple as text; :func:`parse_path` is its exact inverse."""
    return "$" + "".join(
        f"[{segment}]" if isinstance(segment, int) else key_segment(segment) for segment in path
    )


def parse_path(text: str) -> FieldPath:
    """Parse ``$.a.b``, ``$.items[0].code``, ``$['a.b']`` or ``items[0].code``.

    Raises:
        InputError: the text is not a valid path (the message gives the position).
    """
    if not isinstance(text, str):
        raise InputError(f"path must be text, got {type(text).__name__}")
    raw = text.strip()
    if not raw:
        raise InputError("empty field path", expected="a path such as $.total")
    # Columns in messages count in the text as the user wrote it.
    offset = len(text) - len(text.lstrip())
    if not raw.startswith("$"):
        prefix = "$" if raw.startswith("[") else "$."
        raw = prefix + raw
        offset -= len(prefix)
    try:
        return _parse_segments(raw)
    except _Syntax as exc:
        raise InputError(
            f"invalid field path {text!r} (column {exc.position + offset + 1}): {exc.problem}"
        ) from None


class _Syntax(Exception):
    def __init__(self, position: int, problem: str) -> None:
        super().__init__(problem)
        self.position, self.problem = position, problem


def _parse_segments(raw: str) -> FieldPath:
    pos = 1
    segments: list[Segment] = []
    length = len(raw)
    while pos < length:
        char = raw[pos]
        if char == ".":
            start = pos + 1
            end = start
            while end < length and raw[end] not in ".[":
                end += 1
            key = raw[start:end]
            if not key:
                raise _Syntax(start, "empty key after '.'")
            segments.append(key)
            pos = end
        elif char == "[":
            pos = _parse_bracket(raw, pos, segments)
        else:
            raise _Syntax(pos, f"unexpected {char!r}")
    return tuple(segments)


def _parse_bracket(raw: str, pos: int, segments: list[Segment]) -> int:
    length = len(raw)
    inner = pos + 1
    if inner < length and raw[inner] in "'\"":
        quote = raw[inner]
        chars: list[str] = []
        cursor = inner + 1
        while cursor < length:
            char = raw[cursor]
            if char == "\\" and cursor + 1 < length:
                chars.append(raw[cursor + 1])
                cursor += 2
                continue
            if char == quote:
                break
            chars.append(char)
            cursor += 1
        else:
            raise _Syntax(inner, "unterminated quoted key")
        if cursor + 1 >= length or raw[cursor + 1] != "]":
            raise _Syntax(cursor + 1, "expected ']' after quoted key")
        segments.append("".join(chars))
        return cursor + 2
    close = raw.find("]", inner)
    if close < 0:
        raise _Syntax(pos, "unclosed '['")
    body = raw[inner:close].strip()
    if not _INDEX.fullmatch(body):
        raise _Syntax(inner, f"list index must be a non-negative integer, got {body!r}")
    segments.append(int(body))
    return close + 1


def iter_leaves(value: Any, prefix: FieldPath = ()) -> Iterator[tuple[FieldPath, Any]]:
    """Yield ``(path, leaf)`` for every scalar, empty list and empty object in ``value``."""
    if isinstance(value, Mapping):
        if not value:
            yield prefix, value
            return
        for key, item in value.items():
            yield from iter_leaves(item, (*prefix, str(key)))
    elif isinstance(value, (list, tuple)):
        if not value:
            yield prefix, value
            return
        for index, item in enumerate(value):
            yield from iter_leaves(item, (*prefix, index))
    else:
        yield prefix, value


def lookup(value: Any, path: FieldPath) -> tuple[bool, Any]:
    """Follow ``path`` into ``value``; returns ``(found, value_at_path)``."""
    current = value
    for segment in path:
        if isinstance(segment, int):
            if isinstance(current, (list, tuple)) and 0 <= segment < len(current):
                current = current[segment]
                continue
            return False, None
        if isinstance(current, Mapping) and segment in current:
            current = current[segment]
            continue
        return False, None
    return True, current
