"""Expected field values ("claims") read from an exact-comparable reference."""

from __future__ import annotations

from typing import Any, NamedTuple

from docevals_mlflow.core.artifacts import PATH_COLUMNS, VALUE_COLUMNS, ReferenceArtifact
from docevals_mlflow.core.paths import FieldPath, format_path, iter_leaves, parse_path
from docevals_mlflow.errors import InputError


class ExpectedClaim(NamedTuple):
    """One expected value at one path, and where it came from."""

    path: FieldPath
    expected: Any
    reference_id: str
    row: int | None
    """1-based data row for path tables; ``None`` for flattened JSON."""


def reference_claims(reference: ReferenceArtifact) -> list[ExpectedClaim]:
    """The expected leaves of an exact-comparable reference.

    Path tables give one claim per row (``path``/``field_path`` and
    ``expected``/``expected_value``/``value``); JSON and, in ``exact`` mode, ordinary
    tables are flattened to their leaves.

    Raises:
        InputError: a path-table row has an invalid or duplicate path.
    """
    if reference.content_format != "path_table":
        return [
            ExpectedClaim(path, value, reference.id, None)
            for path, value in iter_leaves(reference.content)
        ]
    claims: list[ExpectedClaim] = []
    seen: dict[FieldPath, int] = {}
    for number, row in enumerate(reference.content, start=1):
        path_text = next(row[column] for column in PATH_COLUMNS if column in row)
        value = next(row[column] for column in VALUE_COLUMNS if column in row)
        try:
            path = parse_path(path_text)
        except InputError as exc:
            raise InputError(exc.message, source=reference.path, record=f"row {number}") from None
        if path in seen:
            raise InputError(
                f"duplicate path {format_path(path)} (first given in row {seen[path]})",
                source=reference.path,
                record=f"row {number}",
            )
        seen[path] = number
        claims.append(ExpectedClaim(path, value, reference.id, number))
    return claims
