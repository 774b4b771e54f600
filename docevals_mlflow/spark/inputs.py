"""Reading ``docevals fields`` inputs through Spark, and pairing them by id.

Two forms, on either side:

* a **JSON Lines** file of ``{"id", "class"?, "data", "confidence"?,
  "explainability_info"?}`` records, as on one machine. Each line is checked by the
  same code, and an error is reported with the same message (file, ``line N``): the
  line number is counted only when there is an error to report.
* **Parquet** (a file, or a folder of part files) with the same columns; ``data``
  (and ``confidence``, ``explainability_info``) may be JSON text or struct/map
  columns.

Documents are compared in expected-side order, and the unpaired ids are listed in
each side's order, so the report equals the single-machine one. A document named in
a message (a repeated id, ground truth of the wrong shape) is placed as one machine
places it: ``line N`` of a JSON Lines file, ``row N`` of a Parquet file (with the
part file's name in a folder).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from docevals_mlflow.errors import DocEvalsError, InputError, InputFileNotFoundError
from docevals_mlflow.fields.parquet_inputs import is_parquet
from docevals_mlflow.fields.records import jsonl_record
from docevals_mlflow.fields.schema import ListPairing
from docevals_mlflow.fields.shapes import DiscoveredPolicy, ShapeMismatchPolicy
from docevals_mlflow.spark.aggregate import rebuild_error
from docevals_mlflow.spark.session import quiet_pandas_check

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from docevals_mlflow.spark.compare import SparkFieldComparison

RECORD_DDL = (
    "`_order` bigint, `id` string, `class` string, `data` string, `confidence` string, "
    "`explainability` string, `_error` string"
)


def _parse_lines(batches: Iterator[Any], *, source: str) -> Iterator[Any]:
    """``mapInArrow``: JSON Lines records → id, class and JSON text of the rest."""
    import pyarrow as pa

    schema = pa.schema(
        [
            ("_order", pa.int64()),
            *((name, pa.string()) for name in ("id", "class", "data", "confidence")),
            ("explainability", pa.string()),
            ("_error", pa.string()),
        ]
    )
    for batch in batches:
        out = []
        columns = batch.to_pydict()
        for order, line in zip(columns["_order"], columns["value"], strict=True):
            try:
                # Line 0: the real number is counted on the driver, and only for an error.
                record = jsonl_record(
                    line.removeprefix("\ufeff").encode("utf-8"), source=source, line=0
                )
            except DocEvalsError as exc:
                out.append(
                    {"_order": order, "_error": json.dumps(exc.context(), ensure_ascii=False)}
                )
                continue
            if record is None:  # a blank line
                continue
            out.append(
                {
                    "_order": order,
                    "id": record.id,
                    "class": record.document_class,
                    "data": json.dumps(record.data, ensure_ascii=False),
                    "confidence": None
                    if record.confidence is None
                    else json.dumps(record.confidence, ensure_ascii=False),
                    "explainability": None
                    if record.explainability_info is None
                    else json.dumps(record.explainability_info, ensure_ascii=False),
                }
            )
        yield pa.RecordBatch.from_pylist(out, schema=schema)


class SideFrame(NamedTuple):
    """One side's records, and where they are: for JSON Lines its raw lines (to count
    line numbers), for Parquet each record's file name and row index."""

    path: Path
    records: DataFrame
    lines: DataFrame | None
    rows: DataFrame | None = None


def _check_ids(frame: DataFrame, path: Path) -> None:
    """Refuse the ids one machine refuses: other types than text and integers, nulls
    and empty text (Spark would otherwise cast them and count them unpaired)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import IntegralType, StringType

    expected = "a non-empty string or an integer"
    id_type = frame.schema["id"].dataType
    if not isinstance(id_type, (StringType, IntegralType)):
        raise InputError(
            f"invalid id column of type {id_type.simpleString()}",
            source=str(path),
            expected=expected,
        )
    bad = frame.where(F.col("id").isNull() | (F.col("id").cast("string") == "")).first()
    if bad is not None:
        raise InputError(f"invalid id {bad['id']!r}", source=str(path), expected=expected)


def read_side(spark: SparkSession, path: Path, what: str) -> SideFrame:
    """One input (JSON Lines file or Parquet) as record rows, read lazily."""
    from pyspark.sql import functions as F

    from docevals_mlflow.spark.compare import _json_text

    if not path.exists():
        raise InputFileNotFoundError(f"{what} not found", source=str(path))
    if is_parquet(path):
        frame = spark.read.parquet(str(path))
        if "id" not in frame.columns or "data" not in frame.columns:
            raise InputError(
                "Parquet input without 'id' and 'data' columns",
                source=str(path),
                expected="columns id, data (and optionally class, confidence, explainability_info)",
            )

        _check_ids(frame, path)

        def optional(name: str) -> Any:
            return _json_text(frame, name if name in frame.columns else None)

        records = frame.select(
            F.monotonically_increasing_id().alias("_order"),
            F.col("id").cast("string").alias("id"),
            (F.col("class").cast("string") if "class" in frame.columns else F.lit(None))
            .cast("string")
            .alias("class"),
            _json_text(frame, "data").alias("data"),
            optional("confidence").alias("confidence"),
            optional("explainability_info").alias("explainability"),
            F.lit(None).cast("string").alias("_error"),
        )
        # The same scan, so the same _order; read only for a message.
        rows = frame.select(
            F.monotonically_increasing_id().alias("_order"),
            F.col("_metadata.file_name").alias("file"),
            F.col("_metadata.row_index").alias("row"),
        )
        return SideFrame(path, records, None, rows)
    if path.is_dir():
        raise InputError(
            "with --spark, an input is a JSON Lines file or Parquet",
            source=str(path),
            expected="a .jsonl file, a .parquet file, or a folder of .parquet files",
        )
    lines = spark.read.text(str(path)).select(
        F.monotonically_increasing_id().alias("_order"), "value"
    )
    with quiet_pandas_check():
        records = lines.mapInArrow(partial(_parse_lines, source=str(path)), RECORD_DDL)
    return SideFrame(path, records, lines)


def _line_of(side: SideFrame, order: int) -> int:
    assert side.lines is not None
    return side.lines.where(side.lines["_order"] < order).count() + 1


def _places(side: SideFrame, documents: Sequence[tuple[int, str]]) -> list[str]:
    """Where documents (``(_order, id)``) are in their input, as one machine says it:
    ``line N``, ``row N`` (``<part file> row N`` in a folder) or, when neither can be
    known, ``id <id>``; one Spark job for all of them."""
    from pyspark.sql import functions as F

    if not documents:
        return []
    if side.lines is not None:
        order = side.lines["_order"]
        counts = side.lines.agg(
            *(
                F.count_if(order < position).alias(f"n{i}")
                for i, (position, _) in enumerate(documents)
            )
        ).first()
        assert counts is not None
        return [f"line {counts[f'n{i}'] + 1}" for i in range(len(documents))]
    if side.rows is not None:
        found = {
            row["_order"]: (row["file"], row["row"])
            for row in side.rows.where(
                F.col("_order").isin([position for position, _ in documents])
            ).collect()
        }
        places = []
        for position, doc_id in documents:
            if position not in found:  # pragma: no cover - the same scan gives the same ids
                places.append(f"id {doc_id}")
                continue
            name, index = found[position]
            prefix = "" if side.path.is_file() else f"{name} "
            places.append(f"{prefix}row {index + 1}")
        return places
    return [f"id {doc_id}" for _, doc_id in documents]  # pragma: no cover - always one of them


def check_side(side: SideFrame) -> None:
    """Raise the first problem of one side, as one machine would: a malformed record
    or a repeated id, whichever comes first in the file."""
    from pyspark.sql import functions as F

    records = side.records
    failed = records.where(F.col("_error").isNotNull()).orderBy("_order").first()
    repeated = (
        records.where(F.col("_error").isNull())
        .groupBy("id")
        .agg(
            F.count(F.lit(1)).alias("n"),
            F.sort_array(F.collect_list("_order")).alias("orders"),
        )
        .where("n > 1")
        .select("id", F.col("orders").getItem(0).alias("first"), F.col("orders").getItem(1))
        .toDF("id", "first", "second")
        .orderBy("second")
        .first()
    )
    if repeated is not None and (failed is None or repeated["second"] < failed["_order"]):
        first, second = _places(
            side, [(repeated["first"], repeated["id"]), (repeated["second"], repeated["id"])]
        )
        raise InputError(
            f"duplicate id {repeated['id']!r} ({first} and {second})",
            source=str(side.path),
            record=second,
            expected="each id once per side",
        )
    if failed is not None:
        if side.lines is None:
            raise rebuild_error(json.loads(failed["_error"]))
        line = _line_of(side, failed["_order"])
        text = side.lines.where(side.lines["_order"] == failed["_order"]).first()
        assert text is not None
        raw = text["value"].removeprefix("\ufeff").encode("utf-8")
        # The same check again, now with the line number: the same error as one machine.
        jsonl_record(raw, source=str(side.path), line=line)
        raise rebuild_error(json.loads(failed["_error"]))  # pragma: no cover - raised above


class SparkPairs(NamedTuple):
    """Paired documents (one row each, in expected-side order, ``_order`` the
    expected record's) and unpaired ids."""

    frame: DataFrame
    expected_only: list[str]
    predicted_only: list[str]
    expected_side: SideFrame


def pair_sides(spark: SparkSession, expected: Path, predicted: Path) -> SparkPairs:
    """Read both inputs through Spark, check them, and pair them by id.

    The class is the expected record's, else the predicted one's; confidence and
    explainability info come from the prediction (as on one machine).
    """
    from pyspark.sql import functions as F

    if not expected.exists():
        raise InputFileNotFoundError("expected input not found", source=str(expected))
    if not predicted.exists():
        raise InputFileNotFoundError("predicted input not found", source=str(predicted))
    predicted_side = read_side(spark, predicted, "predicted input")
    expected_side = read_side(spark, expected, "expected input")
    check_side(predicted_side)
    check_side(expected_side)
    truth = expected_side.records.where(F.col("_error").isNull()).select(
        "_order", "id", F.col("class").alias("expected_class"), F.col("data").alias("expected")
    )
    guess = predicted_side.records.where(F.col("_error").isNull()).select(
        F.col("_order").alias("predicted_order"),
        "id",
        F.col("class").alias("predicted_class"),
        F.col("data").alias("predicted"),
        "confidence",
        "explainability",
    )
    frame = truth.join(guess, "id").select(
        "_order",
        "id",
        F.coalesce("expected_class", "predicted_class").alias("class"),
        "expected",
        "predicted",
        "confidence",
        "explainability",
    )
    expected_only = [
        row["id"] for row in truth.join(guess, "id", "left_anti").orderBy("_order").collect()
    ]
    predicted_only = [
        row["id"]
        for row in guess.join(truth, "id", "left_anti").orderBy("predicted_order").collect()
    ]
    return SparkPairs(frame, expected_only, predicted_only, expected_side)


def compare_files_spark(
    spark: SparkSession,
    expected: Path,
    predicted: Path,
    schema: Any = None,
    *,
    keep_rows: bool = True,
    list_pairing: ListPairing | None = None,
    discovered: DiscoveredPolicy = "exclude",
    shape_mismatch: ShapeMismatchPolicy = "error",
) -> SparkFieldComparison:
    """``docevals fields --spark``: pair two inputs through Spark and compare them
    (a :class:`~docevals_mlflow.spark.compare.SparkFieldComparison`) with the
    comparison settings of :func:`~docevals_mlflow.compare_documents`. Documents
    whose ground truth has the wrong shape are placed in the expected input (file,
    line or row), as one machine places them."""
    from docevals_mlflow.spark.compare import CHUNK_SIZE, _compare, column_roles

    pairs = pair_sides(spark, expected, predicted)
    side = pairs.expected_side

    def locate(documents: Sequence[tuple[int, str]]) -> list[tuple[str | None, str | None]]:
        return [(str(side.path), place) for place in _places(side, documents)]

    names = column_roles(
        "id", "expected", "predicted", "class", "confidence", "explainability", "_order"
    )
    return _compare(
        pairs.frame,
        schema,
        names,
        keep_rows=keep_rows,
        chunk_size=CHUNK_SIZE,
        expected_only=pairs.expected_only,
        predicted_only=pairs.predicted_only,
        collect_documents=True,
        list_pairing=list_pairing,
        discovered=discovered,
        shape_mismatch=shape_mismatch,
        locate=locate,
    )
