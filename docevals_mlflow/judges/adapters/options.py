"""What an HTTP adapter is built from: its keyword arguments, checked, and its key,
kept out of sight."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from docevals_mlflow.errors import ConfigurationError
from docevals_mlflow.judges.adapters.deprecated import DeprecatedTransportOptions

if TYPE_CHECKING:
    from docevals_mlflow.judges.settings import TransportSettings
    from docevals_mlflow.judges.usage import PriceTable


class Secret:
    """A string that never shows itself in ``repr``/``str`` (so an adapter printed in a
    log or a notebook does not print its API key)."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The secret itself, for the one header that needs it."""
        return self._value

    def __repr__(self) -> str:
        return "Secret('[REDACTED]')"

    __str__ = __repr__


class AdapterOptions(DeprecatedTransportOptions, total=False):
    """The keyword arguments every HTTP adapter takes besides ``model`` and
    ``base_url`` (see :class:`~docevals_mlflow.judges.adapters.base.HttpAdapter`).
    Adapters forward them to the base class unchanged, so each lists only its own
    options."""

    api_key: str | None
    temperature: float | None
    top_p: float | None
    max_output_tokens: int | None
    prices: PriceTable | None
    http: TransportSettings | None
    sender: Callable[[dict[str, Any]], Any] | None


class HostedAdapterOptions(AdapterOptions, total=False):
    """:class:`AdapterOptions` plus ``model`` and ``base_url``, for adapters of hosted
    providers, which default both."""

    model: str | None
    base_url: str | None


def check_sampling(
    temperature: float | None, top_p: float | None, max_output_tokens: int | None
) -> None:
    """Refuse a sampling setting out of range.

    Raises:
        ConfigurationError: naming the setting.
    """
    if temperature is not None and temperature < 0:
        raise ConfigurationError("temperature must be 0 or more", path="temperature")
    if top_p is not None and not 0 <= top_p <= 1:
        raise ConfigurationError("top_p must be between 0 and 1", path="top_p")
    if max_output_tokens is not None and max_output_tokens < 1:
        raise ConfigurationError("max_output_tokens must be at least 1", path="max_output_tokens")


def read_api_key(
    provider: str, api_key: str | None, variable: str | None, *, required: bool
) -> Secret | None:
    """``api_key``, else the value of the environment ``variable``, hidden.

    Raises:
        ConfigurationError: ``required`` and there is no key.
    """
    key = api_key if api_key is not None else (os.environ.get(variable) if variable else None)
    if not key and required:
        where = f" or set {variable} in the environment" if variable else ""
        raise ConfigurationError(f"{provider}: no API key: pass api_key=...{where}")
    return Secret(key) if key else None
