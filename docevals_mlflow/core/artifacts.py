"""References with an authority level, and loading them from files or values."""

from __future__ import annotations

import csv
import io
import json
import mimetypes
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import Field, model_validator

from docevals_mlflow.core.datafiles import check_file, load_json_file, open_file, read_text_file
from docevals_mlflow.core.fingerprints import canonical_json
from docevals_mlflow.core.literals import ArtifactKind, Authority, ComparisonMode, ContentFormat
from docevals_mlflow.core.model import FrozenModel
from docevals_mlflow.core.paths import FieldPath, format_path, parse_path
from docevals_mlflow.errors import InputError

INLINE_SCHEME = "inline://"

PATH_COLUMNS = ("path", "field_path")
"""Column names that make a table a path table, in order of preference."""
VALUE_COLUMNS = ("expected", "expected_value", "value")
"""Column names holding the expected value of a path-table row, in order of preference."""

_IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".webp": "image/webp",
    ".gif": "image/gif",
    ".tif": "image/tiff",
    ".tiff": "image/tiff",
    ".bmp": "image/bmp",
}
_TEXT_TYPES = {
    ".txt": "text/plain",
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".rst": "text/x-rst",
    # HTML references are the tables a parser should produce: their text is the
    # content the table metrics compare (never rendered, never sent anywhere).
    ".html": "text/html",
    ".htm": "text/html",
}
_TABLE_DELIMITERS = {".csv": ",", ".tsv": "\t"}
_TABLE_TYPES = {".csv": "text/csv", ".tsv": "text/tab-separated-values"}


def _is_path_table(rows: Any) -> bool:
    if not isinstance(rows, list) or not rows:
        return False
    return all(
        isinstance(row, Mapping)
        and any(column in row for column in PATH_COLUMNS)
        and any(column in row for column in VALUE_COLUMNS)
        for row in rows
    )


class ReferenceArtifact(FrozenModel):
    """One reference for a case: a file or an inline value, with its authority.

    ``authority`` says how far it may be trusted: ``evidence`` (raw source, can be
    wrong), ``generated`` (provisional, AI-generated) or ``ground_truth``
    (authoritative). ``content`` holds parsed text or structured data; images, PDFs
    and other files keep only their ``path``.
    """

    id: str = Field(min_length=1)
    path: str = Field(min_length=1)
    kind: ArtifactKind
    authority: Authority
    comparison_mode: ComparisonMode = "auto"
    media_type: str | None = None
    content: Any = None
    content_format: ContentFormat | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _check_content(self) -> ReferenceArtifact:
        if self.kind == "text" and self.content is not None and not isinstance(self.content, str):
            raise ValueError(f"reference {self.id!r}: text content must be a string")
        if self.kind == "structured" and self.content is None:
            raise ValueError(f"reference {self.id!r}: structured reference without content")
        if self.content_format is None and self.content is not None:
            inferred: ContentFormat
            if isinstance(self.content, str):
                inferred = "text"
            elif _is_path_table(self.content):
                inferred = "path_table"
            else:
                inferred = "json"
            object.__setattr__(self, "content_format", inferred)
        if self.content_format == "path_table" and not _is_path_table(self.content):
            raise ValueError(
                f"reference {self.id!r}: a path table needs rows with one of "
                f"{'/'.join(PATH_COLUMNS)} and one of {'/'.join(VALUE_COLUMNS)}"
            )
        return self

    @property
    def is_inline(self) -> bool:
        """True when the reference is a value rather than a file on disk."""
        return self.path.startswith(INLINE_SCHEME)

    @property
    def exact_comparable(self) -> bool:
        """Whether deterministic metrics may flatten and compare this reference.

        ``auto``: JSON values and path tables are exact-comparable, ordinary tables and
        text are not (a judge reads those); ``exact``: any structured content is;
        ``semantic``: never.
        """
        if self.kind != "structured" or self.comparison_mode == "semantic":
            return False
        if self.comparison_mode == "exact":
            return True
        return self.content_format in ("json", "path_table")


def artifact_from_value(
    value: Any,
    *,
    authority: Authority,
    artifact_id: str,
    comparison_mode: ComparisonMode = "auto",
    metadata: Mapping[str, Any] | None = None,
) -> ReferenceArtifact:
    """Wrap an in-memory value as a reference: text for ``str``, structured otherwise.

    A list of rows with ``path``/``field_path`` and ``expected``/``expected_value``/
    ``value`` keys is a path table, exactly as if it had been read from a CSV file.
    """
    source = f"{INLINE_SCHEME}{artifact_id}"
    if isinstance(value, str):
        kind: ArtifactKind = "text"
        media_type = "text/plain"
    else:
        try:
            value = json.loads(canonical_json(value))
        except InputError as exc:
            raise InputError(exc.message, source=source, expected=exc.expected) from None
        kind = "structured"
        media_type = "application/json"
    return ReferenceArtifact(
        id=artifact_id,
        path=source,
        kind=kind,
        authority=authority,
        comparison_mode=comparison_mode,
        media_type=media_type,
        content=value,
        metadata=dict(metadata or {}),
    )


def artifact_from_path(
    path: str | os.PathLike[str],
    *,
    authority: Authority,
    artifact_id: str | None = None,
    comparison_mode: ComparisonMode = "auto",
    metadata: Mapping[str, Any] | None = None,
) -> ReferenceArtifact:
    """Load a reference from a file, choosing its kind by extension.

    * ``.json``: structured (parsed);
    * ``.csv`` / ``.tsv``: structured rows; a path table when it has path and
      expected-value columns, an ordinary table otherwise;
    * ``.txt`` / ``.md`` / ``.markdown`` / ``.rst``: text;
    * ``.png`` ``.jpg`` ``.jpeg`` ``.webp`` ``.gif`` ``.tif`` ``.tiff`` ``.bmp``: image
      (signature checked, no content);
    * ``.pdf``: PDF (signature checked, no content);
    * anything else: a plain file.

    The id defaults to the file name without its extension.

    Raises:
        InputFileNotFoundError: the file does not exist.
        InputError: the file cannot be parsed as its extension says.
    """
    file_path = Path(path)
    check_file(file_path)
    ref_id = artifact_id or file_path.stem
    kind, media_type, content, content_format = _read_content(file_path)
    return ReferenceArtifact(
        id=ref_id,
        path=str(file_path),
        kind=kind,
        authority=authority,
        comparison_mode=comparison_mode,
        media_type=media_type,
        content=content,
        content_format=content_format,
        metadata=dict(metadata or {}),
    )


def _read_content(file_path: Path) -> tuple[ArtifactKind, str, Any, ContentFormat | None]:
    """The kind, media type, content and content format of a reference file, read
    as its extension says (see :func:`artifact_from_path`)."""
    suffix = file_path.suffix.lower()
    kind: ArtifactKind
    content: Any = None
    content_format: ContentFormat | None = None
    if suffix == ".json":
        kind, media_type = "structured", "application/json"
        content, content_format = load_json_file(file_path), "json"
    elif suffix in _TABLE_DELIMITERS:
        kind, media_type = "structured", _TABLE_TYPES[suffix]
        content, lines = _read_table(file_path)
        content_format = "path_table" if _is_path_table(content) else "table"
        if content_format == "path_table":
            check_path_table(content, source=str(file_path), places=[f"line {n}" for n in lines])
    elif suffix in _TEXT_TYPES:
        kind, media_type = "text", _TEXT_TYPES[suffix]
        content, content_format = read_text_file(file_path), "text"
    elif suffix in _IMAGE_TYPES:
        kind, media_type = "image", _IMAGE_TYPES[suffix]
        _check_signature(file_path, media_type)
    elif suffix == ".pdf":
        kind, media_type = "pdf", "application/pdf"
        _check_signature(file_path, media_type)
    else:
        kind = "file"
        media_type = mimetypes.guess_type(file_path.name)[0] or "application/octet-stream"
    return kind, media_type, content, content_format


def load_table_file(path: Path) -> list[dict[str, str]]:
    """Read a CSV/TSV file with a header row into a list of row dicts.

    A missing header, duplicate or empty column names, a header in the other
    format's delimiter (a ``.tsv`` separated by commas), a header with no rows, and
    rows with more cells than the header are reported with the file and line.
    """
    return _read_table(path)[0]


# What a table separated by the wrong character shows: one header cell holding it.
_OTHER_DELIMITERS = {",": ("\t", ";"), "\t": (",", ";")}
_DELIMITER_NAMES = {",": "commas", "\t": "tabs", ";": "semicolons"}


def _read_table(path: Path) -> tuple[list[dict[str, str]], list[int]]:
    """The rows of a CSV/TSV file and the line each starts on."""
    delimiter = _TABLE_DELIMITERS.get(path.suffix.lower(), ",")
    text = read_text_file(path)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    try:
        header = next(reader, None)
        if header is None or not any(cell.strip() for cell in header):
            raise InputError("empty table: a header row is required", source=str(path))
        columns = [cell.strip() for cell in header]
        if len(columns) == 1:
            other = next((o for o in _OTHER_DELIMITERS[delimiter] if o in columns[0]), None)
            if other is not None:
                raise InputError(
                    f"the header is one column {columns[0]!r}, separated by "
                    f"{_DELIMITER_NAMES[other]}",
                    source=str(path),
                    record="line 1",
                    expected=f"columns separated by {_DELIMITER_NAMES[delimiter]} in a "
                    f"{path.suffix.lower() or '.csv'} file",
                )
        seen: set[str] = set()
        for column in columns:
            if not column:
                raise InputError("empty column name in header", source=str(path), record="line 1")
            if column in seen:
                raise InputError(
                    f"duplicate column {column!r} in header", source=str(path), record="line 1"
                )
            seen.add(column)
        rows: list[dict[str, str]] = []
        lines: list[int] = []
        # A quoted cell may span lines; a row starts right after the previous one.
        ended = reader.line_num
        for cells in reader:
            start, ended = ended + 1, reader.line_num
            if not cells or not any(cell.strip() for cell in cells):
                continue
            if len(cells) > len(columns):
                raise InputError(
                    f"{len(cells)} cells but the header has {len(columns)} columns",
                    source=str(path),
                    record=f"line {start}",
                )
            padded = cells + [""] * (len(columns) - len(cells))
            rows.append(dict(zip(columns, padded, strict=True)))
            lines.append(start)
    except csv.Error as exc:
        raise InputError(
            f"malformed table: {exc}", source=str(path), record=f"line {reader.line_num}"
        ) from None
    if not rows:
        raise InputError(
            "the table has a header but no rows", source=str(path), expected="one row per value"
        )
    return rows, lines


def check_path_table(rows: list[Any], *, source: str, places: list[str] | None = None) -> None:
    """Refuse a path table whose paths do not parse or repeat (``$.a`` and ``a`` are
    the same path): a repeated path would leave one of its values unused.

    ``places`` name each row for messages (``line 3`` in a file); ``row N`` otherwise.

    Raises:
        InputError: naming the row, both places of a repeat, and the path.
    """
    seen: dict[FieldPath, str] = {}
    for number, row in enumerate(rows, start=1):
        place = places[number - 1] if places is not None else f"row {number}"
        text = next(row[column] for column in PATH_COLUMNS if column in row)
        try:
            path = parse_path(text)
        except InputError as exc:
            raise InputError(exc.message, source=source, record=place) from None
        first = seen.setdefault(path, place)
        if first != place:
            raise InputError(
                f"duplicate path {format_path(path)} (first given in {first})",
                source=source,
                record=place,
                path=format_path(path),
                expected="each path once per table",
            )


_SIGNATURES: dict[str, tuple[bytes, ...]] = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "image/tiff": (b"II*\x00", b"MM\x00*"),
    "image/bmp": (b"BM",),
}


def _check_signature(path: Path, media_type: str) -> None:
    with open_file(path) as handle:
        head = handle.read(1024)
    if media_type == "application/pdf":
        ok = b"%PDF-" in head
    elif media_type == "image/webp":
        ok = head[:4] == b"RIFF" and head[8:12] == b"WEBP"
    else:
        ok = head.startswith(_SIGNATURES[media_type])
    if not ok:
        raise InputError(
            "file content does not match its extension", source=str(path), expected=media_type
        )
