"""Extraction confidence per predicted field, from IDP ``explainability_info`` or a map."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from docevals_mlflow.core.paths import format_path, key_segment, parse_path
from docevals_mlflow.errors import InputError


def _as_confidence(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"confidence must be a number, got {value!r}", path=where)
    try:
        number = float(value)
    except OverflowError:  # an integer of hundreds of digits: no float holds it
        number = math.inf
    if not math.isfinite(number):
        shown = repr(value) if len(repr(value)) <= 24 else f"{repr(value)[:20]}..."
        raise InputError(f"confidence must be finite, got {shown}", path=where)
    return number


def _walk(node: Any, path: str, out: dict[str, float]) -> None:
    if isinstance(node, Mapping):
        if "confidence" in node and not isinstance(node["confidence"], (Mapping, list)):
            confidence = _as_confidence(node["confidence"], path)
            if confidence is not None:
                out[path] = confidence
            return
        for key, value in node.items():
            _walk(value, path + key_segment(str(key)), out)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            _walk(value, f"{path}[{index}]", out)
    elif isinstance(node, (int, float)) and not isinstance(node, bool) and path != "$":
        confidence = _as_confidence(node, path)
        if confidence is not None:
            out[path] = confidence


def confidence_map(
    *,
    explainability_info: Any = None,
    confidence: Mapping[str, Any] | None = None,
) -> dict[str, float]:
    """Confidence per predicted path (``$.a.b``, ``$.items[2].amount``).

    ``explainability_info`` mirrors the extracted data, with ``{"confidence": x, ...}``
    (or a bare number) at each leaf; IDP wraps it in a one-element list, which is
    unwrapped. ``confidence`` maps paths (any accepted notation, with or without
    ``$``) to numbers. Both may be given; the map wins on conflicts.
    """
    out: dict[str, float] = {}
    if explainability_info is not None:
        info = explainability_info
        if isinstance(info, list) and len(info) == 1 and isinstance(info[0], Mapping):
            info = info[0]
        _walk(info, "$", out)
    for key, value in (confidence or {}).items():
        path = format_path(parse_path(str(key)))
        number = _as_confidence(value, path)
        if number is not None:
            out[path] = number
    return out
