"""Reading document records from an input: a JSON Lines file, a folder of
``<id>.json`` files or Parquet (the forms and their errors are described in
:mod:`~docevals_mlflow.fields.inputs`), one record at a time, each id remembered with
where to read its record again."""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from docevals_mlflow.core.datafiles import (
    UTF8_BOM,
    is_folder_input,
    json_files,
    open_file,
    parse_json,
    read_bytes_file,
)
from docevals_mlflow.errors import DocEvalsError, InputError
from docevals_mlflow.fields.confidence import confidence_map
from docevals_mlflow.fields.parquet_inputs import (
    ParquetRow,
    is_parquet,
    scan_parquet,
)

RECORD_KEYS: tuple[str, ...] = ("id", "class", "data", "confidence", "explainability_info")
"""The keys a record may have (``data`` is required; ``id`` too in JSON Lines)."""
_RECORD_KEY_SET = frozenset(RECORD_KEYS)
_ALLOWED_TEXT = ", ".join(RECORD_KEYS)


@dataclass(frozen=True, slots=True)
class DocumentRecord:
    """One document as read from an input: its id, class, data and confidence.

    ``source`` is the file the record came from (the JSON Lines file, or the
    ``<id>.json`` file inside a folder); ``line`` is its 1-based line number in a JSON
    Lines file and ``None`` for a folder file.
    """

    id: str
    document_class: str | None
    data: Any
    confidence: Mapping[str, Any] | None
    explainability_info: Any
    source: str
    line: int | None
    where: str | None = None
    """The place for messages when it is neither a line nor a file (a Parquet row)."""

    @property
    def place(self) -> str:
        """Where the record is inside its input: ``line N``, ``row N`` or the file name."""
        if self.where is not None:
            return self.where
        return f"line {self.line}" if self.line is not None else Path(self.source).name


Locator = int | Path | ParquetRow
"""Where to read a record again: a byte offset in a JSON Lines file, a folder file, or
a Parquet row."""


# ---------------------------------------------------------------------------- parsing


def _record_id(value: Any, *, source: str, record: str) -> str:
    # Booleans are ints in Python but never meant as ids; floats would turn 1 and 1.0
    # into different ids, so only strings and integers are taken.
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise InputError(
        f"invalid id {value!r}",
        source=source,
        record=record,
        expected="a non-empty string or an integer",
    )


def record_from_mapping(
    obj: Mapping[str, Any], *, source: str, record: str, file: str, check_confidence: bool
) -> DocumentRecord:
    """A record from a mapping of record keys (a Parquet row), placed at ``record``."""
    doc_id = _record_id(obj.get("id"), source=source, record=record)
    return _from_record(
        obj,
        doc_id=doc_id,
        source=source,
        record=record,
        file=file,
        line=None,
        check_confidence=check_confidence,
        where=record,
    )


def _from_record(
    obj: Mapping[str, Any],
    *,
    doc_id: str,
    source: str,
    record: str,
    file: str,
    line: int | None,
    check_confidence: bool,
    where: str | None = None,
) -> DocumentRecord:
    document_class = obj.get("class")
    if document_class is not None and not isinstance(document_class, str):
        raise InputError(
            f"invalid class {document_class!r}", source=source, record=record, expected="a string"
        )
    confidence = obj.get("confidence")
    if confidence is not None and not isinstance(confidence, Mapping):
        raise InputError(
            f"invalid confidence {confidence!r}",
            source=source,
            record=record,
            expected="an object mapping field paths to numbers",
        )
    explainability_info = obj.get("explainability_info")
    if check_confidence and (confidence is not None or explainability_info is not None):
        # Checked here, where the file and line are known; the comparison would
        # otherwise fail on it later with only the field path to go by. Records read
        # a second time (while pairing) were checked on the first read.
        try:
            confidence_map(explainability_info=explainability_info, confidence=confidence)
        except DocEvalsError as exc:
            raise exc.located(source=source, record=record) from None
    return DocumentRecord(
        id=doc_id,
        document_class=document_class,
        data=obj["data"],
        confidence=confidence,
        explainability_info=explainability_info,
        source=file,
        line=line,
        where=where,
    )


def jsonl_record(
    raw: bytes, *, source: str, line: int, check_confidence: bool = True
) -> DocumentRecord | None:
    """The record on one JSON Lines line, or ``None`` for a blank line."""
    if not raw.strip():
        return None
    record = f"line {line}"
    # Without its line break, so that an error at the end of the line is reported
    # on this line (the decoder would otherwise place it at "line 2, column 1").
    obj = parse_json(
        raw.rstrip(b"\r\n"),
        source=source,
        record=record,
        one_line="one JSON object per line (JSON Lines)",
        # Records read again (while pairing) were fully checked on the first read.
        reread=not check_confidence,
    )
    if not isinstance(obj, dict):
        raise InputError(
            f"a record must be a JSON object, got {_json_type(obj)}",
            source=source,
            record=record,
            expected=f"an object with keys {_ALLOWED_TEXT}",
        )
    unknown = sorted(set(obj) - _RECORD_KEY_SET)
    if unknown:
        raise InputError(
            f"unknown record key(s) {', '.join(map(repr, unknown))}",
            source=source,
            record=record,
            expected=f"only {_ALLOWED_TEXT}",
        )
    if "data" not in obj:
        raise InputError(
            "record has no 'data'",
            source=source,
            record=record,
            expected="the document's data under 'data'",
        )
    if "id" not in obj:
        raise InputError(
            "record has no 'id'",
            source=source,
            record=record,
            expected="an 'id' to pair documents by",
        )
    doc_id = _record_id(obj["id"], source=source, record=record)
    return _from_record(
        obj,
        doc_id=doc_id,
        source=source,
        record=record,
        file=source,
        line=line,
        check_confidence=check_confidence,
    )


def _is_record(obj: Any) -> bool:
    return isinstance(obj, dict) and "data" in obj and set(obj) <= _RECORD_KEY_SET


def folder_record(file: Path, *, source: str, check_confidence: bool = True) -> DocumentRecord:
    record = file.name
    try:
        raw = read_bytes_file(file)
    except InputError as exc:
        # Named as the input the user gave, with the file as the record.
        raise InputError(exc.message, source=source, record=record) from None
    obj = parse_json(
        raw.removeprefix(UTF8_BOM), source=source, record=record, reread=not check_confidence
    )
    doc_id = file.stem
    if not _is_record(obj):
        # The file is the document's data itself (any JSON value: ``null`` is a
        # prediction that extracted nothing).
        return DocumentRecord(doc_id, None, obj, None, None, str(file), None)
    if "id" in obj:
        named = _record_id(obj["id"], source=source, record=record)
        if named != doc_id:
            raise InputError(
                f"record id {named!r} differs from the file name's id {doc_id!r}",
                source=source,
                record=record,
                expected="no 'id', or the file stem",
            )
    return _from_record(
        obj,
        doc_id=doc_id,
        source=source,
        record=record,
        file=str(file),
        line=None,
        check_confidence=check_confidence,
    )


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__


# ---------------------------------------------------------------------------- scanning


def check_exists(path: Path, what: str = "input") -> None:
    """Refuse a missing input, named as ``what``."""
    # A named pipe or a device is refused here, before anything opens it: reading a
    # pipe would wait for a writer forever.
    is_folder_input(path, what=what)


def open_binary(path: Path) -> IO[bytes]:
    """The input file opened for reading bytes."""
    return open_file(path, what="input")


def scan_records(
    path: Path, *, check_confidence: bool = True
) -> Generator[tuple[DocumentRecord, Locator], None, None]:
    """Every record of an input with where to read it again, lazily, in file order.

    An input without a single record (an empty file, blank lines only, a Parquet
    file of no rows) is an error: it is far more likely the wrong file than a
    deliberate empty side.
    """
    folder = is_folder_input(path)
    source = str(path)
    if is_parquet(path):
        rows = 0
        for found in scan_parquet(path, check_confidence=check_confidence):
            rows += 1
            yield found
        if not rows:
            raise _no_records(path, "the input has no rows", "at least one row")
        return
    if folder:
        for file in json_files(path, expected="one <id>.json file per document"):
            yield folder_record(file, source=source, check_confidence=check_confidence), file
        return
    records = 0
    with open_binary(path) as handle:
        offset = 0
        # Iterating a binary file reads one line at a time: a file of any size
        # costs the memory of its longest line.
        for number, raw in enumerate(handle, start=1):
            line = raw.removeprefix(UTF8_BOM) if number == 1 else raw
            record = jsonl_record(
                line, source=source, line=number, check_confidence=check_confidence
            )
            if record is not None:
                records += 1
                yield record, offset
            offset += len(raw)
    if not records:
        raise _no_records(
            path, "the input is empty or holds only blank lines", "one JSON object per line"
        )


def _no_records(path: Path, why: str, expected: str) -> InputError:
    return InputError(f"no records: {why}", source=str(path), expected=expected)


def _place_of(path: Path, locator: Locator) -> str:
    """``line N`` or the file name of a record already read.

    Only needed to report a duplicate id, so line numbers are recounted from the
    byte offset then rather than remembered for every record.
    """
    if isinstance(locator, Path):
        return locator.name
    if isinstance(locator, ParquetRow):
        return locator.place
    newlines = 0
    with open_binary(path) as handle:
        # Counted in blocks: the first occurrence may sit gigabytes into the file.
        left = locator
        while left > 0:
            block = handle.read(min(left, 1 << 20))
            if not block:
                break
            newlines += block.count(b"\n")
            left -= len(block)
    return f"line {newlines + 1}"


def index_records(path: Path, index: dict[str, Locator]) -> Iterator[DocumentRecord]:
    """Scan an input into ``index`` (id → locator), rejecting repeated ids; yields
    each record as it is indexed."""
    for record, locator in scan_records(path):
        first = index.setdefault(record.id, locator)
        if first != locator:
            raise InputError(
                f"duplicate id {record.id!r} ({_place_of(path, first)} and {record.place})",
                source=str(path),
                record=record.place,
                expected="each id once per side",
            )
        yield record


def read_records(path: str | os.PathLike[str]) -> Iterator[DocumentRecord]:
    """Stream the records of a JSON Lines file or a folder of ``<id>.json`` files.

    Records are read one at a time (a JSON Lines file is never loaded whole), so an
    error about a record is raised when that record is reached; it names the input
    and ``line N`` or the file name. A repeated id is an error naming both places.
    Only the ids seen so far (and where) are remembered. A missing path is reported
    at once, before iteration.
    """
    input_path = Path(path)
    check_exists(input_path)
    return index_records(input_path, {})
