"""Reading configuration files that must hold no API key: judge panels, generator
lists and price tables.

API keys are read from environment variables only. A file that contains one (a field
named ``api_key``, or any value that looks like ``sk-...``) is refused with an error
that says where, never what.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from docevals_mlflow.core.datafiles import load_data_file
from docevals_mlflow.core.model import DocEvalsModel
from docevals_mlflow.errors import DocEvalsError, InputError
from docevals_mlflow.judges.usage import PriceTable

# OpenAI (sk-..., sk-proj-...) and Anthropic (sk-ant-...) keys; the look-behind keeps
# words that merely end in "sk-" (say "task-3") from matching.
_KEY_LIKE = re.compile(r"(?<![A-Za-z0-9])sk-[A-Za-z0-9][A-Za-z0-9_-]{5,}")
_KEY_FIELDS = frozenset(
    {"api_key", "apikey", "openai_api_key", "anthropic_api_key", "x_api_key", "authorization"}
)
ConfigModel = TypeVar("ConfigModel", bound=DocEvalsModel)


def find_api_key(data: Any, path: str = "") -> str | None:
    """Where in ``data`` an API key is written (a field path), or ``None``.

    A field named ``api_key`` (or ``authorization``, ...) counts whatever its value,
    and so does any key or value containing ``sk-`` followed by key characters.
    The value itself is never returned, so callers cannot echo it by accident.
    """
    if isinstance(data, Mapping):
        for key, value in data.items():
            where = f"{path}.{key}" if path else str(key)
            if str(key).casefold().replace("-", "_") in _KEY_FIELDS:
                return where
            if _KEY_LIKE.search(str(key)):
                return path or "(top level)"
            found = find_api_key(value, where)
            if found is not None:
                return found
        return None
    if isinstance(data, (list, tuple)):
        for index, item in enumerate(data):
            found = find_api_key(item, f"{path}[{index}]")
            if found is not None:
                return found
        return None
    if isinstance(data, str) and _KEY_LIKE.search(data):
        return path or "(top level)"
    return None


def refuse_api_keys(data: Any, *, source: str | None, path: str = "") -> None:
    """Raise :class:`InputError` when ``data`` contains an API key (see
    :func:`find_api_key`); the message names the place, never the value."""
    where = find_api_key(data, path)
    if where is None:
        return
    raise InputError(
        "an API key is written in this configuration; keys must not be kept in files. "
        "Put it in an environment variable and name that variable with api_key_env "
        "(OPENAI_API_KEY and ANTHROPIC_API_KEY are read by default)",
        source=source,
        path=where,
    )


def load_keyless_config(
    path: str | os.PathLike[str],
    model: type[ConfigModel],
    *,
    what: str,
    expected: str,
    entries: str,
    entry: str,
) -> ConfigModel:
    """Read a YAML or JSON mapping that must hold no API key, as ``model``.

    An error inside the list ``entries`` (``variants``, ``generators``) names the
    ``entry`` it is about, by name, else by position.

    Raises:
        InputError: the file is malformed, not a mapping (``expected`` says what it
            should hold), holds an API key, or a setting is invalid.
        InputFileNotFoundError: there is no such file.
    """
    source = str(path)
    data = load_data_file(Path(path))
    if not isinstance(data, dict):
        raise InputError(
            f"{what} must be a mapping, not {type(data).__name__}",
            source=source,
            expected=expected,
        )
    # Before validation: a validation error may quote the offending value.
    try:
        refuse_api_keys(data, source=source)
    except InputError as exc:
        raise _in_entry(exc, data, entries, entry) from None
    try:
        return model.model_validate(data)
    except InputError as exc:
        raise _in_entry(exc.located(source=source), data, entries, entry) from None


def _in_entry(
    error: DocEvalsError, data: dict[str, Any], entries: str, entry: str
) -> DocEvalsError:
    """``error`` with the entry it is about named in the message, when its path points
    into the list ``entries``."""
    match = re.match(rf"{re.escape(entries)}\[(\d+)\]", error.path or "")
    items = data.get(entries)
    if not match or not isinstance(items, list):
        return error
    index = int(match.group(1))
    item = items[index] if index < len(items) else None
    name = item.get("name") if isinstance(item, dict) else None
    label = repr(name) if isinstance(name, str) and name else f"#{index + 1}"
    return type(error)(
        f"{entry} {label}: {error.message}",
        source=error.source,
        record=error.record,
        path=error.path,
        stage=error.stage,
        expected=error.expected,
    )


def load_prices(path: str | os.PathLike[str]) -> PriceTable:
    """Read a price table file: ``model`` (or ``provider:model``) to
    ``{input, output, cached_input}`` in USD per million tokens.

    Raises:
        InputError: the file is malformed or a price is invalid (naming the file).
    """
    source = str(path)
    data = load_data_file(Path(path))
    refuse_api_keys(data, source=source)
    if not isinstance(data, dict) or not all(isinstance(value, dict) for value in data.values()):
        raise InputError(
            "a price table must map each model to its prices",
            source=source,
            expected="model: {input: USD, output: USD, cached_input: USD} per million tokens",
        )
    try:
        return PriceTable.from_mapping(data)
    except InputError as exc:
        raise exc.located(source=source) from None
