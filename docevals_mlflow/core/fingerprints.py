"""Canonical JSON and its SHA-256: the one fingerprint used everywhere.

Every hash this package records (action instructions, evaluation specs, rubrics,
judge instructions, effective operation specs, checkpoints, reports) is
``sha256(canonical_json(value))``. Strings are hashed as JSON strings too, so a text
and a structure can never be confused and every hash can be recomputed from the
report with the same one-line helper.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
from collections.abc import Mapping
from decimal import Decimal
from pathlib import PurePath
from typing import Any

from pydantic import BaseModel

from docevals_mlflow.errors import InputError


def _jsonable(value: Any) -> Any:
    """Convert ``value`` to plain JSON types, rejecting what has no stable form."""
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InputError(f"{value!r} has no JSON representation", expected="a finite number")
        return value
    if isinstance(value, BaseModel):
        return _jsonable(value.model_dump(mode="json"))
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise InputError(
                    f"mapping key {key!r} is a {type(key).__name__}", expected="string keys"
                )
            out[key] = _jsonable(item)
        return out
    if isinstance(value, (list, tuple)):
        return [_jsonable(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_jsonable(item) for item in value), key=canonical_json)
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, PurePath):
        return value.as_posix()
    raise InputError(
        f"a value of type {type(value).__name__} cannot be fingerprinted",
        expected="JSON data (dict, list, str, number, bool, None) or a pydantic model",
    )


def canonical_json(value: Any) -> str:
    """Serialise ``value`` to canonical JSON: sorted keys, compact, UTF-8, finite numbers."""
    return json.dumps(
        _jsonable(value),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
    )


def sha256_json(value: Any) -> str:
    """Hex SHA-256 of the canonical JSON of ``value``."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def optional_sha256_json(value: Any) -> str | None:
    """Like :func:`sha256_json`, but ``None`` stays ``None`` (nothing to fingerprint)."""
    return None if value is None else sha256_json(value)


def sha256_bytes(data: bytes) -> str:
    """Hex SHA-256 of raw bytes (file contents)."""
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | PurePath, *, chunk_size: int = 1 << 20) -> str:
    """Hex SHA-256 of a file's bytes, read in chunks so large PDFs do not fill memory."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(chunk_size):
            digest.update(chunk)
    return digest.hexdigest()
