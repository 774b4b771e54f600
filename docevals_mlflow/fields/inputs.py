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
from collections.abc import Callable, Iterator, KeysView
from functools import partial
from pathlib import Path
from typing import IO, NamedTuple

from docevals_mlflow.core.datafiles import (
    UTF8_BOM,
)
from docevals_mlflow.core.gc import gc_paused
from docevals_mlflow.errors import InputError
from docevals_mlflow.fields.batch import DocumentPair
from docevals_mlflow.fields.parquet_inputs import (
    ParquetReader,
    ParquetRow,
    is_parquet,
    uncompressed_bytes,
)
from docevals_mlflow.fields.records import (
    RECORD_KEYS,
    DocumentRecord,
    Locator,
    check_exists,
    folder_record,
    index_records,
    jsonl_record,
    open_binary,
    read_records,
    record_from_mapping,
    scan_records,
)

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
    for _ in index_records(path, index):
        pass
    return index


def _records(path: Path) -> dict[str, DocumentRecord]:
    """Every record of an input by id, in input order (duplicates rejected)."""
    # Kept records are acyclic and numerous: the collector would rescan them all
    # every few thousand allocations (half the reading time).
    with gc_paused():
        return {record.id: record for record in index_records(path, {})}


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
    check_exists(expected, "expected input")
    check_exists(predicted, "predicted input")
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
    scan = scan_records(expected, check_confidence=False)
    try:
        for record, _ in scan:
            if record.id not in expected_ids:
                raise _changed(expected, record.id)
            locator = predicted_index.get(record.id)
            if locator is None:
                continue
            if isinstance(locator, Path):
                partner = _reread(
                    partial(folder_record, locator, source=str(predicted), check_confidence=False),
                    predicted,
                )
            elif isinstance(locator, ParquetRow):
                if parquet is None:
                    parquet = ParquetReader(predicted)
                partner = _reread(partial(parquet.read, locator), predicted)
            else:
                if handle is None:
                    # One handle for the whole stream: seeking is cheap, reopening is not.
                    handle = open_binary(predicted)
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
    return jsonl_record(raw, source=str(path), line=0, check_confidence=False)


__all__ = [
    "RECORD_KEYS",
    "DocumentRecord",
    "PairedRecords",
    "pair_records",
    "read_records",
    "record_from_mapping",
]
