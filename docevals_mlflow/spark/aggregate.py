"""Aggregating Spark result rows into a :class:`BatchComparison`, with Spark.

Every figure is a sum of integer cells computed by Spark (``groupBy``/``sum``), and
macro F1 comes from exact per-document fractions, so the batch equals the one the
single-machine path builds from the same documents. Entries are ordered by where
they first appear in the input (the ``_order`` of the first document that has
them, then the position inside it), which is the order in which one machine
meets them; the report therefore lists classes, fields and lists identically.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from docevals_mlflow.errors import DocEvalsError, InputError
from docevals_mlflow.fields.batch import (
    MAX_UNDECIDED_REASONS,
    BatchComparison,
    ClassAggregate,
    DocumentSummary,
    FieldAggregate,
)
from docevals_mlflow.fields.compare import DocumentComparison, FieldInfo
from docevals_mlflow.fields.counts import Counts, ItemCounts
from docevals_mlflow.fields.processes import PortableNode
from docevals_mlflow.spark.columns import CELLS

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

INFO = ("method", "threshold", "discovered", "kind")


def _cell_sums(functions: Any) -> list[Any]:
    return [functions.sum(name).alias(name) for name in (*CELLS, "undecided")]


def _counts(row: Any) -> Counts:
    return Counts(*(int(row[name] or 0) for name in CELLS))


def first_failure(results: DataFrame) -> DocEvalsError | None:
    """The error to raise for these results, as one machine would raise it: the
    first document (in input order) that failed, or the second occurrence of a
    repeated id, whichever comes first; ``None`` when there is neither."""
    from pyspark.sql import functions as F

    # One pass in the usual case (no error, no repeated id); the details only when needed.
    summary = results.agg(
        F.count(F.lit(1)).alias("documents"),
        F.count_distinct("id").alias("ids"),
        F.min(F.when(F.col("_error").isNotNull(), F.col("_order"))).alias("failed"),
    ).first()
    assert summary is not None
    failed_order = summary["failed"]
    duplicate = None
    if summary["ids"] < summary["documents"]:
        repeated = results.groupBy("id").agg(F.count(F.lit(1)).alias("n")).where("n > 1")
        # The second occurrence of each repeated id; the earliest one is reported.
        duplicate = (
            results.join(repeated.select("id"), "id")
            .groupBy("id")
            .agg(F.sort_array(F.collect_list("_order")).getItem(1).alias("second"))
            .orderBy("second")
            .first()
        )
    if duplicate is not None and (failed_order is None or duplicate["second"] < failed_order):
        return InputError(f"duplicate document id {duplicate['id']!r}", record=duplicate["id"])
    if failed_order is not None:
        failed = results.where(F.col("_order") == failed_order).select("_error").first()
        assert failed is not None
        return rebuild_error(json.loads(failed["_error"]))
    return None


def rebuild_error(context: dict[str, Any]) -> DocEvalsError:
    """The :class:`DocEvalsError` an executor described with ``error.context()``."""
    from docevals_mlflow import errors

    kind = getattr(errors, context.pop("type"), None)
    if not (isinstance(kind, type) and issubclass(kind, DocEvalsError)):
        kind = DocEvalsError
    message = context.pop("message")
    error = kind.__new__(kind)
    DocEvalsError.__init__(error, message, **context)
    return error


@dataclass
class SparkBatchComparison(BatchComparison):
    """A batch aggregated by Spark; it may hold no per-document entries (when they
    were not collected), so it counts its documents itself."""

    counted: int = 0

    @property
    def document_count(self) -> int:
        """Documents compared."""
        return self.counted


def aggregate(
    results: DataFrame,
    batch: SparkBatchComparison,
    *,
    ordered: bool = True,
    collect_documents: bool = True,
) -> None:
    """Fill ``batch`` (created empty) with the figures of ``results``, computed by Spark.

    Three aggregations (per class and F1 denominator, per class and field, per list)
    and, with ``collect_documents``, one pass that streams a :class:`DocumentSummary`
    per document to the driver, in input order. ``ordered`` says the results are
    already in input order (partition by partition), which saves sorting them.
    """
    from pyspark.sql import functions as F

    ok = results.where(F.col("_error").isNull())
    _classes(ok, batch)
    _fields(ok, batch)

    items = ok.select("_order", F.explode("_items").alias("i")).select("_order", "i.*")
    for row in (
        items.groupBy("template")
        .agg(
            F.min(F.struct("_order", "position")).alias("first"),
            F.min_by("label", F.struct("_order", "position")).alias("label"),
            *(F.sum(name).alias(name) for name in ("matched", "missed", "extra")),
        )
        .orderBy("first")
        .collect()
    ):
        batch.lists[row["template"]] = ItemCounts(row["matched"], row["missed"], row["extra"])
        batch.list_labels[row["template"]] = row["label"]

    if batch.undecided:
        reasons = (
            ok.where(F.size("_reasons") > 0)
            .select("_order", F.posexplode("_reasons").alias("position", "reason"))
            .groupBy("reason")
            .agg(F.min(F.struct("_order", "position")).alias("first"))
            .orderBy("first")
            .limit(MAX_UNDECIDED_REASONS)
            .collect()
        )
        batch.undecided_reasons.extend(row["reason"] for row in reasons)

    batch.counted = sum(entry.documents for entry in batch.classes.values())
    if not collect_documents:
        return
    documents = ok.select("_order", "id", "class", "undecided", *CELLS)
    for row in _in_order(documents, ordered):
        batch.documents.append(
            DocumentSummary(
                row["id"],
                row["class"],
                _counts(row),
                {"": int(row["undecided"])} if row["undecided"] else {},
            )
        )


def _classes(ok: DataFrame, batch: BatchComparison) -> None:
    """Class aggregates and exact F1 parts, from one aggregation per class and F1
    denominator."""
    from pyspark.sql import functions as F

    rows = (
        ok.groupBy("class", "_f1_den")
        .agg(
            F.min("_order").alias("first"),
            F.count(F.lit(1)).alias("documents"),
            F.sum("_f1_num").alias("numerator"),
            F.min_by("configured", "_order").alias("configured"),
            *_cell_sums(F),
        )
        .orderBy("first")
        .collect()
    )
    for row in rows:
        entry = batch.classes.get(row["class"])
        if entry is None:  # rows come in order of first appearance
            entry = batch.classes[row["class"]] = ClassAggregate(row["class"], row["configured"])
        counts = _counts(row)
        entry.documents += row["documents"]
        entry.counts.add(counts)
        entry.undecided += int(row["undecided"] or 0)
        batch.counts.add(counts)
        batch.undecided += int(row["undecided"] or 0)
        denominator = int(row["_f1_den"])
        if denominator:
            numerator = int(row["numerator"])
            for parts in (batch.f1_parts, entry.f1_parts):
                parts[denominator] = parts.get(denominator, 0) + numerator
            entry.f1_documents += row["documents"]
            batch.f1_documents += row["documents"]


def _fields(ok: DataFrame, batch: BatchComparison) -> None:
    """Batch-wide entries per (template, method) and class entries per template, from
    one aggregation per (class, template, method)."""
    from pyspark.sql import functions as F

    order = F.struct("_order", "position")
    rows = (
        ok.select("_order", "class", F.explode("_cells").alias("c"))
        .select("_order", "class", "c.*")
        .groupBy("class", "template", "label")
        .agg(
            F.min(order).alias("first"),
            F.min_by(F.struct(*INFO), order).alias("info"),
            *_cell_sums(F),
        )
        .orderBy("first")
        .collect()
    )
    # In order of first appearance, so the first row of a key carries its info.
    for row in rows:
        counts, undecided = _counts(row), int(row["undecided"] or 0)
        key = (row["template"], row["label"])
        entry = batch.fields.get(key)
        if entry is None:
            batch.fields[key] = _field(row)
        else:
            entry.counts.add(counts)
            entry.undecided += undecided
        class_fields = batch.classes[row["class"]].fields
        entry = class_fields.get(row["template"])
        if entry is None:
            class_fields[row["template"]] = _field(row)
        else:
            entry.counts.add(counts)
            entry.undecided += undecided


def _field(row: Any) -> FieldAggregate:
    info = row["info"]
    entry = FieldAggregate(
        FieldInfo(
            row["template"],
            info["method"],
            row["label"],
            info["threshold"],
            info["discovered"],
            info["kind"],
        )
    )
    entry.counts = _counts(row)
    entry.undecided = int(row["undecided"] or 0)
    return entry


def _in_order(frame: DataFrame, ordered: bool) -> Iterator[Any]:
    """Rows of ``frame`` in input order, on the driver.

    Collected as Arrow where PySpark can (4.0 and later): a Python ``Row`` per
    document costs about 90 us on the driver, an Arrow table a small fraction of that
    (and less memory than the summaries built from it). With ``ordered``, the
    partitions already hold the input in order, so nothing is sorted.
    """
    if not ordered:
        frame = frame.orderBy("_order")
    to_arrow = getattr(frame, "toArrow", None)
    if to_arrow is None:  # PySpark before 4.0
        yield from frame.toLocalIterator(prefetchPartitions=True)
        return
    last = -1
    for batch in to_arrow().to_batches():
        for row in batch.to_pylist():
            if row["_order"] <= last:  # pragma: no cover - Spark keeps partition order
                raise AssertionError("results are not in input order")
            last = row["_order"]
            yield row


def documents_with_rows(results: DataFrame, *, ordered: bool) -> Iterator[DocumentComparison]:
    """Every compared document with its cells and rows, in input order (for reports)."""
    from pyspark.sql import functions as F

    nodes: dict[tuple[Any, ...], PortableNode] = {}
    frame = results.where(F.col("_error").isNull()).select(
        "_order", "id", "class", "configured", "undecided", "_cells", "_items", "rows", "_reasons"
    )
    for row in _in_order(frame, ordered):
        fields = {}
        cells = {}
        for cell in row["_cells"]:
            template = cell["template"]
            cells[template] = [int(cell[name]) for name in CELLS]
            fields[template] = FieldInfo(
                template,
                cell["method"],
                cell["label"],
                cell["threshold"],
                cell["discovered"],
                cell["kind"],
            )
        items = {}
        for item in row["_items"]:
            items[item["template"]] = [
                int(item["matched"]),
                int(item["missed"]),
                int(item["extra"]),
            ]
            fields.setdefault(
                item["template"],
                FieldInfo(item["template"], "HUNGARIAN", item["label"], None, False, "list"),
            )
        rows = []
        for leaf in row["rows"] or ():
            key = (leaf["template"], leaf["method"], leaf["threshold"], leaf["discovered"])
            node = nodes.get(key)
            if node is None:
                node = nodes[key] = PortableNode(*key)
            rows.append(
                (
                    leaf["path"],
                    node,
                    json.loads(leaf["expected"]),
                    json.loads(leaf["actual"]),
                    leaf["score"],
                    leaf["outcome"],
                    leaf["confidence"],
                    leaf["reason"],
                )
            )
        yield DocumentComparison(
            id=row["id"],
            document_class=row["class"],
            configured=row["configured"],
            cells=cells,
            items=items,
            fields=fields,
            rows=rows if row["rows"] is not None else None,
            undecided={"": int(row["undecided"])} if row["undecided"] else {},
            undecided_reasons=list(row["_reasons"] or ()),
        )
