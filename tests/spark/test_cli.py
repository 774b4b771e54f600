"""``docevals fields --spark``: JSON Lines and Parquet read through Spark give the
report one machine writes, and the same one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fields.test_parallel import _records
from tests.fields.test_properties import SCHEMA
from tests.helpers import assert_one_line_error, run, write_jsonl
from tests.tracking.test_cli_tracking import run_id_from

pytestmark = pytest.mark.spark


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[Path, Path, Path]:
    records = _records(40, rng_seed=9)
    expected = write_jsonl(
        tmp_path / "expected.jsonl",
        [{"id": r["id"], "class": r["class"], "data": r["expected"]} for r in records]
        + [{"id": "only-expected", "data": {"Account": "Z"}}],
    )
    predicted = write_jsonl(
        tmp_path / "predicted.jsonl",
        [{"id": "only-predicted", "data": {}}]
        + [
            {"id": r["id"], "data": r["predicted"], "confidence": {"$.account": 0.5}}
            for r in reversed(records)
        ],
    )
    schema = tmp_path / "schema.json"
    schema.write_text(SCHEMA.model_dump_json(), encoding="utf-8")
    return expected, predicted, schema


def fields(capsys: pytest.CaptureFixture[str], tmp_path: Path, *argv: Any) -> tuple[int, str, str]:
    return run(capsys, "fields", "--output", tmp_path / "report.json", *argv)


def report(tmp_path: Path) -> str:
    return (tmp_path / "report.json").read_text(encoding="utf-8")


def test_json_lines_through_spark(
    spark: Any,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    inputs: tuple[Path, Path, Path],
) -> None:
    expected, predicted, schema = inputs
    common = ("--expected", expected, "--predicted", predicted, "--schema", schema)
    # Spark keeps no per-document cells per field: its reports have no intervals.
    code, out, err = fields(capsys, tmp_path, *common, "--no-intervals")
    assert code == 0, err
    one_machine = report(tmp_path)
    code, spark_out, err = fields(capsys, tmp_path, *common, "--spark-master", "local[2]")
    assert code == 0, err
    assert report(tmp_path) == one_machine
    assert spark_out == out
    unpaired = json.loads(one_machine)["unpaired"]
    assert unpaired == {"expected_only": ["only-expected"], "predicted_only": ["only-predicted"]}


def test_parquet_through_spark(
    spark: Any,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    inputs: tuple[Path, Path, Path],
) -> None:
    import pandas as pd

    expected, predicted, schema = inputs
    code, _, err = fields(
        capsys, tmp_path, "--expected", expected, "--predicted", predicted, "--schema", schema,
        "--no-intervals",
    )  # fmt: skip
    assert code == 0, err
    one_machine = report(tmp_path)
    tables = {}
    for side in (expected, predicted):
        records = [json.loads(line) for line in side.read_text(encoding="utf-8").splitlines()]
        frame = pd.DataFrame(
            {
                "id": [record["id"] for record in records],
                "class": [record.get("class") for record in records],
                "data": [json.dumps(record["data"]) for record in records],
                "confidence": [
                    json.dumps(record["confidence"]) if "confidence" in record else None
                    for record in records
                ],
            }
        )
        tables[side] = tmp_path / f"{side.stem}.parquet"
        frame.to_parquet(tables[side])
    code, _, err = fields(
        capsys,
        tmp_path,
        "--expected", tables[expected],
        "--predicted", tables[predicted],
        "--schema", schema,
        "--spark",
    )  # fmt: skip
    assert code == 0, err
    assert report(tmp_path) == one_machine
    # The same Parquet files on one machine, in two processes.
    code, _, err = fields(
        capsys, tmp_path, "--expected", tables[expected], "--predicted", tables[predicted],
        "--schema", schema, "--workers", "2", "--no-intervals",
    )  # fmt: skip
    assert code == 0, err
    assert report(tmp_path) == one_machine


def test_nested_parquet_columns_read_alike_on_spark_and_one_machine(
    spark: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import datetime as dt
    import decimal

    import pyarrow as pa
    import pyarrow.parquet as pq

    item = pa.struct([("a", pa.int64()), ("b", pa.string())])
    schema = pa.schema(
        [
            ("id", pa.int64()),
            ("class", pa.string()),
            (
                "data",
                pa.struct(
                    [
                        ("total", pa.decimal128(10, 2)),
                        ("date", pa.date32()),
                        ("vendor", pa.string()),
                        ("lines", pa.list_(item)),
                        ("seen", pa.timestamp("us", tz="UTC")),
                        ("ratio", pa.float32()),
                    ]
                ),
            ),
            ("confidence", pa.map_(pa.string(), pa.float64())),
        ]
    )
    rows = [
        {
            "id": index,
            "class": "Invoice" if index % 2 else None,
            "data": {
                "total": decimal.Decimal(f"{index}.50"),
                "date": dt.date(2024, 1, 1 + index),
                "vendor": None if index % 3 else "ACME",
                "lines": [{"a": index, "b": None}, {"a": 2, "b": "x"}],
                "seen": dt.datetime(2024, 2, 1, 8, 30, index, 250000, tzinfo=dt.UTC),
                "ratio": 0.1 * index,
            },
            "confidence": [("$.total", 0.5 + index / 100)],
        }
        for index in range(12)
    ]
    table = pa.Table.from_pylist(rows, schema=schema)
    pq.write_table(table, tmp_path / "gt.parquet")
    changed = [{**row, "data": {**row["data"], "total": decimal.Decimal("1.00")}} for row in rows]
    pq.write_table(pa.Table.from_pylist(changed[::-1], schema=schema), tmp_path / "pred.parquet")
    common = ("--expected", tmp_path / "gt.parquet", "--predicted", tmp_path / "pred.parquet")
    code, _, err = fields(capsys, tmp_path, *common, "--no-intervals")
    assert code == 0, err
    one_machine = report(tmp_path)
    code, _, err = fields(capsys, tmp_path, *common, "--spark-master", "local[2]")
    assert code == 0, err
    assert report(tmp_path) == one_machine
    assert json.loads(one_machine)["overall"]["counts"]["fd"] == 12  # every total differs


@pytest.mark.parametrize(
    ("side", "line", "fragment"),
    [
        ("predicted", '{"id": "doc-3", "data": {"a": 1}', "malformed JSON"),
        ("expected", '{"id": "doc-1", "data": {}}', "duplicate id 'doc-1'"),
        ("expected", '{"id": "doc-9", "data": {}, "extra": 1}', "unknown record key"),
    ],
)
def test_bad_input_fails_as_on_one_machine(
    spark: Any,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    inputs: tuple[Path, Path, Path],
    side: str,
    line: str,
    fragment: str,
) -> None:
    expected, predicted, _ = inputs
    target = expected if side == "expected" else predicted
    lines = target.read_text(encoding="utf-8").splitlines()
    lines.insert(5, line)
    lines.insert(2, "")  # a blank line still counts as a line
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    common = ("--expected", expected, "--predicted", predicted)
    code, _, err = fields(capsys, tmp_path, *common)
    assert code == 2
    assert_one_line_error(err, fragment, str(target))
    code, _, spark_err = fields(capsys, tmp_path, *common, "--spark")
    assert code == 2
    assert spark_err == err


def test_workers_and_spark_do_not_mix(
    spark: Any,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    inputs: tuple[Path, Path, Path],
) -> None:
    expected, predicted, _ = inputs
    code, _, err = fields(
        capsys, tmp_path, "--expected", expected, "--predicted", predicted, "--spark",
        "--workers", "2",
    )  # fmt: skip
    assert code == 2
    assert_one_line_error(err, "--workers is for one machine")


def test_a_spark_run_is_logged_like_any_other_with_its_engine(
    spark: Any,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    inputs: tuple[Path, Path, Path],
    mlflow_store: str,
) -> None:
    from mlflow.tracking import MlflowClient

    expected, predicted, schema = inputs
    common = ("--expected", expected, "--predicted", predicted, "--schema", schema)
    runs = {}
    # Spark keeps no per-document cells per field: its runs have no intervals.
    alone = ("--no-intervals",)
    for name, extra in (("alone", alone), ("spark", ("--spark-master", "local[2]"))):
        code, out, err = fields(capsys, tmp_path, *common, "--run-name", name, *extra)
        assert code == 0, err
        runs[name] = MlflowClient(mlflow_store).get_run(run_id_from(out)).data
    assert runs["spark"].params == {**runs["alone"].params, "docevals.engine": "spark"}
    assert runs["spark"].metrics == runs["alone"].metrics


@pytest.mark.parametrize(
    ("ids", "message"),
    [
        ([1.0, 2.0], "invalid id column of type double"),
        (["a", None], "invalid id None"),
        (["a", ""], "invalid id ''"),
    ],
)
def test_parquet_ids_one_machine_refuses_are_refused_on_spark(
    spark: Any,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    ids: list[Any],
    message: str,
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    truth = tmp_path / "truth.parquet"
    pq.write_table(pa.table({"id": ids, "data": ['{"v": 1}'] * len(ids)}), truth)
    common = ("--expected", truth, "--predicted", truth)
    code, _, alone = fields(capsys, tmp_path, *common)
    assert code == 2
    assert "invalid id" in alone
    code, _, err = fields(capsys, tmp_path, *common, "--spark-master", "local[2]")
    assert code == 2
    assert_one_line_error(err, message, str(truth))


@pytest.fixture
def wrong_shapes(inputs: tuple[Path, Path, Path]) -> tuple[Path, Path, Path]:
    """The inputs with ground truth of the wrong shape in three documents (lines 4,
    11 and 30 of the expected file) and a blank line before them."""
    expected, predicted, schema = inputs
    records = [json.loads(line) for line in expected.read_text(encoding="utf-8").splitlines()]
    for index in (2, 9, 28):
        wrong = (
            {"Store": {"name": "x"}} if records[index]["class"] == "Receipt" else {"Account": [1]}
        )
        records[index]["data"] = {**records[index]["data"], **wrong}
    lines = [json.dumps(record) for record in records]
    lines.insert(1, "")
    expected.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return expected, predicted, schema


def test_comparison_settings_through_spark(
    spark: Any,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    wrong_shapes: tuple[Path, Path, Path],
) -> None:
    expected, predicted, schema = wrong_shapes
    common = ("--expected", expected, "--predicted", predicted, "--schema", schema)
    # Wrong-shaped ground truth stops both, with the same one-line error (line 4).
    code, _, err = fields(capsys, tmp_path, *common)
    assert code == 2
    assert_one_line_error(err, str(expected), "line 4", "2 more documents too")
    code, _, spark_err = fields(capsys, tmp_path, *common, "--spark")
    assert code == 2
    assert spark_err == err
    settings = ("--allow-shape-mismatch", "--discovered", "include", "--list-pairing", "strict")
    code, out, err = fields(capsys, tmp_path, *common, *settings, "--no-intervals")
    assert code == 0, err
    one_machine = report(tmp_path)
    code, spark_out, spark_err = fields(capsys, tmp_path, *common, *settings, "--spark")
    assert code == 0, spark_err
    assert report(tmp_path) == one_machine
    assert (spark_out, spark_err) == (out, err)
    written = json.loads(one_machine)
    assert written["settings"] == {
        "list_pairing": "strict",
        "discovered": "include",
        "shape_mismatch": "count",
    }
    assert [example["line"] for example in written["invalid_expected"]["examples"]] == [
        "line 4",
        "line 11",
        "line 30",
    ]


def test_wrong_shaped_parquet_rows_are_placed_like_one_machine(
    spark: Any,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    wrong_shapes: tuple[Path, Path, Path],
) -> None:
    import pandas as pd

    expected, predicted, schema = wrong_shapes
    records = [
        json.loads(line) for line in expected.read_text(encoding="utf-8").splitlines() if line
    ]
    truth = tmp_path / "truth.parquet"
    pd.DataFrame(
        {
            "id": [record["id"] for record in records],
            "class": [record.get("class") for record in records],
            "data": [json.dumps(record["data"]) for record in records],
        }
    ).to_parquet(truth)
    common = ("--expected", truth, "--predicted", predicted, "--schema", schema)
    code, _, err = fields(capsys, tmp_path, *common)
    assert code == 2
    assert_one_line_error(err, f"{truth}, record row 3", "2 more documents too")
    code, _, spark_err = fields(capsys, tmp_path, *common, "--spark")
    assert code == 2
    assert spark_err == err


def test_a_repeated_parquet_id_is_placed_by_row_like_one_machine(
    spark: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    truth = tmp_path / "truth.parquet"
    pq.write_table(pa.table({"id": ["a", "b", "a"], "data": ['{"v": 1}'] * 3}), truth)
    common = ("--expected", truth, "--predicted", truth)
    code, _, alone = fields(capsys, tmp_path, *common)
    assert code == 2
    assert_one_line_error(alone, "duplicate id 'a' (row 1 and row 3)")
    code, _, err = fields(capsys, tmp_path, *common, "--spark")
    assert code == 2
    assert err == alone
