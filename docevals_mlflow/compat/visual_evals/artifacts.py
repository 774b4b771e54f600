"""The seed's ``visual_evals.artifacts``: references from files and values, predictions,
and the seed's claim helpers (on the package's escaped field paths)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from docevals_mlflow.core.artifacts import (
    ReferenceArtifact,
    artifact_from_path,
    artifact_from_value,
)
from docevals_mlflow.core.claims import reference_claims
from docevals_mlflow.core.datafiles import load_json_file
from docevals_mlflow.core.paths import format_path
from docevals_mlflow.errors import InputError

__all__ = [
    "artifact_from_path",
    "artifact_from_value",
    "exact_structured_claims",
    "flatten_leaves",
    "json_value",
    "load_prediction",
    "structured_claims",
]


def load_prediction(path: str | os.PathLike[str]) -> Any:
    """Read a prediction from a JSON file (the only format the seed reads).

    Raises:
        InputFileNotFoundError: the file does not exist.
        InputError: the file is not ``.json`` or not valid JSON.
    """
    file_path = Path(path)
    if file_path.suffix.lower() != ".json":
        raise InputError(
            "predictions must be JSON files", source=str(file_path), expected="a .json file"
        )
    return load_json_file(file_path, what="prediction")


def flatten_leaves(value: Any, path: str = "$") -> list[tuple[str, Any]]:
    """The leaves of JSON-like data as ``(path, value)``, keys in sorted order (the
    seed's order). Paths are the package's: keys with ``.``, ``[``, ``]`` or quotes
    are bracket-quoted, so ``{"a.b": 1}`` and ``{"a": {"b": 1}}`` stay apart."""
    if isinstance(value, dict):
        return [
            leaf
            for key in sorted(value, key=str)
            for leaf in flatten_leaves(value[key], _child(path, str(key)))
        ]
    if isinstance(value, list):
        return [
            leaf
            for index, item in enumerate(value)
            for leaf in flatten_leaves(item, f"{path}[{index}]")
        ]
    return [(path, value)]


def _child(path: str, key: str) -> str:
    """``path`` extended by ``key`` the way the package writes field paths."""
    # format_path of a one-key path is "$.key" or "$['key']": its tail is the step.
    return path + format_path((key,))[1:]


def structured_claims(reference: ReferenceArtifact) -> list[tuple[str, Any]]:
    """Every claim of a structured reference (path-table rows, else all leaves),
    whatever its comparison mode: what a judge may match by meaning."""
    if reference.kind != "structured":
        return []
    if reference.content_format == "path_table":
        return [(format_path(claim.path), claim.expected) for claim in reference_claims(reference)]
    return flatten_leaves(reference.content)


def exact_structured_claims(reference: ReferenceArtifact) -> list[tuple[str, Any]]:
    """The claims exact metrics compare: those of an exact-comparable reference
    (a path table, JSON, or any table in ``exact`` mode), else none."""
    if reference.kind != "structured" or not reference.exact_comparable:
        return []
    return [(format_path(claim.path), claim.expected) for claim in reference_claims(reference)]


def json_value(value: Any) -> str:
    """A stable JSON text of ``value`` (sorted keys, non-ASCII kept)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
