"""Aggregating Spark result rows into a :class:`BatchComparison`, with Spark.

Every figure is a sum of integer cells computed by Spark (``groupBy``/``sum``), and
macro F1 comes from exact per-document fractions, so the batch equals the one the
single-machine path builds from the same documents. Entries are ordered by where
they first appear in the input (the ``_order`` of the first document that has
them, then the position inside it), which is the order in which one machine
meets them; the report therefore lists classes, fields and lists identically.

Documents whose ground truth has the wrong shape (``_invalid``) are counted apart and
left out of every other figure; discovered fields left out of the document figures
(``apart`` cells) are summed into the batch's ``discovered`` entries only.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

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
from docevals_mlflow.fields.shapes import MAX_INVALID_EXAMPLES
from docevals_mlflow.spark.columns import CELLS, INFO, ITEMS

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

Locate = Callable[[Sequence[tuple[int, str]]], list[tuple[str | None, str | None]]]
"""Where documents sit in their input: ``(_order, id)`` pairs → ``(source, place)``
each (the file, and ``line N`` or ``row N``), for the wrong-shaped ones a report
describes."""


def _cell_sums(functions: Any) -> list[Any]:
    return [functions.sum(name).alias(name) for name in (*CELLS, "undecided", "unparsed")]


def _counts(row: Any) -> Counts:
    return Counts(*(int(row[name] or 0) for name in CELLS))


class ResultCheck(NamedTuple):
    """What the driver learns from one pass over the results before aggregating."""

    failure: DocEvalsError | None
    """The error to raise (see :func:`check_results`), or ``None``."""
    invalid: int
    """Documents whose ground truth has the wrong shape (not scored)."""


def check_results(results: DataFrame) -> ResultCheck:
    """The error to raise for these results, as one machine would raise it (the
    first document, in input order, that failed, or the second occurrence of a
    repeated id, whichever comes first; ``None`` when there is neither), and how
    many documents have ground truth of the wrong shape."""
    from pyspark.sql import functions as F

    # One pass in the usual case (no error, no repeated id); the details only when needed.
    summary = results.agg(
        F.count(F.lit(1)).alias("documents"),
        F.count_distinct("id").alias("ids"),
        F.min(F.when(F.col("_error").isNotNull(), F.col("_order"))).alias("failed"),
        F.count(F.when(F.col("_error").isNull(), F.col("_invalid"))).alias("invalid"),
    ).first()
    assert summary is not None
    return ResultCheck(_failure(results, summary), int(summary["invalid"] or 0))


def _failure(results: DataFrame, summary: Any) -> DocEvalsError | None:
    from pyspark.sql import functions as F

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


def scored(results: DataFrame) -> DataFrame:
    """The documents that count: compared, and with ground truth of the right shape."""
    from pyspark.sql import functions as F

    return results.where(F.col("_error").isNull() & F.col("_invalid").isNull())


def invalid_examples(results: DataFrame, locate: Locate | None = None) -> list[dict[str, Any]]:
    """The first :data:`MAX_INVALID_EXAMPLES` wrong-shaped documents, in input order,
    as one machine describes them (``source`` and ``line`` from ``locate``)."""
    from pyspark.sql import functions as F

    rows = (
        results.where(F.col("_error").isNull() & F.col("_invalid").isNotNull())
        .select("_order", "id", "_invalid")
        .orderBy("_order")
        .limit(MAX_INVALID_EXAMPLES)
        .collect()
    )
    examples = [json.loads(row["_invalid"]) for row in rows]
    if locate is not None and rows:
        places = locate([(row["_order"], row["id"]) for row in rows])
        for example, (source, place) in zip(examples, places, strict=True):
            example["source"], example["line"] = source, place
    return examples


def aggregate(
    results: DataFrame,
    batch: SparkBatchComparison,
    *,
    ordered: bool = True,
    collect_documents: bool = True,
) -> None:
    """Fill ``batch`` (created empty, its wrong-shaped documents already counted) with
    the figures of ``results``, computed by Spark.

    Three aggregations (per class and F1 denominator, per class and field, per list)
    and, with ``collect_documents``, one pass that streams a :class:`DocumentSummary`
    per document to the driver, in input order. ``ordered`` says the results are
    already in input order (partition by partition), which saves sorting them.
    """
    from pyspark.sql import functions as F

    ok = scored(results)
    _classes(ok, batch)
    _fields(ok, batch)
    _lists(ok, batch)

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
            *(F.sum(name).alias(name) for name in (*CELLS, "undecided")),
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
        # Every undecided comparison counts overall; the class's own (without
        # discovered fields left out) come from its fields.
        batch.undecided += int(row["undecided"] or 0)
        batch.counts.add(counts)
        denominator = int(row["_f1_den"])
        if denominator:
            numerator = int(row["numerator"])
            for parts in (batch.f1_parts, entry.f1_parts):
                parts[denominator] = parts.get(denominator, 0) + numerator
            entry.f1_documents += row["documents"]
            batch.f1_documents += row["documents"]


def _fields(ok: DataFrame, batch: BatchComparison) -> None:
    """Batch-wide entries per (template, method) and class entries per template, from
    one aggregation per (class, template, method); discovered fields left out of the
    figures (``apart``) go to the batch's discovered entries only."""
    from pyspark.sql import functions as F

    order = F.struct("_order", "position")
    rows = (
        ok.select("_order", "class", F.explode("_cells").alias("c"))
        .select("_order", "class", "c.*")
        .groupBy("apart", "class", "template", "label")
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
        key = (row["template"], row["label"])
        unparsed = int(row["unparsed"] or 0)
        batch.unparsed += unparsed
        if row["apart"]:
            _add_field(batch.discovered_fields, key, row)
            batch.discovered_counts.add(_counts(row))
            continue
        _add_field(batch.fields, key, row)
        aggregate = batch.classes[row["class"]]
        _add_field(aggregate.fields, row["template"], row)
        aggregate.undecided += int(row["undecided"] or 0)


def _add_field(entries: dict[Any, FieldAggregate], key: Any, row: Any) -> None:
    entry = entries.get(key)
    if entry is None:
        entry = entries[key] = FieldAggregate(_info(row["template"], row["label"], row["info"]))
    entry.counts.add(_counts(row))
    entry.undecided += int(row["undecided"] or 0)
    entry.unparsed += int(row["unparsed"] or 0)


def _lists(ok: DataFrame, batch: BatchComparison) -> None:
    """The six item counts per list template, and the list's description (from the
    first document that has it)."""
    from pyspark.sql import functions as F

    order = F.struct("_order", "position")
    items = ok.select("_order", F.explode("_items").alias("i")).select("_order", "i.*")
    for row in (
        items.groupBy("template")
        .agg(
            F.min(order).alias("first"),
            F.min_by(F.struct("label", *INFO), order).alias("info"),
            *(F.sum(name).alias(name) for name in ITEMS),
        )
        .orderBy("first")
        .collect()
    ):
        template, info = row["template"], row["info"]
        batch.lists[template] = ItemCounts(*(int(row[name] or 0) for name in ITEMS))
        batch.list_labels[template] = info["label"]
        batch.list_infos[template] = _info(template, info["label"], info)


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
    """Every scored document with its cells and rows, in input order (for reports)."""
    nodes: dict[tuple[Any, ...], PortableNode] = {}
    frame = scored(results).select(
        "_order", "id", "class", "configured", "undecided", "_cells", "_items", "rows", "_reasons"
    )
    for row in _in_order(frame, ordered):
        fields = {}
        cells = {}
        unparsed = {}
        included = True
        for cell in row["_cells"]:
            template = cell["template"]
            cells[template] = [int(cell[name]) for name in CELLS]
            fields[template] = _info(template, cell["label"], cell)
            if cell["unparsed"]:
                unparsed[template] = int(cell["unparsed"])
            included = included and not cell["apart"]
        items = {}
        for item in row["_items"]:
            items[item["template"]] = [int(item[name]) for name in ITEMS]
            fields.setdefault(item["template"], _info(item["template"], item["label"], item))
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
            unparsed=unparsed,
            # Whether discovered fields count in the document's figures: they do
            # unless one was left out (when there is none, either is right).
            include_discovered=included,
        )


def _info(template: str, label: str, entry: Any) -> FieldInfo:
    """A :class:`FieldInfo` from a struct with the :data:`INFO` fields."""
    return FieldInfo(
        template,
        entry["method"],
        label,
        entry["threshold"],
        entry["discovered"],
        entry["kind"],
    )
