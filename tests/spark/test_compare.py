"""``compare_documents_spark``: Spark's figures and report equal one machine's, on the
same documents; bad input fails with the same errors."""

from __future__ import annotations

import json
from typing import Any

import pytest

from docevals_mlflow.errors import (
    ConfigurationError,
    DocEvalsError,
    InputError,
    ShapeMismatchError,
)
from docevals_mlflow.fields.batch import compare_documents
from docevals_mlflow.spark import SparkFieldComparison, compare_documents_spark
from tests.fields.test_parallel import SEMANTIC_SCHEMA, _records
from tests.fields.test_properties import SCHEMA

pytestmark = pytest.mark.spark

COLUMNS = (
    "id string, class string, expected string, predicted string, confidence string, "
    "explainability string"
)


def edge_records() -> list[dict[str, Any]]:
    """Documents that exercise every kind of row: lists of scalars, nested objects in
    list items, discovered attributes, an unconfigured class, wrong types,
    confidence maps and IDP explainability info, empty documents."""
    return [
        {
            "id": "edge-1",
            "class": "Statement",
            "expected": {
                "Account": "A1",
                "Tags": ["urgent", "paid"],
                "Items": [
                    {"code": "A1", "when": "2024-01-15", "meta": {"ref": "r1"}, "sub": ["x"]},
                    {"code": "B1", "amount": 3.5, "desc": "desk lamp"},
                ],
                "Holder": {"Name": "Ann Lee", "City": "Oslo"},
            },
            "predicted": {
                "Account": "A1",
                "Tags": ["Urgent", "late"],
                "Items": [
                    {"code": "B1", "amount": "3.50", "desc": "desk lamb", "qty": 2},
                    {"code": "A1", "when": "01/15/2024", "meta": {"ref": "r2"}, "sub": []},
                ],
                "Holder": "Ann Lee",
                "note": "extra",
            },
            "confidence": {"$.Account": 0.9, "Items[0].code": 0.4},
        },
        {
            "id": "edge-2",
            "class": "Memo",
            "expected": {"to": "Bob Stone", "pages": 2, "urgent": True, "cc": ["a", "b"]},
            "predicted": {"to": "Bob  Stone", "pages": 3, "urgent": True, "cc": ["b"]},
            "explainability": [{"to": {"confidence": 0.7}, "pages": 0.2}],
        },
        {"id": "edge-3", "class": "Receipt", "expected": {}, "predicted": {}},
        {
            "id": "edge-4",
            "class": None,
            "expected": {"Store": "Corner Shop", "Lines": [{"sku": "1", "qty": 2}]},
            "predicted": {"Store": "Corner Shp", "Lines": [{"sku": "1", "qty": 2}, {"sku": "9"}]},
        },
        {"id": "edge-5", "class": "Receipt", "expected": {"Store": None}, "predicted": None},
    ]


def documents() -> list[dict[str, Any]]:
    return edge_records() + _records(60, rng_seed=5)


def frame(spark: Any, records: list[dict[str, Any]], *, partitions: int = 3) -> Any:
    def text(value: Any) -> str | None:
        return None if value is None else json.dumps(value)

    rows = [
        (
            record["id"],
            record["class"],
            json.dumps(record["expected"]),
            json.dumps(record["predicted"]),
            text(record.get("confidence")),
            text(record.get("explainability")),
        )
        for record in records
    ]
    # Spread over several partitions, so that order across partitions matters.
    return spark.createDataFrame(rows, COLUMNS).coalesce(partitions)


def compare(spark: Any, records: list[dict[str, Any]], **options: Any) -> SparkFieldComparison:
    return compare_documents_spark(
        frame(spark, records),
        SCHEMA,
        class_col="class",
        confidence_col="confidence",
        explainability_col="explainability",
        chunk_size=4,
        **options,
    )


def serial(records: list[dict[str, Any]], **options: Any) -> Any:
    pairs = [
        {
            "id": record["id"],
            "class": record["class"],
            "expected": record["expected"],
            "predicted": record["predicted"],
            "confidence": record.get("confidence"),
            "explainability_info": record.get("explainability"),
        }
        for record in records
    ]
    return compare_documents(pairs, SCHEMA, **options)


def text(report: dict[str, Any]) -> str:
    return json.dumps(report, ensure_ascii=False, default=repr)


@pytest.fixture(scope="module")
def with_rows(spark: Any) -> SparkFieldComparison:
    comparison = compare(spark, documents())
    yield comparison
    comparison.unpersist()


def test_the_report_equals_one_machines(with_rows: SparkFieldComparison) -> None:
    one_machine = serial(documents())
    report = with_rows.to_report()
    # Spark keeps no per-document cells per field, so its report has no intervals.
    assert text(report) == text(one_machine.to_report(intervals=False))
    assert with_rows.metrics == one_machine.metrics
    assert with_rows.macro_f1 == one_machine.macro_f1
    assert report["overall"]["documents"] == 65
    assert "calibration" in report


def test_without_rows_the_figures_are_the_same(spark: Any) -> None:
    comparison = compare(spark, documents(), keep_rows=False)
    try:
        assert text(comparison.to_report()) == text(
            serial(documents(), keep_rows=False).to_report(intervals=False)
        )
        assert "rows" not in comparison.documents.columns
    finally:
        comparison.unpersist()


def test_per_document_results_and_field_rows(with_rows: SparkFieldComparison) -> None:
    one_machine = serial(documents())
    by_id = {document.id: document for document in one_machine.documents}
    rows = {row["id"]: row for row in with_rows.documents.collect()}
    assert set(rows) == set(by_id)
    for doc_id, document in by_id.items():
        assert rows[doc_id]["tp"] == document.counts.tp
        assert rows[doc_id]["f1"] == document.counts.metrics()["f1"]
    assert not [name for name in with_rows.documents.columns if name.startswith("_")]
    leaves = with_rows.field_rows()
    assert leaves.count() == sum(len(document.rows or ()) for document in by_id.values())
    first = leaves.where("document_id = 'edge-1' AND path = '$.Account'").first()
    assert (first["expected"], first["outcome"], first["confidence"]) == ('"A1"', "TP", 0.9)


def test_struct_columns_are_read_as_json(spark: Any) -> None:
    records = [
        {
            "id": f"s{index}",
            "class": "Receipt",
            "expected": {"Store": "Corner Shop", "Lines": [{"sku": str(index), "qty": index}]},
            "predicted": {"Store": "Corner Shop", "Lines": [{"sku": str(index), "qty": 1}]},
        }
        for index in range(6)
    ]
    line = "struct<sku: string, qty: bigint>"
    document = f"struct<Store: string, Lines: array<{line}>>"
    df = spark.createDataFrame(
        [(r["id"], r["expected"], r["predicted"]) for r in records],
        f"id string, expected {document}, predicted {document}",
    )
    comparison = compare_documents_spark(df, SCHEMA, keep_rows=False)
    try:
        for record in records:
            record["class"] = None
        expected = serial(records, keep_rows=False).to_report(intervals=False)
        assert text(comparison.to_report()) == text(expected)
    finally:
        comparison.unpersist()


# --- comparison settings ----------------------------------------------------------------


def rule_records() -> list[dict[str, Any]]:
    """:func:`documents` with what the comparison settings change: weak list pairs,
    lists invented where none were expected, numbers that do not read as numbers (in
    a configured, a discovered and an unconfigured field), and 12 documents whose
    ground truth has the wrong shape (more than a report describes), spread over the
    input and its partitions."""
    records = [
        *documents(),
        {
            "id": "odd-1",
            "class": "Statement",
            "expected": {"Total": "12.50", "Tags": [], "weight": 5},
            "predicted": {"Total": "twelve", "Tags": ["late"], "weight": "heavy"},
        },
        {
            "id": "odd-2",
            "class": "Memo",
            "expected": {"pages": 2, "cc": []},
            "predicted": {"pages": "two", "cc": ["z"]},
        },
        {
            "id": "odd-3",
            "class": "Receipt",
            "expected": {"Lines": [{"sku": "1", "qty": 2}, {"sku": "2", "qty": 5}]},
            "predicted": {"Lines": [{"sku": "3", "qty": 2}]},
        },
    ]
    for record in records[5:65:5]:
        wrong = {"Store": {"name": "x"}} if record["class"] == "Receipt" else {"Account": ["A"]}
        record["expected"] = {**record["expected"], **wrong}
    return records


COUNTING = {"shape_mismatch": "count"}


def test_the_rule_records_exercise_every_setting() -> None:
    # One machine only: the Spark tests below are meaningful with these figures.
    records = rule_records()
    base = serial(records, **COUNTING).to_report()
    # twelve, heavy, two, and four "x" amounts in the discovered lines of documents().
    assert base["overall"]["unparsed"] == 7
    assert base["classes"]["Statement"]["unparsed"] == 1  # the discovered one is apart
    assert base["invalid_expected"]["documents"] == 12
    assert len(base["invalid_expected"]["examples"]) == 10
    assert base["discovered"]["included"] is False
    lists = {entry["template"]: entry for entry in base["lists"]}
    assert lists["$.Lines"]["weak"] == lists["$.Tags"]["invented"] == 1
    assert lists["$.lines"]["discovered"] is True
    for options in ({"list_pairing": "strict"}, {"discovered": "include"}):
        changed = serial(records, **COUNTING, **options).to_report()
        assert changed["overall"]["counts"] != base["overall"]["counts"]
        assert changed["settings"] != base["settings"]


@pytest.mark.parametrize(
    ("options", "keep_rows"),
    [
        ({"list_pairing": "strict", "discovered": "include", **COUNTING}, True),
        ({"list_pairing": "stickler", **COUNTING}, False),
    ],
    ids=["strict-include-rows", "stickler-exclude-no-rows"],
)
def test_every_setting_gives_one_machines_report(
    spark: Any, options: dict[str, Any], keep_rows: bool
) -> None:
    records = rule_records()
    comparison = compare(spark, records, keep_rows=keep_rows, **options)
    try:
        one_machine = serial(records, keep_rows=keep_rows, **options)
        assert text(comparison.to_report()) == text(one_machine.to_report(intervals=False))
        assert comparison.macro_f1 == one_machine.macro_f1
        # The per-document results hold the scored documents only.
        assert comparison.documents.count() == one_machine.document_count == len(records) - 12
    finally:
        comparison.unpersist()


def test_without_collecting_documents_every_figure_is_the_same(spark: Any) -> None:
    records = rule_records()
    options = {"discovered": "include", **COUNTING}
    comparison = compare(spark, records, collect_documents=False, **options)
    try:
        report = comparison.to_report()
        assert report["documents"] == []
        expected = serial(records, keep_rows=False, **options).to_report(intervals=False)
        expected["documents"] = []
        assert text(report) == text(expected)
    finally:
        comparison.unpersist()


def test_wrong_shaped_ground_truth_stops_like_one_machine(spark: Any) -> None:
    records = rule_records()
    with pytest.raises(ShapeMismatchError) as alone:
        serial(records)
    with pytest.raises(ShapeMismatchError) as on_spark:
        compare(spark, records, keep_rows=False)
    assert str(on_spark.value) == str(alone.value)
    assert on_spark.value.context() == alone.value.context()
    assert on_spark.value.documents == 12


# --- errors ---------------------------------------------------------------------------


def _both_errors(spark: Any, records: list[dict[str, Any]]) -> tuple[str, DocEvalsError]:
    with pytest.raises(DocEvalsError) as on_spark:
        compare(spark, records)
    with pytest.raises(DocEvalsError) as alone:
        serial(records, chunk_size=4)
    assert type(on_spark.value) is type(alone.value)
    return str(alone.value), on_spark.value


def test_a_repeated_id_is_reported_like_one_machine(spark: Any) -> None:
    records = _records(9)
    records.append({**records[6]})
    expected, error = _both_errors(spark, records)
    assert str(error) == expected
    assert error.record == records[6]["id"]


def test_the_first_bad_document_in_input_order_wins(spark: Any) -> None:
    records = _records(9)
    records[2]["confidence"] = {"$.total": "very"}
    records.append({**records[1]})  # a repeated id, later in the input
    expected, error = _both_errors(spark, records)
    assert str(error) == expected
    assert isinstance(error, InputError)
    assert error.record == records[2]["id"]


def test_malformed_json_names_the_column_and_the_document(spark: Any) -> None:
    df = spark.createDataFrame(
        [("a", "{}", "{}"), ("b", '{"x": 1', "{}")], "doc string, truth string, guess string"
    )
    with pytest.raises(InputError) as caught:
        compare_documents_spark(df, id_col="doc", expected_col="truth", predicted_col="guess")
    assert caught.value.source == "column 'truth'"
    assert caught.value.record == "b"
    assert "malformed JSON" in str(caught.value)


def test_a_missing_column_is_named(spark: Any) -> None:
    df = spark.createDataFrame([("a", "{}")], "id string, expected string")
    with pytest.raises(InputError, match="no column 'predicted'"):
        compare_documents_spark(df)


def test_provider_fields_are_refused(spark: Any) -> None:
    df = spark.createDataFrame([("a", "{}", "{}")], "id string, expected string, predicted string")
    with pytest.raises(ConfigurationError, match=r"Spark: fields \$\.title"):
        compare_documents_spark(df, SEMANTIC_SCHEMA)


# --- MLflow ---------------------------------------------------------------------------


def test_logged_like_any_field_comparison(
    with_rows: SparkFieldComparison, mlflow_store: str
) -> None:
    from mlflow.tracking import MlflowClient

    from docevals_mlflow.tracking.api import log_field_comparison

    spark_run = with_rows.log(run_name="on-spark")
    one_machine_run = log_field_comparison(serial(documents()), run_name="one-machine")
    client = MlflowClient(mlflow_store)
    on_spark = client.get_run(spark_run.run_id).data
    alone = client.get_run(one_machine_run.run_id).data
    # Spark keeps no per-document cells per field, so its run has no intervals.
    without_intervals = {
        key: value for key, value in alone.metrics.items() if not key.endswith(("_low", "_high"))
    }
    assert on_spark.metrics == without_intervals
    assert on_spark.params == {**alone.params, "docevals.engine": "spark"}
    artifacts = {item.path for item in client.list_artifacts(spark_run.run_id, "results")}
    assert artifacts == {"results/documents.parquet", "results/fields.parquet"}
