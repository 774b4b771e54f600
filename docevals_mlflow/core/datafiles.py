"""Reading data files (text, JSON, YAML) with errors that name the file and place.

Every file a user hands to docevals is read through here, so the limits below hold
for documents, schemas, pipelines, cases, review files and bundles alike (they are
documented in ``docs/configuration.md``, "Limits of every input file"):

* only **regular files** are read: a named pipe, a device or a folder where a file is
  expected (and a file where a folder is) is refused before it is opened, since
  reading a pipe blocks forever and a device never ends;
* JSON is **strict**: ``NaN``/``Infinity``, numbers beyond a 64-bit float, a key
  twice in one object and lone UTF-16 surrogates (``"\\ud800"``) are errors naming the
  line, column and field path;
* objects and arrays (YAML mappings and sequences) nest at most :data:`MAX_NESTING`
  levels;
* YAML anchors and aliases may repeat at most :data:`YAML_ALIAS_NODES` nodes in all
  (a "billion laughs" file is refused instead of expanding forever), and an alias
  inside the node it names is refused.

The work is shared out: :mod:`~docevals_mlflow.core.input_files` opens files,
:mod:`~docevals_mlflow.core.strict_json` decodes JSON,
:mod:`~docevals_mlflow.core.yaml_loader` composes YAML, and
:mod:`~docevals_mlflow.core.refusals` holds the limits; callers import from here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from docevals_mlflow.core.input_files import (
    UTF8_BOM,
    check_file,
    check_folder,
    decode_text,
    is_folder_input,
    json_files,
    open_file,
    read_bytes_file,
    read_text_file,
)
from docevals_mlflow.core.refusals import MAX_NESTING, YAML_ALIAS_NODES, Refusal
from docevals_mlflow.core.strict_json import load_json_file, loads_strict, parse_json
from docevals_mlflow.errors import InputError

__all__ = [
    "MAX_NESTING",
    "UTF8_BOM",
    "YAML_ALIAS_NODES",
    "check_file",
    "check_folder",
    "decode_text",
    "is_folder_input",
    "json_files",
    "load_data_file",
    "load_json_file",
    "load_yaml_text",
    "loads_strict",
    "open_file",
    "parse_json",
    "read_bytes_file",
    "read_text_file",
    "safe_file_name",
]


def load_yaml_text(text: str, *, source: str | None) -> Any:
    """Safe-load one YAML document with the limits of this module; a text with no
    document (empty, or only comments) is an error.

    Raises:
        InputError: malformed YAML or a limit reached, naming the line and column.
    """
    import yaml

    from docevals_mlflow.core.yaml_loader import BoundedLoader

    loader: Any = None
    try:
        # Inside the try: the reader refuses control characters as it is built.
        loader = BoundedLoader(text)
        node = loader.get_single_node()
        if node is None:
            raise InputError(
                "the file is empty (no YAML document)", source=source, expected="a YAML document"
            )
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"malformed YAML{where}: {problem}", source=source) from None
    except Refusal as exc:
        raise exc.error(source=source, record=None, text=None, one_line=False) from None
    except RecursionError:
        # Only complex keys (a mapping or sequence used as a key) and merge chains
        # still recurse in PyYAML's constructor.
        raise InputError(
            f"nesting too deep to read (limit {MAX_NESTING:,})", source=source
        ) from None
    finally:
        if loader is not None:
            loader.dispose()


def load_data_file(path: Path, *, what: str = "file") -> Any:
    """Parse a JSON (``.json``) or YAML (``.yaml``/``.yml``) file (see the limits in
    the module docstring)."""
    if path.suffix.lower() in (".yaml", ".yml"):
        return load_yaml_text(read_text_file(path, what=what), source=str(path))
    return load_json_file(path, what=what)


_UNSAFE_FILE_CHARACTERS = re.compile(r"[^A-Za-z0-9._-]+")


def safe_file_name(name: str, *, fallback: str = "item", limit: int = 120) -> str:
    """``name`` made safe as one file or folder name on any platform (ids such as
    ``invoice 7/a`` become ``invoice_7_a``); ``fallback`` when nothing is left."""
    return _UNSAFE_FILE_CHARACTERS.sub("_", name).strip("._")[:limit] or fallback


def record_id(
    value: Any, *, source: str, record: str, what: str = "id", expected: str | None = None
) -> str:
    """A JSON record's id as text: a non-empty string, or an integer (JSON Lines
    writers often number records); anything else names the file and the record."""
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise InputError(
        f"invalid or missing {what} {value!r}",
        source=source,
        record=record,
        path="id",
        expected=expected or "a non-empty string or an integer",
    )


def json_lines(path: Path, *, one_line: str) -> Iterator[tuple[int, str, Any]]:
    """The records of a JSON Lines file as ``(line number, "line N", value)``, blank
    lines skipped, a leading BOM tolerated; a line that is not one JSON value is an
    error naming the file and the line (``one_line`` says what a line should hold)."""
    source = str(path)
    lines = read_bytes_file(path).removeprefix(UTF8_BOM).split(b"\n")
    for number, raw in enumerate(lines, start=1):
        if raw.strip():
            record = f"line {number}"
            yield number, record, parse_json(raw, source=source, record=record, one_line=one_line)
