"""The columns of a Spark field comparison, as Arrow types and as Spark DDL.

One result row per document. Public columns: ``id``, ``class``, ``configured``, the
cells ``tp fa fd fn tn``, ``undecided``, the metrics ``precision recall f1 accuracy
far fdr`` and (with rows kept) ``rows``, one struct per leaf comparison. Columns
starting with ``_`` carry what the aggregation needs: the document's position in
the input (``_order``), its F1 as an exact fraction (``_f1_num / _f1_den``), its
cells per field template (``_cells``, with ``apart`` set on a discovered field left
out of the document's figures, and the template's ``unparsed`` values), the six
item counts per list with the list's description (``_items``), reasons for
undecided comparisons (``_reasons``), for a document whose ground truth has the
wrong shape its :func:`~docevals_mlflow.fields.shapes.invalid_example` (``_invalid``,
JSON; such a document is not scored) and, for a document that could not be
compared, the error (``_error``, JSON of :meth:`DocEvalsError.context`).

The cells ``tp fa fd fn tn`` of a document are its figures: discovered fields left
out (``apart``) are not in them.

In ``rows``, ``expected`` and ``actual`` are JSON text (``"0123"`` and ``123`` stay
apart), like every value that is not one type across documents.
"""

from __future__ import annotations

from typing import Any

from docevals_mlflow.fields.counts import ITEM_FIELDS

INPUT_COLUMNS = ("_order", "id", "class", "expected", "predicted", "confidence", "explainability")
"""The columns the executors read, in order (renamed from the caller's)."""

METRICS = ("precision", "recall", "f1", "accuracy", "far", "fdr")
CELLS = ("tp", "fa", "fd", "fn", "tn")
ITEMS = ITEM_FIELDS
"""A list's item counts, in :class:`~docevals_mlflow.fields.counts.ItemCounts` order."""
INFO = ("method", "threshold", "discovered", "kind")
"""What describes a field template besides its name and label (see ``FieldInfo``)."""


def result_schema() -> Any:
    """The Arrow schema of result rows (pyarrow imported on first use)."""
    import pyarrow as pa

    count = pa.int64()
    described = _template_fields(pa)
    cell = pa.struct(
        [
            *described,
            ("apart", pa.bool_()),
            *((name, count) for name in CELLS),
            ("undecided", count),
            ("unparsed", count),
        ]
    )
    item = pa.struct([*described, *((name, count) for name in ITEMS)])
    return pa.schema(
        [
            ("_order", count),
            ("id", pa.string()),
            ("class", pa.string()),
            ("configured", pa.bool_()),
            *((name, count) for name in CELLS),
            ("undecided", count),
            *((name, pa.float64()) for name in METRICS),
            ("_f1_num", count),
            ("_f1_den", count),
            ("_cells", pa.list_(cell)),
            ("_items", pa.list_(item)),
            ("rows", pa.list_(_row_type(pa))),
            ("_reasons", pa.list_(pa.string())),
            ("_invalid", pa.string()),
            ("_error", pa.string()),
        ]
    )


def _template_fields(pa: Any) -> list[tuple[str, Any]]:
    """How a field or list template is described in a document's cells or items."""
    return [
        ("position", pa.int32()),
        ("template", pa.string()),
        ("label", pa.string()),
        ("method", pa.string()),
        ("threshold", pa.float64()),
        ("discovered", pa.bool_()),
        ("kind", pa.string()),
    ]


def _row_type(pa: Any) -> Any:
    """One report row of a document."""
    return pa.struct(
        [
            ("path", pa.string()),
            ("template", pa.string()),
            ("method", pa.string()),
            ("threshold", pa.float64()),
            ("expected", pa.string()),
            ("actual", pa.string()),
            ("score", pa.float64()),
            ("outcome", pa.string()),
            ("matched", pa.bool_()),
            ("confidence", pa.float64()),
            ("discovered", pa.bool_()),
            ("reason", pa.string()),
        ]
    )


def spark_ddl(schema: Any) -> str:
    """The Spark DDL string of an Arrow schema (the types used here only)."""
    return ", ".join(f"`{field.name}` {_ddl_type(field.type)}" for field in schema)


def _ddl_type(arrow_type: Any) -> str:
    import pyarrow as pa

    if pa.types.is_int64(arrow_type):
        return "bigint"
    if pa.types.is_int32(arrow_type):
        return "int"
    if pa.types.is_string(arrow_type):
        return "string"
    if pa.types.is_boolean(arrow_type):
        return "boolean"
    if pa.types.is_float64(arrow_type):
        return "double"
    if pa.types.is_list(arrow_type):
        return f"array<{_ddl_type(arrow_type.value_type)}>"
    if pa.types.is_struct(arrow_type):
        inner = ", ".join(
            f"`{arrow_type.field(i).name}`: {_ddl_type(arrow_type.field(i).type)}"
            for i in range(arrow_type.num_fields)
        )
        return f"struct<{inner}>"
    raise TypeError(f"no Spark type for {arrow_type}")  # pragma: no cover - fixed schema
