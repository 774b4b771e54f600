"""Reading documents for a field comparison, and pairing expected with predicted by id.

Three input forms are accepted, on either side (Parquet in
:mod:`~docevals_mlflow.fields.parquet_inputs`):

* a **JSON Lines** file: one record per line, ``{"id": ..., "class"?: ..., "data": {...},
  "confidence"?: {...}, "explainability_info"?: ...}``. Blank lines are skipped; numeric
  ids become strings.
* a **folder** of ``<id>.json`` files: the id is the file stem and the file holds either
  the document's data itself, or a record as above (``id`` optional, and equal to the
  stem when given). A file is a record when it is an object with a ``data`` key and no
  key outside the record keys; anything else is bare data.
* **Parquet**: a file, or a folder of part files, one record per row with the same
  columns.

Every problem is an :class:`~docevals_mlflow.errors.InputError` whose ``source`` is the
path the user gave (the file or the folder) and whose ``record`` is ``line N`` or the
file name, so one line of output says where to look. JSON is read by
:func:`~docevals_mlflow.core.datafiles.parse_json` (repeated keys, ``NaN``, runaway
nesting and lone surrogates are errors with the field path), an input of no records
is an error, and a named pipe or device is refused before it is opened.

Pairing (:func:`pair_records`) keeps memory bounded by the number of *ids*, never by
the documents: the predicted side is indexed as id → byte offset (JSON Lines) or id →
file (folder), then the expected side is streamed and each predicted record is read
back when its partner comes by.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator, Iterator, KeysView, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import IO, Any, NamedTuple

from docevals_mlflow.core.datafiles import (
    UTF8_BOM,
    is_folder_input,
    json_files,
    open_file,
    parse_json,
    read_bytes_file,
)
from docevals_mlflow.core.gc import gc_paused
from docevals_mlflow.errors import DocEvalsError, InputError
from docevals_mlflow.fields.batch import DocumentPair
from docevals_mlflow.fields.confidence import confidence_map
from docevals_mlflow.fields.parquet_inputs import (
    ParquetReader,
    ParquetRow,
    is_parquet,
    scan_parquet,
    uncompressed_bytes,
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


def _jsonl_record(
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


def _folder_record(file: Path, *, source: str, check_confidence: bool = True) -> DocumentRecord:
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


def _check_exists(path: Path, what: str = "input") -> None:
    # A named pipe or a device is refused here, before anything opens it: reading a
    # pipe would wait for a writer forever.
    is_folder_input(path, what=what)


def _open_binary(path: Path) -> IO[bytes]:
    return open_file(path, what="input")


def _scan(
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
            yield _folder_record(file, source=source, check_confidence=check_confidence), file
        return
    records = 0
    with _open_binary(path) as handle:
        offset = 0
        # Iterating a binary file reads one line at a time: a file of any size
        # costs the memory of its longest line.
        for number, raw in enumerate(handle, start=1):
            line = raw.removeprefix(UTF8_BOM) if number == 1 else raw
            record = _jsonl_record(
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
    with _open_binary(path) as handle:
        # Counted in blocks: the first occurrence may sit gigabytes into the file.
        left = locator
        while left > 0:
            block = handle.read(min(left, 1 << 20))
            if not block:
                break
            newlines += block.count(b"\n")
            left -= len(block)
    return f"line {newlines + 1}"


def _index(path: Path, index: dict[str, Locator]) -> Iterator[DocumentRecord]:
    """Scan an input into ``index`` (id → locator), rejecting repeated ids; yields
    each record as it is indexed."""
    for record, locator in _scan(path):
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
    _check_exists(input_path)
    return _index(input_path, {})


# ---------------------------------------------------------------------------- pairing


class PairedRecords(NamedTuple):
    """The result of :func:`pair_records` (a tuple, so it also unpacks in three)."""

    pairs: Iterator[DocumentPair]
    """Paired documents in expected-side order; single use."""
    expected_only: list[str]
    """Ids with ground truth but no prediction, in expected-side order."""
    predicted_only: list[str]
    """Ids with a prediction but no ground truth, in predicted-side order."""


KEEP_PARSED_BYTES = 32 << 20
"""Inputs up to this size (both sides together) stay parsed after indexing instead
of being read and parsed a second time (20,000 small documents, 20 MB: 0.3 s of a
3.4 s run, for about 5 bytes of memory per byte of input). Larger inputs are
streamed, so memory stays bounded by the ids."""


def _ids(path: Path) -> dict[str, Locator]:
    """Every id of an input with where to read its record again (duplicates rejected)."""
    index: dict[str, Locator] = {}
    for _ in _index(path, index):
        pass
    return index


def _records(path: Path) -> dict[str, DocumentRecord]:
    """Every record of an input by id, in input order (duplicates rejected)."""
    # Kept records are acyclic and numerous: the collector would rescan them all
    # every few thousand allocations (half the reading time).
    with gc_paused():
        return {record.id: record for record in _index(path, {})}


def _input_bytes(path: Path) -> int:
    if is_parquet(path):
        # Compressed size says little about the parsed size: the data's own.
        return uncompressed_bytes(path)
    if path.is_dir():
        return sum(file.stat().st_size for file in path.glob("*.json"))
    return path.stat().st_size


def _pair(record: DocumentRecord, partner: DocumentRecord) -> DocumentPair:
    return DocumentPair(
        id=record.id,
        expected=record.data,
        predicted=partner.data,
        # The ground truth decides which schema class applies; the prediction's only
        # when the expected record names none.
        document_class=(
            record.document_class if record.document_class is not None else partner.document_class
        ),
        confidence=partner.confidence,
        explainability_info=partner.explainability_info,
        source=record.source,
        place=record.place,
    )


def _pairs_in_memory(
    expected: dict[str, DocumentRecord], predicted: dict[str, DocumentRecord]
) -> Iterator[DocumentPair]:
    for doc_id, record in expected.items():
        partner = predicted.get(doc_id)
        if partner is not None:
            yield _pair(record, partner)


def _changed(path: Path, doc_id: str) -> InputError:
    return InputError(
        f"the input changed while it was being read (id {doc_id!r})",
        source=str(path),
        expected="inputs that stay unchanged during the comparison",
    )


def pair_records(
    expected_path: str | os.PathLike[str], predicted_path: str | os.PathLike[str]
) -> PairedRecords:
    """Pair expected and predicted documents by id, in memory bounded by the ids.

    Returns ``(pairs, expected_only, predicted_only)``. Both unpaired lists are
    **complete when this returns**: both sides' ids are indexed first (id → byte
    offset in a JSON Lines file, id → file in a folder). Doing so
    up front costs one extra read of the expected side, but it means the lists can
    never be read too early, and every malformed record or duplicate id on either
    side is reported before any comparison work starts. Inputs up to
    :data:`KEEP_PARSED_BYTES` together keep the records parsed in the first read
    instead of reading them again.

    ``pairs`` then streams the expected side again and reads each partner from the
    predicted side by its offset or file. Each :class:`DocumentPair` carries the
    expected record's data, the predicted record's data, the expected record's class
    (or, when it has none, the predicted record's; when both name a class and they
    differ the expected one is used silently, since the ground truth decides which
    schema class applies), and the predicted record's ``confidence`` and
    ``explainability_info`` (confidence describes a prediction; any on the expected
    side is ignored).
    """
    expected = Path(expected_path)
    predicted = Path(predicted_path)
    # Named by side: with two inputs, "not found" alone leaves the user guessing which.
    _check_exists(expected, "expected input")
    _check_exists(predicted, "predicted input")
    if _input_bytes(expected) + _input_bytes(predicted) <= KEEP_PARSED_BYTES:
        predicted_records = _records(predicted)
        expected_records = _records(expected)
        return PairedRecords(
            _pairs_in_memory(expected_records, predicted_records),
            [doc_id for doc_id in expected_records if doc_id not in predicted_records],
            [doc_id for doc_id in predicted_records if doc_id not in expected_records],
        )
    predicted_index = _ids(predicted)
    # The expected index doubles as the set of expected ids; its locators are not
    # needed again, since the expected side is streamed in order.
    expected_index = _ids(expected)
    expected_only = [doc_id for doc_id in expected_index if doc_id not in predicted_index]
    predicted_only = [doc_id for doc_id in predicted_index if doc_id not in expected_index]
    return PairedRecords(
        _pairs(expected, predicted, expected_index.keys(), predicted_index),
        expected_only,
        predicted_only,
    )


def _pairs(
    expected: Path,
    predicted: Path,
    expected_ids: KeysView[str],
    predicted_index: dict[str, Locator],
) -> Iterator[DocumentPair]:
    handle: IO[bytes] | None = None
    parquet: ParquetReader | None = None
    scan = _scan(expected, check_confidence=False)
    try:
        for record, _ in scan:
            if record.id not in expected_ids:
                raise _changed(expected, record.id)
            locator = predicted_index.get(record.id)
            if locator is None:
                continue
            if isinstance(locator, Path):
                partner = _reread(
                    partial(_folder_record, locator, source=str(predicted), check_confidence=False),
                    predicted,
                )
            elif isinstance(locator, ParquetRow):
                if parquet is None:
                    parquet = ParquetReader(predicted)
                partner = _reread(partial(parquet.read, locator), predicted)
            else:
                if handle is None:
                    # One handle for the whole stream: seeking is cheap, reopening is not.
                    handle = _open_binary(predicted)
                partner = _reread(partial(_read_at, handle, locator, predicted), predicted)
            if partner is None or partner.id != record.id:
                raise _changed(predicted, record.id)
            yield _pair(record, partner)
    finally:
        scan.close()
        if handle is not None:
            handle.close()


def _reread(read: Callable[[], DocumentRecord | None], path: Path) -> DocumentRecord | None:
    # Every predicted record was read and checked once while indexing, so failing
    # to read it again means the file changed in between.
    try:
        return read()
    except InputError as exc:
        raise InputError(
            f"the input changed while it was being read ({exc.message})",
            source=str(path),
            expected="inputs that stay unchanged during the comparison",
        ) from None


def _read_at(handle: IO[bytes], offset: int, path: Path) -> DocumentRecord | None:
    handle.seek(offset)
    raw = handle.readline()
    if offset == 0:
        raw = raw.removeprefix(UTF8_BOM)
    # The line number is unknown from an offset and only matters for errors, which
    # _reread reports as a changed file.
    if not raw:
        return None
    return _jsonl_record(raw, source=str(path), line=0, check_confidence=False)


__all__ = ["RECORD_KEYS", "DocumentRecord", "PairedRecords", "pair_records", "read_records"]
