"""Field comparison of a Spark DataFrame: :func:`compare_documents_spark`."""

from __future__ import annotations

import copy
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from docevals_mlflow.errors import InputError
from docevals_mlflow.fields.batch import BatchComparison, check_shapes, comparison_settings
from docevals_mlflow.fields.compare import FieldComparer
from docevals_mlflow.fields.parallel import check_deterministic
from docevals_mlflow.fields.report import REPORT_ROW_FIELDS
from docevals_mlflow.fields.schema import DocumentSchema, ListPairing
from docevals_mlflow.fields.shapes import DiscoveredPolicy, ShapeMismatchPolicy
from docevals_mlflow.spark.aggregate import (
    Locate,
    SparkBatchComparison,
    aggregate,
    check_results,
    documents_with_rows,
    invalid_examples,
)
from docevals_mlflow.spark.columns import INPUT_COLUMNS, result_schema, spark_ddl
from docevals_mlflow.spark.executor import ExecutorSettings, compare_batches
from docevals_mlflow.spark.session import quiet_pandas_check

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from docevals_mlflow.tracking.options import RunOptions, RunPrompt
    from docevals_mlflow.tracking.runs import LoggedRun


CHUNK_SIZE = 256
"""Documents an executor compares together (list pairing vectorised across them)."""


@dataclass
class SparkFieldComparison:
    """A field comparison computed by Spark.

    ``results`` holds one row per input document (see
    :mod:`docevals_mlflow.spark.columns`); ``batch`` holds the aggregate figures,
    computed by Spark and equal to what :func:`~docevals_mlflow.compare_documents`
    returns for the same documents, with one :class:`DocumentSummary` per document.
    """

    results: DataFrame
    batch: BatchComparison
    keep_rows: bool
    ordered: bool = False
    """Whether ``results`` are in input order partition by partition (no sort needed)."""
    schema: DocumentSchema | None = None
    """The schema given to the comparison (``None``: every field inferred); :meth:`log`
    records it as ``specs/schema.json``, as every field comparison run does."""

    @property
    def documents(self) -> DataFrame:
        """Per-document results: id, class, cells, metrics (and ``rows`` when kept),
        for the documents that were scored (not those whose ground truth has the
        wrong shape: see the report's ``invalid_expected``)."""
        from pyspark.sql import functions as F

        return self.results.where(F.col("_invalid").isNull()).select(
            *(
                name
                for name in self.results.columns
                if not name.startswith("_") and (self.keep_rows or name != "rows")
            )
        )

    def field_rows(self) -> DataFrame:
        """One row per leaf comparison (the columns of ``results/fields.parquet``;
        ``expected`` and ``actual`` are JSON text)."""
        from pyspark.sql import functions as F

        return (
            self.results.where(F.col("rows").isNotNull())
            .select(
                F.col("id").alias("document_id"),
                F.col("class").alias("document_class"),
                F.explode("rows").alias("row"),
            )
            .select("document_id", "document_class", *(f"row.{name}" for name in REPORT_ROW_FIELDS))
        )

    @property
    def metrics(self) -> dict[str, float | None]:
        """Micro metrics of the whole input."""
        return self.batch.metrics

    @property
    def macro_f1(self) -> float | None:
        """Mean document F1 (exact, as on one machine)."""
        return self.batch.macro_f1

    def to_report(self, *, include_rows: bool | None = None) -> dict[str, Any]:
        """The same report dict as ``compare_documents(...).to_report()``.

        ``include_rows`` (default: whether rows were kept) streams every document's
        rows to the driver, in input order; without them the report has one entry
        per document and no rows.
        """
        from docevals_mlflow.fields.report import build_fields_report

        if include_rows is None:
            include_rows = self.keep_rows
        if not include_rows or not self.keep_rows or not self.batch.documents:
            return build_fields_report(self.batch, include_rows=False)
        with_rows = copy.copy(self.batch)
        with_rows.documents = list(documents_with_rows(self.results, ordered=self.ordered))
        return build_fields_report(with_rows, include_rows=True)

    def log(
        self,
        *,
        include_rows: bool | None = None,
        ground_truth: str | os.PathLike[str] | None = None,
        verdict: str | None = None,
        run_name: str | None = None,
        experiment: str | None = None,
        tracking_uri: str | None = None,
        params: Mapping[str, Any] | None = None,
        tags: Mapping[str, str] | None = None,
        keep_bundle_at: str | os.PathLike[str] | None = None,
        schema: DocumentSchema | None = None,
        prompt: RunPrompt | None = None,
        options: RunOptions | None = None,
        traces: str | int | None = None,
    ) -> LoggedRun:
        """Log this comparison as one MLflow run, assembled as every field comparison
        run is (see :func:`~docevals_mlflow.log_field_comparison`), with the param
        ``docevals.engine=spark``.

        ``schema`` defaults to the one the comparison was made with; ``traces`` picks
        the documents that get an MLflow trace (as for ``log_field_comparison``).
        """
        from docevals_mlflow.tracking.api import log_field_comparison
        from docevals_mlflow.tracking.options import RunOptions

        chosen = (options or RunOptions()).merged(engine="spark")
        return log_field_comparison(
            self.to_report(include_rows=include_rows),
            ground_truth=ground_truth,
            verdict=verdict,
            run_name=run_name,
            experiment=experiment,
            tracking_uri=tracking_uri,
            params=params,
            tags=tags,
            keep_bundle_at=keep_bundle_at,
            schema=schema or chosen.schema or self.schema,
            prompt=prompt,
            options=chosen,
            traces=traces,
        )

    def unpersist(self) -> None:
        """Release the cached results."""
        self.results.unpersist()


def _json_text(frame: DataFrame, name: str | None) -> Column:
    """A column as JSON text: strings are JSON already, structs, maps and arrays are
    written as JSON by Spark, numbers and booleans are cast (their text is JSON)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, MapType, NullType, StringType, StructType

    if name is None:
        return F.lit(None).cast("string")
    data_type = frame.schema[name].dataType
    if isinstance(data_type, StringType):
        return F.col(name)
    if isinstance(data_type, NullType):
        return F.lit(None).cast("string")
    if isinstance(data_type, (StructType, MapType, ArrayType)):
        return F.to_json(F.col(name))
    return F.col(name).cast("string")


def compare_documents_spark(
    df: DataFrame,
    schema: DocumentSchema | None = None,
    *,
    id_col: str = "id",
    expected_col: str = "expected",
    predicted_col: str = "predicted",
    class_col: str | None = None,
    confidence_col: str | None = None,
    explainability_col: str | None = None,
    order_col: str | None = None,
    keep_rows: bool = True,
    chunk_size: int = CHUNK_SIZE,
    expected_only: Iterable[str] = (),
    predicted_only: Iterable[str] = (),
    collect_documents: bool = True,
    list_pairing: ListPairing | None = None,
    discovered: DiscoveredPolicy = "exclude",
    shape_mismatch: ShapeMismatchPolicy = "error",
) -> SparkFieldComparison:
    """Compare the documents of a Spark DataFrame field by field, on the executors.

    Each row holds one document: its id, the expected and predicted data (JSON text,
    or struct/map columns, which Spark writes as JSON; in a struct a missing key and
    a null are the same), and optionally its class, a confidence map and IDP
    explainability info. Executors compare the rows with ``mapInArrow`` (Arrow
    batches, ``chunk_size`` documents vectorised together); Spark then sums the
    cells per class, field and list, so the figures equal the single-machine ones
    exactly. Documents are taken in ``order_col`` order (default: the DataFrame's
    own order), which decides the order of report entries.

    The results are cached (``persist``) because the aggregation reads them several
    times; call :meth:`SparkFieldComparison.unpersist` when done.

    ``collect_documents`` streams one small summary per document to the driver (the
    report lists every document, as on one machine). For inputs too large to list,
    pass ``False``: the figures are the same, the report's ``documents`` list is
    empty, and the per-document results stay in ``results`` (write them out with
    Spark).

    ``list_pairing``, ``discovered`` and ``shape_mismatch`` are
    :func:`~docevals_mlflow.compare_documents`'s (the executors compare with them):
    discovered fields are left out of the document, class and overall figures
    unless ``discovered="include"``, and documents whose ground truth has the wrong
    shape are counted as ``invalid_expected`` (``shape_mismatch="count"``) or, after
    the comparison, raise the error one machine raises.

    Raises:
        InputError: a missing column; the first document (in input order) that
            cannot be read or compared, or a repeated id, with the same message as
            on one machine (``source`` names the column).
        ShapeMismatchError: ground truth of the wrong shape, with
            ``shape_mismatch="error"`` (the same message as one machine's).
        ConfigurationError: SEMANTIC or LLM fields (their providers live in one
            process), or a schema that cannot be compiled.
    """
    # Why long: the public signature's 17 documented keyword arguments; the body only
    # forwards them.
    columns = (id_col, expected_col, predicted_col, class_col, confidence_col)
    names = column_roles(*columns, explainability_col, order_col)
    return _compare(
        df,
        schema,
        names,
        keep_rows=keep_rows,
        chunk_size=chunk_size,
        expected_only=expected_only,
        predicted_only=predicted_only,
        collect_documents=collect_documents,
        list_pairing=list_pairing,
        discovered=discovered,
        shape_mismatch=shape_mismatch,
    )


def column_roles(
    id_col: str,
    expected_col: str,
    predicted_col: str,
    class_col: str | None,
    confidence_col: str | None,
    explainability_col: str | None,
    order_col: str | None,
) -> dict[str, str | None]:
    """Each input role's column (``None``: not given); ``_order`` orders documents."""
    return {
        "id": id_col,
        "expected": expected_col,
        "predicted": predicted_col,
        "class": class_col,
        "confidence": confidence_col,
        "explainability": explainability_col,
        "_order": order_col,
    }


def _compare(
    df: DataFrame,
    schema: DocumentSchema | None,
    names: dict[str, str | None],
    *,
    keep_rows: bool,
    chunk_size: int,
    expected_only: Iterable[str],
    predicted_only: Iterable[str],
    collect_documents: bool,
    list_pairing: ListPairing | None,
    discovered: DiscoveredPolicy,
    shape_mismatch: ShapeMismatchPolicy,
    locate: Locate | None = None,
) -> SparkFieldComparison:
    """:func:`compare_documents_spark` of the columns ``names`` (role → column, see
    :func:`column_roles`); ``locate`` says where wrong-shaped documents sit in their
    input (when it is a file: ``compare_files_spark``)."""
    order_col = names["_order"]
    given = schema  # what the run records as specs/schema.json (none when inferred)
    schema = schema if schema is not None else DocumentSchema(schema_id="inferred")
    check_deterministic(schema, "Spark")
    # Compiles every comparator here, so schema errors surface now; its key tells the
    # executors how to build theirs.
    comparer = FieldComparer(
        schema,
        keep_rows=keep_rows,
        list_pairing=list_pairing,
        discovered=discovered,
        shape_mismatch=shape_mismatch,
    )
    executors = ExecutorSettings(
        schema=schema,
        key=comparer.key,
        chunk_size=chunk_size,
        columns={role: name for role, name in names.items() if name is not None},
    )
    results = _run_executors(_select_inputs(df, names), executors)
    try:
        settings = comparison_settings(list_pairing, discovered, shape_mismatch)
        batch = SparkBatchComparison.empty(schema, expected_only, predicted_only, settings)
        _check(results, batch, shape_mismatch, locate)
        aggregate(results, batch, ordered=order_col is None, collect_documents=collect_documents)
    except BaseException:
        results.unpersist()
        raise
    return SparkFieldComparison(
        results=results,
        batch=batch,
        keep_rows=keep_rows,
        ordered=order_col is None,
        schema=given,
    )


def _select_inputs(df: DataFrame, names: dict[str, str | None]) -> DataFrame:
    """The DataFrame's columns in the executors' layout (:data:`INPUT_COLUMNS`), by
    role (``names``: role → the caller's column, ``None`` when not given)."""
    from pyspark.sql import functions as F

    missing = [name for name in names.values() if name is not None and name not in df.columns]
    if missing:
        raise InputError(
            f"no column {', '.join(map(repr, missing))} in the DataFrame",
            expected=f"one of {', '.join(df.columns)}",
        )
    order_col, class_col, id_col = names["_order"], names["class"], names["id"]
    assert id_col is not None
    inputs = df.select(
        (F.col(order_col) if order_col else F.monotonically_increasing_id()).alias("_order"),
        F.col(id_col).cast("string").alias("id"),
        (F.col(class_col).cast("string") if class_col else F.lit(None).cast("string")).alias(
            "class"
        ),
        _json_text(df, names["expected"]).alias("expected"),
        _json_text(df, names["predicted"]).alias("predicted"),
        _json_text(df, names["confidence"]).alias("confidence"),
        _json_text(df, names["explainability"]).alias("explainability"),
    )
    assert tuple(inputs.columns) == INPUT_COLUMNS
    return inputs


def _check(
    results: DataFrame,
    batch: SparkBatchComparison,
    shape_mismatch: ShapeMismatchPolicy,
    locate: Locate | None,
) -> None:
    """Raise the first document's error, as one machine would; record (or raise
    for) documents whose ground truth has the wrong shape."""
    check = check_results(results)
    if check.failure is not None:
        raise check.failure
    if check.invalid:
        batch.invalid_documents = check.invalid
        batch.invalid_examples = invalid_examples(results, locate)
        # Every document is compared by now, as on one machine before it raises.
        check_shapes(batch, shape_mismatch)


def _run_executors(inputs: DataFrame, settings: ExecutorSettings) -> DataFrame:
    """The per-document results of the executors' comparison, cached because the
    aggregation reads them several times."""
    from pyspark import StorageLevel

    with quiet_pandas_check():
        return inputs.mapInArrow(
            partial(compare_batches, settings=settings), spark_ddl(result_schema())
        ).persist(StorageLevel.MEMORY_AND_DISK)
