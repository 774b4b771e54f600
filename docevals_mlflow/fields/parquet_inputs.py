"""Parquet inputs of a field comparison, on one machine.

A Parquet file, or a folder of Parquet part files (as Spark and most lakehouse
exports write them), holds one document per row with the columns of a JSON Lines
record: ``id`` and ``data`` (required), ``class``, ``confidence`` and
``explainability_info``. Other columns are ignored. ``data`` (and the two optional
object columns) may be JSON text or struct, map and list columns; they are read the
way ``docevals fields --spark`` reads them, so both give the same report: text is
parsed as JSON, a struct field that is null is left out (Spark's ``to_json`` does
the same), decimals become numbers, dates ISO text and timestamps the text Spark
writes in a UTC session.

Rows are read a batch at a time; an error names the file and ``row N`` (1-based
within the file). A row is found again by ``(file, row group, row)``.
"""

from __future__ import annotations

import datetime as dt
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from docevals_mlflow.core.datafiles import check_file, parse_json
from docevals_mlflow.errors import InputError

if TYPE_CHECKING:
    import pyarrow as pa

    from docevals_mlflow.fields.records import DocumentRecord

COLUMNS = ("id", "class", "data", "confidence", "explainability_info")
_OBJECT_COLUMNS = ("data", "confidence", "explainability_info")
_BATCH_ROWS = 2048


class ParquetRow(NamedTuple):
    """Where a Parquet record is: its file, row group, row within the group, and
    place for messages (``row N``, with the part file's name in a folder)."""

    file: Path
    group: int
    row: int
    place: str


def _is_parquet_name(file: Path) -> bool:
    return file.suffix.lower() == ".parquet" and not file.name.startswith(".")


def _listed(folder: Path) -> list[Path]:
    try:
        return list(folder.iterdir())
    except OSError as exc:  # an unreadable folder: one line, not a traceback
        raise InputError(f"cannot list folder: {exc.strerror or exc}", source=str(folder)) from None


def is_parquet(path: Path) -> bool:
    """A ``.parquet`` file, or a folder holding Parquet files (as ``--spark`` decides:
    other files next to them, such as ``_SUCCESS`` or a ``.json`` note, are ignored)."""
    if path.is_dir():
        return any(_is_parquet_name(file) for file in _listed(path))
    return _is_parquet_name(path)


def parquet_files(path: Path) -> list[Path]:
    """The Parquet files of an input, in name order (Spark's part order)."""
    if path.is_dir():
        return sorted(file for file in _listed(path) if _is_parquet_name(file))
    return [path]


def uncompressed_bytes(path: Path) -> int:
    """The size of an input's data once decompressed (from the files' metadata)."""

    total = 0
    for file in parquet_files(path):
        metadata = _open(file, str(path)).metadata
        total += sum(metadata.row_group(i).total_byte_size for i in range(metadata.num_row_groups))
    return total


def _open(file: Path, source: str) -> Any:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        # Before pyarrow opens it: a named pipe would block, a folder fail obscurely.
        check_file(file)
    except InputError as exc:
        raise InputError(f"{file.name}: {exc.message}", source=source) from None
    try:
        return pq.ParquetFile(file)
    except (OSError, pa.ArrowException) as exc:
        raise InputError(
            f"cannot read {file.name} as Parquet: {exc}",
            source=source,
            expected="a Parquet file (or a folder of Parquet part files)",
        ) from None


def _same(value: Any) -> Any:
    return value


def converter(arrow_type: pa.DataType) -> Callable[[Any], Any]:
    """A function turning a Parquet value of ``arrow_type`` (as pyarrow gives it) into
    the JSON value Spark's ``to_json`` would write; built once per column."""
    import pyarrow as pa

    if pa.types.is_struct(arrow_type):
        fields = {
            arrow_type.field(i).name: converter(arrow_type.field(i).type)
            for i in range(arrow_type.num_fields)
        }

        def struct(value: Any) -> Any:
            if value is None:
                return None
            # A null struct field is left out, as to_json leaves it out.
            return {key: fields[key](item) for key, item in value.items() if item is not None}

        return struct
    if pa.types.is_map(arrow_type):
        item = converter(arrow_type.item_type)
        return lambda value: None if value is None else {str(k): item(v) for k, v in value}
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        element = converter(arrow_type.value_type)
        if element is _same:
            return _same
        return lambda value: None if value is None else [element(v) for v in value]
    if pa.types.is_decimal(arrow_type):
        return lambda value: None if value is None else float(value)
    if pa.types.is_timestamp(arrow_type):
        return lambda value: None if value is None else _timestamp_text(value)
    if pa.types.is_float32(arrow_type):
        # Spark writes a float by its shortest text, not the double it widens to.
        import numpy as np

        return lambda value: None if value is None else float(str(np.float32(value)))
    if pa.types.is_duration(arrow_type):
        return lambda value: None if value is None else value.total_seconds()
    if pa.types.is_temporal(arrow_type):
        return lambda value: None if value is None else value.isoformat()
    if pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type):
        return lambda value: None if value is None else value.decode("utf-8", errors="replace")
    return _same


def _timestamp_text(value: dt.datetime) -> str:
    """A timestamp as Spark's ``to_json`` writes it in a UTC session: milliseconds,
    and ``Z`` for a zoned one (converted to UTC)."""
    if value.tzinfo is not None:
        value = value.astimezone(dt.UTC)
        zone = "Z"
    else:
        zone = ""
    return value.strftime("%Y-%m-%dT%H:%M:%S") + f".{value.microsecond // 1000:03d}{zone}"


def _json_column(name: str) -> Callable[..., Any]:
    """The reader of a text column holding JSON."""

    def read(value: Any, *, source: str, record: str) -> Any:
        if value is None:
            return None
        # Strict, as JSON Lines and --spark read it: NaN, repeated keys, lone
        # surrogates and runaway nesting are refused with the field path.
        try:
            return parse_json(value, source=source, record=record)
        except InputError as exc:
            raise InputError(
                f"column {name!r} is not valid JSON ({exc.message})",
                source=source,
                record=record,
                path=exc.path,
                expected=exc.expected or "JSON text, or a struct, map or list column",
            ) from None

    return read


def _is_text(arrow_type: pa.DataType) -> bool:
    """Text or bytes, which hold JSON (Spark casts both to text)."""
    import pyarrow as pa

    checks = [
        pa.types.is_string,
        pa.types.is_large_string,
        pa.types.is_binary,
        pa.types.is_large_binary,
    ]
    checks += [
        check
        for name in ("is_string_view", "is_binary_view")  # pyarrow 16 and later
        if (check := getattr(pa.types, name, None)) is not None
    ]
    return any(check(arrow_type) for check in checks)


def column_readers(schema: pa.Schema, columns: list[str]) -> dict[str, Callable[..., Any]]:
    """Per object column present: how to read a value (``source``, ``record`` for
    errors)."""
    import pyarrow as pa

    readers: dict[str, Callable[..., Any]] = {}
    for name in _OBJECT_COLUMNS:
        if name not in columns:
            continue
        arrow_type = schema.field(name).type
        if pa.types.is_dictionary(arrow_type):  # a categorical column: its values decide
            arrow_type = arrow_type.value_type
        if _is_text(arrow_type):
            readers[name] = _json_column(name)
        else:
            convert = converter(arrow_type)
            readers[name] = lambda value, *, source, record, convert=convert: convert(value)
    return readers


def _read_group(handle: Any, group: int, columns: list[str], *, file: Path, source: str) -> Any:
    import pyarrow as pa

    try:
        return handle.read_row_group(group, columns=columns)
    except (OSError, pa.ArrowException) as exc:
        raise InputError(
            f"cannot read row group {group} of {file.name}: {exc}",
            source=source,
            expected="a readable Parquet file",
        ) from None


def _check_columns(names: list[str], *, file: Path, source: str) -> list[str]:
    missing = [name for name in ("id", "data") if name not in names]
    if missing:
        raise InputError(
            f"{file.name} has no column {', '.join(map(repr, missing))}",
            source=source,
            expected="columns id, data (and optionally class, confidence, explainability_info)",
        )
    return [name for name in COLUMNS if name in names]


def _record(
    row: dict[str, Any],
    readers: dict[str, Callable[..., Any]],
    *,
    file: Path,
    source: str,
    place: str,
    check_confidence: bool,
) -> DocumentRecord:
    from docevals_mlflow.fields.records import record_from_mapping

    obj: dict[str, Any] = {"id": row["id"]}
    if "class" in row:
        value = row["class"]
        obj["class"] = value if value is None or isinstance(value, str) else str(value)
    for name, read in readers.items():
        obj[name] = read(row[name], source=source, record=place)
    return record_from_mapping(
        obj, source=source, record=place, file=str(file), check_confidence=check_confidence
    )


def _place(file: Path, source: str, number: int) -> str:
    return f"row {number}" if file == Path(source) else f"{file.name} row {number}"


def scan_parquet(
    path: Path, *, check_confidence: bool = True
) -> Iterator[tuple[DocumentRecord, ParquetRow]]:
    """Every record of a Parquet input with where to find it again, in file order."""
    source = str(path)
    for file in parquet_files(path):
        handle = _open(file, source)
        columns = _check_columns(handle.schema_arrow.names, file=file, source=source)
        readers = column_readers(handle.schema_arrow, columns)
        number = 0
        for group in range(handle.num_row_groups):
            offset = 0
            # One row group at a time, in batches: memory stays at one group's size.
            table = _read_group(handle, group, columns, file=file, source=source)
            for batch in table.to_batches(_BATCH_ROWS):
                rows = batch.to_pylist()
                for index, row in enumerate(rows):
                    number += 1
                    place = _place(file, source, number)
                    record = _record(
                        row, readers, file=file, source=source, place=place,
                        check_confidence=check_confidence,
                    )  # fmt: skip
                    yield record, ParquetRow(file, group, offset + index, place)
                offset += len(rows)


CACHE_BYTES = 256 << 20
"""Row groups a :class:`ParquetReader` keeps, in decompressed bytes."""


class ParquetReader:
    """Reads records of a Parquet input again by :class:`ParquetRow`.

    Recently read row groups are kept (least recently used out first, up to
    :data:`CACHE_BYTES`): partners usually come in about the order of the expected
    side, so one group serves many lookups. Predictions in a wholly different order
    than the ground truth, in a file larger than the cache, cost a group read per
    lookup; inputs up to ``KEEP_PARSED_BYTES`` never get here.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.source = str(path)
        self._handles: dict[Path, tuple[Any, list[str], dict[str, Callable[..., Any]]]] = {}
        self._groups: OrderedDict[tuple[Path, int], Any] = OrderedDict()
        self._bytes = 0

    def _file(self, file: Path) -> tuple[Any, list[str], dict[str, Callable[..., Any]]]:
        opened = self._handles.get(file)
        if opened is None:
            handle = _open(file, self.source)
            columns = _check_columns(handle.schema_arrow.names, file=file, source=self.source)
            opened = self._handles[file] = (
                handle,
                columns,
                column_readers(handle.schema_arrow, columns),
            )
        return opened

    def _group(self, file: Path, group: int) -> Any:
        key = (file, group)
        table = self._groups.get(key)
        if table is not None:
            self._groups.move_to_end(key)
            return table
        handle, columns, _ = self._file(file)
        if group >= handle.num_row_groups:
            raise InputError("row group missing", source=self.source)
        table = _read_group(handle, group, columns, file=file, source=self.source)
        self._groups[key] = table
        self._bytes += table.nbytes
        while self._bytes > CACHE_BYTES and len(self._groups) > 1:
            _, oldest = self._groups.popitem(last=False)
            self._bytes -= oldest.nbytes
        return table

    def read(self, locator: ParquetRow) -> DocumentRecord:
        """The record at ``locator``.

        Raises:
            InputError: the file changed since it was indexed (the caller says so).
        """
        table = self._group(locator.file, locator.group)
        if locator.row >= table.num_rows:
            raise InputError("row missing", source=self.source)
        (row,) = table.slice(locator.row, 1).to_pylist()
        return _record(
            row, self._file(locator.file)[2], file=locator.file, source=self.source,
            place=locator.place, check_confidence=False,
        )  # fmt: skip
