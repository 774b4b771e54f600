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
each side's order, so the report equals the single-machine one.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from docevals_mlflow.errors import DocEvalsError, InputError, InputFileNotFoundError
from docevals_mlflow.fields.inputs import _jsonl_record
from docevals_mlflow.fields.parquet_inputs import is_parquet
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
                record = _jsonl_record(
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
    """One side's records, and (for JSON Lines) its raw lines to count line numbers."""

    path: Path
    records: DataFrame
    lines: DataFrame | None


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
        return SideFrame(path, records, None)
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


def _place(side: SideFrame, order: int, doc_id: str) -> str:
    return f"line {_line_of(side, order)}" if side.lines is not None else f"id {doc_id}"


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
        second = _place(side, repeated["second"], repeated["id"])
        raise InputError(
            f"duplicate id {repeated['id']!r} "
            f"({_place(side, repeated['first'], repeated['id'])} and {second})",
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
        _jsonl_record(raw, source=str(side.path), line=line)
        raise rebuild_error(json.loads(failed["_error"]))  # pragma: no cover - raised above


class SparkPairs(NamedTuple):
    """Paired documents (one row each, in expected-side order) and unpaired ids."""

    frame: DataFrame
    expected_only: list[str]
    predicted_only: list[str]


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
    return SparkPairs(frame, expected_only, predicted_only)


def compare_files_spark(
    spark: SparkSession,
    expected: Path,
    predicted: Path,
    schema: Any = None,
    *,
    keep_rows: bool = True,
) -> SparkFieldComparison:
    """``docevals fields --spark``: pair two inputs through Spark and compare them
    (a :class:`~docevals_mlflow.spark.compare.SparkFieldComparison`)."""
    from docevals_mlflow.spark.compare import compare_documents_spark

    pairs = pair_sides(spark, expected, predicted)
    return compare_documents_spark(
        pairs.frame,
        schema,
        class_col="class",
        confidence_col="confidence",
        explainability_col="explainability",
        order_col="_order",
        keep_rows=keep_rows,
        expected_only=pairs.expected_only,
        predicted_only=pairs.predicted_only,
    )
