"""Approved path-table rows back to the document they describe.

Approved ground truth is kept as rows (``{"path": "$.items[0].sku", "expected": "X"}``)
because that is how reviewers decide field by field. A field comparison
(``docevals fields``) compares whole documents, so :func:`rows_to_document` rebuilds
the nested value: object keys become mappings, list indexes become lists. Rows for
list items may skip indexes (an omitted item); the gaps are ``None``, which the field
comparison treats as empty.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from docevals_mlflow.core.artifacts import PATH_COLUMNS, VALUE_COLUMNS
from docevals_mlflow.core.paths import FieldPath, format_path, parse_path
from docevals_mlflow.errors import InputError

_MISSING = object()


def _cell(row: Mapping[str, Any], columns: tuple[str, ...], number: int, source: str) -> Any:
    for column in columns:
        if column in row:
            return row[column]
    raise InputError(
        "row has no " + "/".join(columns) + " column",
        source=source,
        record=f"row {number}",
    )


def _container(segment: str | int) -> Any:
    return [] if isinstance(segment, int) else {}


def rows_to_document(rows: Iterable[Mapping[str, Any]], *, source: str = "rows") -> Any:
    """The nested document whose leaves are ``rows`` (``path``/``expected`` pairs).

    ``$`` alone (the whole document is one value) is accepted as the only row.

    Raises:
        InputError: a path is invalid, repeated, or conflicts with another row (say
            ``$.a`` as a value and ``$.a.b`` below it); the message names the row.
    """
    root: Any = _MISSING
    seen: dict[FieldPath, int] = {}
    for number, row in enumerate(rows, start=1):
        text = _cell(row, PATH_COLUMNS, number, source)
        value = _cell(row, VALUE_COLUMNS, number, source)
        try:
            path = parse_path(text)
        except InputError as exc:
            raise InputError(exc.message, source=source, record=f"row {number}") from None
        if path in seen:
            raise InputError(
                f"duplicate path {format_path(path)} (first given in row {seen[path]})",
                source=source,
                record=f"row {number}",
            )
        seen[path] = number
        if not path:
            if root is not _MISSING:
                raise _conflict(path, number, source)
            root = value
            continue
        if root is _MISSING:
            root = _container(path[0])
        _place(root, path, value, number, source)
    return {} if root is _MISSING else _fill_gaps(root)


def _place(root: Any, path: FieldPath, value: Any, number: int, source: str) -> None:
    node = root
    for depth, segment in enumerate(path):
        last = depth == len(path) - 1
        if isinstance(segment, int):
            if not isinstance(node, list):
                raise _conflict(path[: depth + 1], number, source)
            while len(node) <= segment:
                node.append(_MISSING)
            current = node[segment]
        else:
            if not isinstance(node, dict):
                raise _conflict(path[: depth + 1], number, source)
            current = node.get(segment, _MISSING)
        if last:
            if current is not _MISSING:
                raise _conflict(path, number, source)
            node[segment] = value
            break
        if current is _MISSING:
            current = _container(path[depth + 1])
            node[segment] = current
        elif not isinstance(current, (list, dict)) or (
            isinstance(current, list) != isinstance(path[depth + 1], int)
        ):
            raise _conflict(path[: depth + 1], number, source)
        node = current


def _fill_gaps(value: Any) -> Any:
    # Placeholders mark list slots no row filled (an omitted item): ``None``.
    if isinstance(value, list):
        for index, item in enumerate(value):
            if item is _MISSING:
                value[index] = None
            else:
                _fill_gaps(item)
    elif isinstance(value, dict):
        for item in value.values():
            _fill_gaps(item)
    return value


def _conflict(path: FieldPath, number: int, source: str) -> InputError:
    return InputError(
        f"path {format_path(path)} conflicts with an earlier row (a value and a "
        "container, or a list and an object, at the same place)",
        source=source,
        record=f"row {number}",
    )
