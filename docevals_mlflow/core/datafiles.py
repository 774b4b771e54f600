"""Reading data files (text, JSON, YAML) with errors that name the file and place."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from docevals_mlflow.errors import InputError, InputFileNotFoundError


def read_text_file(path: Path) -> str:
    """Read UTF-8 text (a BOM is tolerated); undecodable bytes are an :class:`InputError`."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputFileNotFoundError("file not found", source=str(path)) from None
    except UnicodeDecodeError as exc:
        raise InputError(
            f"not valid UTF-8 text (byte {exc.start}: {exc.reason})", source=str(path)
        ) from None


UTF8_BOM = b"\xef\xbb\xbf"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"{text} does not fit a 64-bit float")
    return number


# One decoder for every call: ``json.loads`` with hooks builds a new one each time,
# which costs as much as decoding a small record.
_STRICT = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)


def loads_strict(text: str) -> Any:
    """Strict JSON: ``NaN``, ``Infinity`` and numbers too large for a float are refused.

    Raises:
        ValueError: not strict JSON (:class:`json.JSONDecodeError` for a syntax error).
    """
    return _STRICT.decode(text)


def parse_json(
    data: str | bytes,
    *,
    source: str | None,
    record: str | None = None,
    one_line: str | None = None,
) -> Any:
    """Strict JSON (see :func:`loads_strict`) from text or UTF-8 bytes, with errors
    that name ``source`` and ``record``.

    ``one_line`` marks a JSON Lines record: a syntax error then names the column only
    (the line is the record) and says that ``one_line`` was expected.
    """
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError as exc:
        raise InputError(
            f"not valid UTF-8 text (byte {exc.start}: {exc.reason})", source=source, record=record
        ) from None
    try:
        return _STRICT.decode(text)
    except json.JSONDecodeError as exc:
        where = f"column {exc.colno}" if one_line else f"line {exc.lineno}, column {exc.colno}"
        raise InputError(
            f"malformed JSON at {where}: {exc.msg}", source=source, record=record, expected=one_line
        ) from None
    except ValueError as exc:  # raised by the two hooks above
        raise InputError(
            str(exc), source=source, record=record, expected="finite numbers"
        ) from None


def load_json_file(path: Path) -> Any:
    """Parse a JSON file, naming the line and column of any syntax error."""
    return parse_json(read_text_file(path), source=str(path))


def load_data_file(path: Path) -> Any:
    """Parse a JSON (``.json``) or YAML (``.yaml``/``.yml``) file."""
    if not path.is_file():
        raise InputFileNotFoundError("file not found", source=str(path))
    if path.suffix.lower() in (".yaml", ".yml"):
        import yaml

        try:
            return yaml.safe_load(read_text_file(path))
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise InputError(f"malformed YAML{where}: {problem}", source=str(path)) from None
    return load_json_file(path)


def json_files(folder: Path, *, expected: str) -> list[Path]:
    """The ``.json`` files of a folder, sorted by name; an empty folder is an error
    (``expected`` says what it should hold, such as "one <id>.json file per document").
    """
    # Dot files are skipped: macOS leaves ``._name.json`` resource forks next to real
    # files on shared volumes, and they are binary. Sorted for a stable order.
    try:
        files = sorted(
            entry
            for entry in folder.iterdir()
            if entry.suffix.lower() == ".json"
            and not entry.name.startswith(".")
            and entry.is_file()
        )
    except OSError as exc:
        raise InputError(f"cannot list folder: {exc.strerror or exc}", source=str(folder)) from None
    if not files:
        raise InputError("folder has no .json files", source=str(folder), expected=expected)
    return files


_UNSAFE_FILE_CHARACTERS = re.compile(r"[^A-Za-z0-9._-]+")


def safe_file_name(name: str, *, fallback: str = "item", limit: int = 120) -> str:
    """``name`` made safe as one file or folder name on any platform (ids such as
    ``invoice 7/a`` become ``invoice_7_a``); ``fallback`` when nothing is left."""
    return _UNSAFE_FILE_CHARACTERS.sub("_", name).strip("._")[:limit] or fallback
