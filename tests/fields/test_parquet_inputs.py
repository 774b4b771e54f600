"""Parquet inputs on one machine: the same records as JSON Lines, and precise errors."""

from __future__ import annotations

import datetime as dt
import decimal
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from docevals_mlflow.errors import InputError
from docevals_mlflow.fields.batch import compare_documents
from docevals_mlflow.fields.inputs import pair_records, read_records
from tests.fields.test_parallel import _records
from tests.fields.test_properties import SCHEMA
from tests.helpers import write_jsonl


def report_of(expected: Path, predicted: Path) -> str:
    pairs, expected_only, predicted_only = pair_records(expected, predicted)
    batch = compare_documents(
        pairs, SCHEMA, expected_only=expected_only, predicted_only=predicted_only
    )
    return json.dumps(batch.to_report(), default=repr)


def sides(count: int = 120) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    records = _records(count, rng_seed=4)
    expected = [{"id": r["id"], "class": r["class"], "data": r["expected"]} for r in records]
    predicted = [
        {"id": r["id"], "data": r["predicted"], "confidence": {"$.account": 0.25}}
        for r in reversed(records)
    ]
    return expected, [*predicted, {"id": "only-predicted", "data": {}}]


def as_text_parquet(path: Path, records: list[dict[str, Any]], group: int = 25) -> Path:
    """JSON text columns, several row groups."""
    columns: dict[str, list[Any]] = {"id": [record["id"] for record in records]}
    for name in ("class", "data", "confidence"):
        if any(name in record for record in records):
            values = [record.get(name) for record in records]
            columns[name] = (
                values
                if name == "class"
                else [None if value is None else json.dumps(value) for value in values]
            )
    pq.write_table(pa.table(columns), path, row_group_size=group)
    return path


def test_json_text_columns_give_the_json_lines_report(tmp_path: Path, pairing_mode: str) -> None:
    expected, predicted = sides()
    jsonl = report_of(
        write_jsonl(tmp_path / "gt.jsonl", expected),
        write_jsonl(tmp_path / "pred.jsonl", predicted),
    )
    parquet = report_of(
        as_text_parquet(tmp_path / "gt.parquet", expected),
        as_text_parquet(tmp_path / "pred.parquet", predicted, group=7),
    )
    assert parquet == jsonl


def test_a_folder_of_part_files_is_one_input(tmp_path: Path, pairing_mode: str) -> None:
    expected, predicted = sides(60)
    folder = tmp_path / "pred"
    folder.mkdir()
    for part, start in enumerate(range(0, len(predicted), 25)):
        as_text_parquet(folder / f"part-{part:05d}.parquet", predicted[start : start + 25])
    (folder / "_SUCCESS").write_text("")
    jsonl = report_of(
        write_jsonl(tmp_path / "gt.jsonl", expected), write_jsonl(tmp_path / "p.jsonl", predicted)
    )
    assert report_of(write_jsonl(tmp_path / "gt2.jsonl", expected), folder) == jsonl


def test_nested_columns_read_as_spark_writes_them(tmp_path: Path) -> None:
    # Decimals become numbers, dates ISO text, null struct fields are left out, maps
    # become objects (as Spark's to_json writes them).
    schema = pa.schema(
        [
            ("id", pa.int64()),
            (
                "data",
                pa.struct(
                    [
                        ("total", pa.decimal128(10, 2)),
                        ("date", pa.date32()),
                        ("vendor", pa.string()),
                        ("lines", pa.list_(pa.struct([("a", pa.int64()), ("b", pa.string())]))),
                    ]
                ),
            ),
            ("confidence", pa.map_(pa.string(), pa.float64())),
        ]
    )
    row = {
        "id": 7,
        "data": {
            "total": decimal.Decimal("10.50"),
            "date": dt.date(2024, 1, 15),
            "vendor": None,
            "lines": [{"a": 1, "b": None}],
        },
        "confidence": [("$.total", 0.9)],
    }
    path = tmp_path / "x.parquet"
    pq.write_table(pa.Table.from_pylist([row], schema=schema), path)
    (record,) = list(read_records(path))
    assert record.id == "7"
    assert record.data == {"total": 10.5, "date": "2024-01-15", "lines": [{"a": 1}]}
    assert record.confidence == {"$.total": 0.9}
    assert record.place == "row 1"


def test_timestamps_and_floats_read_as_spark_writes_them(tmp_path: Path) -> None:
    schema = pa.schema(
        [
            ("id", pa.string()),
            (
                "data",
                pa.struct(
                    [
                        ("zoned", pa.timestamp("us", tz="Europe/Paris")),
                        ("naive", pa.timestamp("ms")),
                        ("single", pa.float32()),
                    ]
                ),
            ),
        ]
    )
    moment = dt.datetime(2024, 7, 15, 10, 0, 0, 654321, tzinfo=dt.UTC)
    row = {"id": "a", "data": {"zoned": moment, "naive": dt.datetime(2024, 1, 15), "single": 0.1}}
    pq.write_table(pa.Table.from_pylist([row], schema=schema), tmp_path / "t.parquet")
    (record,) = list(read_records(tmp_path / "t.parquet"))
    # Spark's to_json in a UTC session: milliseconds, Z; a float32 by its shortest text.
    assert record.data == {
        "zoned": "2024-07-15T10:00:00.654Z",
        "naive": "2024-01-15T00:00:00.000",
        "single": 0.1,
    }


def test_errors_name_the_file_row_and_column(tmp_path: Path) -> None:
    no_data = tmp_path / "no_data.parquet"
    pq.write_table(pa.table({"id": ["a"], "payload": ["{}"]}), no_data)
    with pytest.raises(InputError, match=r"no_data\.parquet has no column 'data'") as raised:
        list(read_records(no_data))
    assert raised.value.source == str(no_data)

    bad_json = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"id": ["a", "b"], "data": ["{}", "{oops"]}), bad_json)
    with pytest.raises(InputError, match=r"record row 2: column 'data' is not valid JSON"):
        list(read_records(bad_json))

    repeated = tmp_path / "repeated.parquet"
    pq.write_table(pa.table({"id": ["a", "b", "a"], "data": ["{}", "{}", "{}"]}), repeated)
    with pytest.raises(InputError, match=r"duplicate id 'a' \(row 1 and row 3\)"):
        list(read_records(repeated))

    no_id = tmp_path / "no_id.parquet"
    pq.write_table(pa.table({"id": ["a", None], "data": ["{}", "{}"]}), no_id)
    with pytest.raises(InputError, match=r"record row 2: invalid id None"):
        list(read_records(no_id))

    not_parquet = tmp_path / "broken.parquet"
    not_parquet.write_text("not parquet")
    with pytest.raises(InputError, match=r"cannot read broken\.parquet as Parquet"):
        list(read_records(not_parquet))


def test_a_part_file_is_named_in_a_folder(tmp_path: Path) -> None:
    folder = tmp_path / "parts"
    folder.mkdir()
    pq.write_table(pa.table({"id": ["a"], "data": ["{}"]}), folder / "part-0.parquet")
    pq.write_table(pa.table({"id": ["b"], "data": ["[1"]}), folder / "part-1.parquet")
    with pytest.raises(InputError, match=r"record part-1\.parquet row 1: column 'data'"):
        list(read_records(folder))


def test_categorical_and_binary_json_columns_are_parsed(tmp_path: Path) -> None:
    texts = ['{"a": 1}', '{"a": 2}']
    for name, column in (
        ("dictionary", pa.array(texts).dictionary_encode()),
        ("binary", pa.array([text.encode() for text in texts], type=pa.binary())),
    ):
        path = tmp_path / f"{name}.parquet"
        pq.write_table(pa.table({"id": ["x", "y"], "data": column}), path)
        assert [record.data for record in read_records(path)] == [{"a": 1}, {"a": 2}], name


def test_a_folder_with_parquet_files_is_parquet_whatever_else_it_holds(tmp_path: Path) -> None:
    folder = tmp_path / "export"
    folder.mkdir()
    pq.write_table(pa.table({"id": ["a"], "data": ['{"v": 1}']}), folder / "part-0.parquet")
    (folder / "meta.json").write_text("{}", encoding="utf-8")
    (folder / "_SUCCESS").write_text("", encoding="utf-8")
    assert [(record.id, record.data) for record in read_records(folder)] == [("a", {"v": 1})]


def test_unreadable_row_groups_and_durations(tmp_path: Path) -> None:
    corrupt = tmp_path / "corrupt.parquet"
    rows = [{"id": str(i), "data": json.dumps({"a": i, "t": "x" * 50})} for i in range(2000)]
    pq.write_table(pa.Table.from_pylist(rows), corrupt, compression="snappy")
    data = bytearray(corrupt.read_bytes())
    for index in range(200, 4000):  # the data pages; the footer stays readable
        data[index] = (data[index] * 7 + 13) % 256
    corrupt.write_bytes(bytes(data))
    with pytest.raises(InputError, match=r"cannot read row group 0 of corrupt\.parquet"):
        list(read_records(corrupt))

    durations = tmp_path / "durations.parquet"
    schema = pa.schema([("id", pa.string()), ("data", pa.struct([("wait", pa.duration("s"))]))])
    row = {"id": "a", "data": {"wait": dt.timedelta(minutes=2)}}
    pq.write_table(pa.Table.from_pylist([row], schema=schema), durations)
    assert [record.data for record in read_records(durations)] == [{"wait": 120.0}]
