"""Reading the expected and predicted sides of ``docevals text`` and pairing them.

Two inputs, both of one form:

* two **folders** of ``.txt``/``.md``/``.html`` (or ``.htm``) files, searched through
  their sub-folders and paired by relative path, extension included (``scans/p1.txt``
  with ``scans/p1.txt``); each file is one document of one page. Dot files and other
  extensions are skipped;
* two **JSON Lines** files (``.jsonl``/``.ndjson``) of records
  ``{"id": ..., "text": ...}``, ``{"id": ..., "html": ...}`` or
  ``{"id": ..., "table": ...}`` (HTML, or a cell grid: a list of rows of texts), with an
  optional ``"page"`` (a whole number from 1) to give one document's pages as separate
  records; records pair by ``id`` and ``page``. Other keys are ignored;
* two single ``.txt``/``.md``/``.html`` **files**: one document, named after the
  expected file.

``.html`` files and ``html``/``table`` records are tables (TEDS); ``.txt``/``.md`` files and
``text`` records are text (CER, WER...), unless a kind is forced: as tables, ``.md`` files
are Markdown pipe tables and other texts HTML; as text, HTML is compared as its source text.
The expected side decides a document's kind.

A page with no prediction is scored as an empty prediction (CER 1, TEDS 0) and listed in
:attr:`PairedInputs.missing`; a prediction with no expected page is listed in
:attr:`PairedInputs.extra` and not scored. Files that are not UTF-8, duplicate records
and empty inputs are :class:`InputError`\\ s naming the file, line and byte.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from docevals_mlflow.core.datafiles import (
    check_file,
    decode_text,
    is_folder_input,
    json_lines,
    read_bytes_file,
    record_id,
)
from docevals_mlflow.errors import InputError

Kind = Literal["text", "table"]
KindChoice = Literal["auto", "text", "table"]
TableFormat = Literal["html", "markdown"]
InputForm = Literal["folders", "jsonl", "files"]
Value = str | list[list[str]]

SUFFIXES: dict[str, Kind] = {".txt": "text", ".md": "text", ".html": "table", ".htm": "table"}
"""File extensions read from folders, and the kind each is scored as by default."""
JSON_LINES_SUFFIXES = (".jsonl", ".ndjson")
RECORD_KINDS: dict[str, Kind] = {"text": "text", "html": "table", "table": "table"}
"""The key of a JSON Lines record that holds its content, and the kind it means."""
_RECORD_SHAPE = '{"id": ..., "text"|"html"|"table": ..., "page": N (optional)}'


@dataclass(frozen=True)
class Page:
    """One expected page (a file, or a record) and its prediction (``None``: missing)."""

    document: str
    page: int | None
    kind: Kind
    format: TableFormat
    expected: Value
    predicted: Value | None

    @property
    def name(self) -> str:
        """``document``, or ``document page N`` for a page of a paged document."""
        return self.document if self.page is None else f"{self.document} page {self.page}"


@dataclass(frozen=True)
class PairedInputs:
    """Every expected page with its prediction, and the names left unpaired."""

    form: InputForm
    pages: tuple[Page, ...]
    missing: tuple[str, ...]
    """Expected pages with no prediction (scored as empty predictions)."""
    extra: tuple[str, ...]
    """Predictions with no expected page (not scored)."""


def _kind_of(default: Kind, choice: KindChoice) -> Kind:
    return default if choice == "auto" else choice


# --- folders and single files -----------------------------------------------------------


def folder_documents(folder: Path) -> dict[str, Path]:
    """``relative/path.ext`` → file, for every file of a known extension (sorted);
    a folder without any is an :class:`InputError`."""
    found: dict[str, Path] = {}
    for root, folders, files in os.walk(folder, followlinks=False):
        # Dot folders (.git, .ipynb_checkpoints) and dot files (macOS ._name forks) are
        # not documents.
        folders[:] = sorted(name for name in folders if not name.startswith("."))
        for name in sorted(files):
            path = Path(root) / name
            if name.startswith(".") or path.suffix.lower() not in SUFFIXES:
                continue
            check_file(path)  # a named pipe would block the read forever
            found[path.relative_to(folder).as_posix()] = path
    if not found:
        raise InputError(
            "folder has no .txt, .md or .html files",
            source=str(folder),
            expected="one file per document (sub-folders are searched)",
        )
    return found


def _file_page(name: str, path: Path, predicted: Path | None, choice: KindChoice) -> Page:
    suffix = path.suffix.lower()
    kind = _kind_of(SUFFIXES[suffix], choice)
    guessed = (
        None
        if predicted is None
        else decode_text(read_bytes_file(predicted), source=str(predicted))
    )
    return Page(
        document=name,
        page=None,
        kind=kind,
        format="markdown" if kind == "table" and suffix == ".md" else "html",
        expected=decode_text(read_bytes_file(path), source=str(path)),
        predicted=guessed,
    )


def _folders(expected: Path, predicted: Path, choice: KindChoice) -> PairedInputs:
    want, got = folder_documents(expected), folder_documents(predicted)
    pages = tuple(_file_page(name, path, got.get(name), choice) for name, path in want.items())
    return PairedInputs(
        form="folders",
        pages=pages,
        missing=tuple(name for name in want if name not in got),
        extra=tuple(name for name in got if name not in want),
    )


def _single_files(expected: Path, predicted: Path, choice: KindChoice) -> PairedInputs:
    for path in (expected, predicted):
        if path.suffix.lower() not in SUFFIXES:
            raise InputError(
                f"cannot read {path.suffix or 'a file without extension'} as a document",
                source=str(path),
                expected="two folders, two .jsonl files, or two .txt/.md/.html files",
            )
    page = _file_page(expected.name, expected, predicted, choice)
    return PairedInputs(form="files", pages=(page,), missing=(), extra=())


# --- JSON Lines -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Record:
    document: str
    page: int | None
    key: str
    value: Value | None
    line: int


def _record_page(value: Any, source: str, record: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    raise InputError(
        f"invalid page {value!r}",
        source=source,
        record=record,
        path="page",
        expected="a whole number from 1",
    )


def _content(
    value: dict[str, Any], side: str, source: str, record: str
) -> tuple[str, Value | None]:
    keys = [key for key in RECORD_KINDS if key in value]
    if len(keys) != 1:
        found = "none of them" if not keys else " and ".join(repr(key) for key in keys)
        raise InputError(
            f"a record holds one of 'text', 'html' or 'table', this one {found}",
            source=source,
            record=record,
            expected=_RECORD_SHAPE,
        )
    key = keys[0]
    content = value[key]
    if content is None and side == "predicted":
        return key, None  # a model that gave nothing: an empty prediction
    if isinstance(content, str):
        return key, content
    if key == "table" and _is_grid(content):
        return key, content
    wanted = "a string (HTML) or a list of rows of strings" if key == "table" else "a string"
    raise InputError(
        f"invalid {key} {type(content).__name__}",
        source=source,
        record=record,
        path=key,
        expected=wanted + (" or null" if side == "predicted" else ""),
    )


def _is_grid(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(row, list) and all(isinstance(cell, str) for cell in row) for row in value
    )


def _json_lines(path: Path, side: str) -> Iterator[_Record]:
    source = str(path)
    for number, record, value in json_lines(path, one_line="one record per line (JSON Lines)"):
        if not isinstance(value, dict):
            raise InputError(
                f"a record must be an object, not {type(value).__name__}",
                source=source,
                record=record,
                expected=_RECORD_SHAPE,
            )
        document = record_id(value.get("id"), source=source, record=record)
        page = _record_page(value.get("page"), source, record)
        key, content = _content(value, side, source, record)
        yield _Record(document, page, key, content, number)


def _records(path: Path, side: str) -> dict[tuple[str, int | None], _Record]:
    """The records of a side by (id, page); duplicates and paged/unpaged mixes refused."""
    found: dict[tuple[str, int | None], _Record] = {}
    paged: dict[str, _Record] = {}
    for item in _json_lines(path, side):
        key = (item.document, item.page)
        first = found.get(key)
        if first is not None:
            what = f"id {item.document!r}" + (f" page {item.page}" if item.page is not None else "")
            raise InputError(
                f"duplicate record: {what} is on lines {first.line} and {item.line}",
                source=str(path),
                record=f"line {item.line}",
                expected="each id (and page) once per file",
            )
        other = paged.setdefault(item.document, item)
        if (other.page is None) != (item.page is None):
            raise InputError(
                f"id {item.document!r} has records with and without 'page' "
                f"(lines {other.line} and {item.line})",
                source=str(path),
                record=f"line {item.line}",
                expected="a 'page' on every record of a paged document, or on none",
            )
        found[key] = item
    if not found:
        raise InputError(
            "no records: the file is empty or holds only blank lines",
            source=str(path),
            expected=_RECORD_SHAPE,
        )
    return found


def _record_page_of(
    want: _Record, got: _Record | None, choice: KindChoice, sources: tuple[Path, Path]
) -> Page:
    kind = _kind_of(RECORD_KINDS[want.key], choice)
    if kind == "text":
        for record, source in ((want, sources[0]), (got, sources[1])):
            if record is not None and isinstance(record.value, list):
                raise InputError(
                    "a cell grid cannot be scored as text",
                    source=str(source),
                    record=f"line {record.line}",
                    path=record.key,
                    expected="a string, or --kind table",
                )
    assert want.value is not None  # the expected side never reads null
    return Page(
        want.document, want.page, kind, "html", want.value, None if got is None else got.value
    )


def _jsonl(expected: Path, predicted: Path, choice: KindChoice) -> PairedInputs:
    want, got = _records(expected, "expected"), _records(predicted, "predicted")
    pages = tuple(
        _record_page_of(record, got.get(key), choice, (expected, predicted))
        for key, record in want.items()
    )
    names = {key: Page(key[0], key[1], "text", "html", "", None).name for key in (*want, *got)}
    return PairedInputs(
        form="jsonl",
        pages=pages,
        missing=tuple(names[key] for key in want if key not in got),
        extra=tuple(names[key] for key in got if key not in want),
    )


def read_text_pairs(
    expected: str | os.PathLike[str],
    predicted: str | os.PathLike[str],
    *,
    kind: KindChoice = "auto",
) -> PairedInputs:
    """Read both sides (two folders, two JSON Lines files or two files) and pair them.

    Raises:
        InputFileNotFoundError: a side does not exist.
        InputError: the two sides are of different forms, a side is empty, a file is not
            UTF-8 (naming the byte, line and column), a record is malformed or repeated.
    """
    if kind not in ("auto", "text", "table"):
        raise InputError(f"kind {kind!r}", expected="auto, text or table")
    left, right = Path(expected), Path(predicted)
    folders = (
        is_folder_input(left, what="expected input"),
        is_folder_input(right, what="predicted input"),
    )
    if folders == (True, True):
        return _folders(left, right, kind)
    if folders != (False, False):
        folder, other = (left, right) if folders[0] else (right, left)
        raise InputError(
            f"{folder} is a folder but {other} is a file",
            expected="two folders, two .jsonl files, or two .txt/.md/.html files",
        )
    lines = [path.suffix.lower() in JSON_LINES_SUFFIXES for path in (left, right)]
    if all(lines):
        return _jsonl(left, right, kind)
    if any(lines):
        raise InputError(
            f"{left if lines[0] else right} is JSON Lines but the other side is not",
            expected="two folders, two .jsonl files, or two .txt/.md/.html files",
        )
    return _single_files(left, right, kind)


def names_line(names: Sequence[str], limit: int = 5) -> str:
    """The first ``limit`` names, quoted, and how many more there are."""
    shown = ", ".join(repr(name) for name in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


__all__ = [
    "JSON_LINES_SUFFIXES",
    "RECORD_KINDS",
    "SUFFIXES",
    "Kind",
    "KindChoice",
    "Page",
    "folder_documents",
    "PairedInputs",
    "names_line",
    "read_text_pairs",
]
