"""Reading data files (text, JSON, YAML) with errors that name the file and place."""

from __future__ import annotations

import json
import math
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


def load_json_file(path: Path) -> Any:
    """Parse a JSON file, naming the line and column of any syntax error."""
    text = read_text_file(path)
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
            source=str(path),
        ) from None
    except ValueError as exc:
        raise InputError(str(exc), source=str(path), expected="finite numbers") from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"{text} does not fit a 64-bit float")
    return number


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
