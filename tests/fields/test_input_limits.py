"""Documents for ``docevals fields`` that used to pass silently or end in a traceback:
repeated keys, non-finite numbers, runaway nesting, lone surrogates, empty inputs,
named pipes and unreadable files. Each is now one error naming the input, the record
(``line N``, the file, ``row N``) and the field."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from docevals_mlflow.core import input_files
from docevals_mlflow.core.datafiles import MAX_NESTING
from docevals_mlflow.errors import InputError
from docevals_mlflow.fields.inputs import pair_records, read_records
from tests.helpers import assert_one_line_error, needs_fifo, run, write_jsonl


def lines(path: Path, *texts: str) -> Path:
    path.write_text("".join(text + "\n" for text in texts), encoding="utf-8")
    return path


def read_error(path: Path) -> InputError:
    with pytest.raises(InputError) as caught:
        list(read_records(path))
    assert caught.value.__cause__ is None
    return caught.value


GOOD = '{"id": "a", "data": {"total": 1}}'


# ----------------------------------------------------------------- JSON Lines records


@pytest.mark.parametrize(
    ("record", "path", "message"),
    [
        (
            '{"id": "b", "data": {"total": 1, "total": 2}}',
            "$.data.total",
            "duplicate key 'total' at column 34",
        ),
        ('{"id": "b", "id": "c", "data": {}}', "$.id", "duplicate key 'id' at column 13"),
        ('{"id": "b", "data": {"x": [1, NaN]}}', "$.data.x[1]", "NaN is not valid JSON"),
        ('{"id": "b", "data": {"x": -Infinity}}', "$.data.x", "-Infinity is not valid JSON"),
        ('{"id": "b", "data": {"x": 2e999}}', "$.data.x", "2e999 does not fit a 64-bit float"),
        ('{"id": "b", "data": {"x": "\\udc00"}}', "$.data.x", "a lone UTF-16 surrogate"),
    ],
)
def test_refused_values_name_line_and_field(
    tmp_path: Path, record: str, path: str, message: str
) -> None:
    source = lines(tmp_path / "docs.jsonl", GOOD, "", record)
    error = read_error(source)
    assert error.source == str(source)
    assert error.record == "line 3"
    assert error.path == path
    assert message in error.message


@pytest.mark.parametrize("depth", [MAX_NESTING, 10_000])
def test_deep_nesting_is_an_error_naming_the_line(tmp_path: Path, depth: int) -> None:
    # The record itself is a level: data nested MAX_NESTING deep is one too many.
    deep = "[" * depth + "]" * depth
    source = lines(tmp_path / "docs.jsonl", GOOD, f'{{"id": "b", "data": {deep}}}')
    error = read_error(source)
    assert error.record == "line 2"
    assert "nesting deeper than 1,000 levels at column" in error.message


def test_nesting_within_the_limit_is_read(tmp_path: Path) -> None:
    deep = "[" * (MAX_NESTING - 1) + "]" * (MAX_NESTING - 1)
    source = lines(tmp_path / "docs.jsonl", f'{{"id": "b", "data": {deep}}}')
    (record,) = read_records(source)
    assert isinstance(record.data, list)


def test_invalid_utf8_names_line_and_column(tmp_path: Path) -> None:
    source = tmp_path / "docs.jsonl"
    source.write_bytes(GOOD.encode() + b'\n{"id": "b", "data": {"x": "caf\xe9"}}\n')
    error = read_error(source)
    assert str(error) == (
        f"{source}, record line 2: not valid UTF-8 text (byte 30: invalid continuation byte) "
        "at column 31"
    )


def test_a_long_integer_is_kept_exact(tmp_path: Path) -> None:
    digits = "9" * 400
    source = lines(tmp_path / "docs.jsonl", f'{{"id": "b", "data": {{"x": {digits}}}}}')
    (record,) = read_records(source)
    assert record.data == {"x": int(digits)}


def test_a_confidence_no_float_can_hold_is_refused(tmp_path: Path) -> None:
    source = lines(
        tmp_path / "docs.jsonl",
        f'{{"id": "b", "data": {{"x": 1}}, "confidence": {{"x": {"9" * 400}}}}}',
    )
    error = read_error(source)
    assert error.record == "line 1"
    assert error.path == "$.x"
    assert error.message.startswith("confidence must be finite, got 9999")


@pytest.mark.parametrize("content", ["", "\n\n  \n", "\ufeff\n"])
def test_an_input_without_records_is_an_error(tmp_path: Path, content: str) -> None:
    source = tmp_path / "docs.jsonl"
    source.write_text(content, encoding="utf-8")
    error = read_error(source)
    assert str(error) == (
        f"{source}: no records: the input is empty or holds only blank lines "
        "(expected one JSON object per line)"
    )


def test_an_empty_side_fails_pairing_before_anything_is_compared(
    tmp_path: Path, pairing_mode: str
) -> None:
    expected = lines(tmp_path / "expected.jsonl", GOOD)
    predicted = lines(tmp_path / "predicted.jsonl", "")
    with pytest.raises(InputError, match="no records") as caught:
        pair_records(expected, predicted)
    assert caught.value.source == str(predicted)


def test_repeated_keys_are_found_on_either_side_in_both_pairing_modes(
    tmp_path: Path, pairing_mode: str
) -> None:
    expected = lines(tmp_path / "expected.jsonl", GOOD, '{"id": "b", "data": {"x": 1}}')
    predicted = lines(tmp_path / "predicted.jsonl", '{"id": "b", "data": {"x": 1, "x": 1}}', GOOD)
    with pytest.raises(InputError, match="duplicate key 'x'") as caught:
        pair_records(expected, predicted)
    assert caught.value.source == str(predicted)
    assert caught.value.record == "line 1"
    # A clean pair of inputs still pairs (the second read skips the checks).
    clean = lines(tmp_path / "clean.jsonl", '{"id": "b", "data": {"x": 2}}', GOOD)
    paired = pair_records(expected, clean)
    assert [pair.id for pair in paired.pairs] == ["a", "b"]


# ----------------------------------------------------------------- folders


def test_a_folder_file_with_a_repeated_key(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.json").write_text('{"total": 1}', encoding="utf-8")
    (folder / "b.json").write_text('{\n  "total": 1,\n  "total": 2\n}', encoding="utf-8")
    error = read_error(folder)
    assert str(error) == (
        f"{folder}, record b.json, at $.total: duplicate key 'total' at line 3, column 3 "
        "(expected each key once per object)"
    )


@needs_fifo
def test_a_named_pipe_in_a_folder_is_refused(tmp_path: Path, deadline: None) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.json").write_text("{}", encoding="utf-8")
    os.mkfifo(folder / "b.json")
    assert "b.json is a named pipe, not a file" in str(read_error(folder))


def test_an_unreadable_folder_file_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.json").write_text("{}", encoding="utf-8")

    def refuse(*args: Any, **kwargs: Any) -> int:
        raise PermissionError(13, "Permission denied")

    # Tests may run as root, which reads anything: refuse the open itself.
    monkeypatch.setattr(input_files.os, "open", refuse)
    error = read_error(folder)
    assert str(error) == f"{folder}, record a.json: cannot read: Permission denied"


# ----------------------------------------------------------------- not a file


@needs_fifo
def test_a_named_pipe_is_refused_before_it_is_opened(tmp_path: Path, deadline: None) -> None:
    pipe = tmp_path / "docs.jsonl"
    os.mkfifo(pipe)
    with pytest.raises(InputError, match="this is a named pipe, not a file or folder"):
        read_records(pipe)
    expected = lines(tmp_path / "expected.jsonl", GOOD)
    with pytest.raises(InputError, match="this is a named pipe") as caught:
        pair_records(expected, pipe)
    assert caught.value.source == str(pipe)


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_a_device_is_refused(deadline: None) -> None:
    with pytest.raises(InputError, match="/dev/zero: this is a device, not a file or folder"):
        read_records("/dev/zero")


def test_an_unreadable_file_names_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = lines(tmp_path / "docs.jsonl", GOOD)

    def refuse(*args: Any, **kwargs: Any) -> int:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(input_files.os, "open", refuse)
    assert str(read_error(source)) == f"{source}: cannot read: Permission denied"


# ----------------------------------------------------------------- Parquet


def test_a_parquet_file_without_rows(tmp_path: Path) -> None:
    path = tmp_path / "docs.parquet"
    pq.write_table(
        pa.table({"id": pa.array([], pa.string()), "data": pa.array([], pa.string())}), path
    )
    assert (
        str(read_error(path))
        == f"{path}: no records: the input has no rows (expected at least one row)"
    )


def test_parquet_json_text_is_read_strictly(tmp_path: Path) -> None:
    path = tmp_path / "docs.parquet"
    pq.write_table(pa.table({"id": ["a", "b"], "data": ['{"x": 1}', '{"x": 1, "x": 2}']}), path)
    error = read_error(path)
    assert error.record == "row 2"
    assert error.path == "$.x"
    assert error.message == (
        "column 'data' is not valid JSON (duplicate key 'x' at line 1, column 10)"
    )


@needs_fifo
def test_a_named_pipe_among_parquet_parts(tmp_path: Path, deadline: None) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    pq.write_table(pa.table({"id": ["a"], "data": ["{}"]}), folder / "part-0.parquet")
    os.mkfifo(folder / "part-1.parquet")
    assert "part-1.parquet: this is a named pipe, not a file" in str(read_error(folder))


# ----------------------------------------------------------------- the command


@pytest.mark.parametrize(
    ("records", "fragments"),
    [
        (
            ['{"id": "a", "data": {"t": 1, "t": 2}}'],
            ("record line 1", "at $.data.t", "duplicate key 't'"),
        ),
        (
            ['{"id": "a", "data": ' + "[" * 10_000 + "]" * 10_000 + "}"],
            ("record line 1", "nesting deeper than 1,000 levels"),
        ),
        (['{"id": "a", "data": {"t": "\\ud800"}}'], ("at $.data.t", "lone UTF-16 surrogate")),
        (['{"id": "a", "data": {"t": NaN}}'], ("at $.data.t", "NaN is not valid JSON")),
        (["", "  "], ("no records",)),
    ],
)
def test_fields_exits_2_with_one_line(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    records: list[str],
    fragments: tuple[str, ...],
) -> None:
    expected = lines(tmp_path / "expected.jsonl", *records)
    predicted = write_jsonl(tmp_path / "predicted.jsonl", [{"id": "a", "data": {"t": 1}}])
    output = tmp_path / "report.json"
    code, _, err = run(
        capsys,
        "fields",
        "--expected",
        expected,
        "--predicted",
        predicted,
        "--output",
        output,
        "--no-mlflow",
    )
    assert code == 2
    assert_one_line_error(err, f"docevals: error: {expected}", *fragments)
    assert not output.exists()


@needs_fifo
def test_fields_refuses_a_named_pipe_schema(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, deadline: None
) -> None:
    schema = tmp_path / "schema.yaml"
    os.mkfifo(schema)
    docs = write_jsonl(tmp_path / "docs.jsonl", [{"id": "a", "data": {"t": 1}}])
    code, _, err = run(
        capsys, "fields", "--schema", schema, "--expected", docs, "--predicted", docs,
        "--output", tmp_path / "report.json", "--no-mlflow",
    )  # fmt: skip
    assert code == 2
    assert_one_line_error(err, f"{schema}: this is a named pipe, not a file")


def test_fields_refuses_a_yaml_alias_bomb_schema(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, deadline: None
) -> None:
    levels = "".join(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 9))
    schema = tmp_path / "schema.yaml"
    schema.write_text(
        "classes:\n- name: Doc\n  fields: {t: {method: EXACT}}\nl0: &l0 [lol, lol, lol]\n" + levels,
        encoding="utf-8",
    )
    docs = write_jsonl(tmp_path / "docs.jsonl", [{"id": "a", "data": {"t": 1}}])
    code, _, err = run(
        capsys, "fields", "--schema", schema, "--expected", docs, "--predicted", docs,
        "--output", tmp_path / "report.json", "--no-mlflow",
    )  # fmt: skip
    assert code == 2
    assert_one_line_error(err, str(schema), "aliases repeat more than 10,000 nodes", "line ")
