"""How an HTTP adapter talks to its provider, as one frozen value.

:class:`TransportSettings` gathers what every HTTP adapter passes through to its
:class:`~docevals_mlflow.judges.transport.Transport` (timeouts, retries, limits, the
client) and the extras it adds to every request (headers, body keys). Adapters take
it as ``http=`` beside their provider options (model, temperature, ...), so a new
transport setting is added here once instead of to every adapter's constructor.

This module imports no HTTP library: configuration code (``JudgeConfig``, the judge
provider registry) builds settings without loading httpx.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

    from docevals_mlflow.judges.retry import RetryPolicy

Sleep = Callable[[float], Awaitable[None]]
"""An ``asyncio.sleep``-like coroutine function."""

DEFAULT_TIMEOUT = 120.0
"""Read (and write and pool) timeout in seconds."""
DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_MAX_CONCURRENCY = 8
"""Requests in flight at once per provider and base URL."""
DEFAULT_MAX_RETRIES = 5
"""Retries after the first attempt when neither an adapter nor a policy says."""


@dataclass(frozen=True, kw_only=True)
class TransportSettings:
    """Timeouts, retries, limits, extra headers and body keys, and the HTTP client of
    an adapter. Every field has a default; the value is frozen, so one settings value
    can be shared by several adapters.

    Attributes:
        timeout: read (and write and pool) timeout in seconds, or a full
            ``httpx.Timeout``.
        connect_timeout: connect timeout in seconds (ignored with an ``httpx.Timeout``).
        max_retries: retries of transient failures (429, 5xx overload, connection);
            default: ``retry_policy``'s count, else 5.
        retry_policy: full backoff settings, retry count included (a different
            ``max_retries`` next to it is a ``ConfigurationError`` when the adapter
            is built).
        max_concurrency: requests in flight at once per provider and base URL
            (``None``: no limit).
        requests_per_minute: an optional rate limit per provider and base URL.
        extra_headers: headers added to every request; values of headers named like
            credentials (``auth``, ``key``, ``token``, ``secret``, ``password``,
            ``cookie``, ...) are treated as secrets.
        extra_body: keys merged into (and overriding) every request body.
        client: an ``httpx.AsyncClient`` to use instead of the shared pooled one
            (tests pass one with an ``httpx.MockTransport``); it is not closed here.
        sleep: replaces ``asyncio.sleep`` between retries (tests).

    Values are checked when an adapter is built from them, by the transport, with the
    same errors as ever.
    """

    timeout: float | httpx.Timeout = DEFAULT_TIMEOUT
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    max_retries: int | None = None
    retry_policy: RetryPolicy | None = None
    max_concurrency: int | None = DEFAULT_MAX_CONCURRENCY
    requests_per_minute: float | None = None
    # Left out of repr (headers and body keys may hold credentials) and of the hash
    # (mappings have none).
    extra_headers: Mapping[str, str] = field(default_factory=dict, repr=False, hash=False)
    extra_body: Mapping[str, Any] = field(default_factory=dict, repr=False, hash=False)
    client: httpx.AsyncClient | None = None
    sleep: Sleep | None = None

    def __post_init__(self) -> None:
        # Copied into read-only views: the caller's dicts may change later, and a
        # frozen value must not change with them. None is accepted as "none", as the
        # adapters' keyword arguments always accepted it.
        headers = MappingProxyType(dict(self.extra_headers or {}))
        body = MappingProxyType(dict(self.extra_body or {}))
        object.__setattr__(self, "extra_headers", headers)
        object.__setattr__(self, "extra_body", body)


TRANSPORT_FIELDS: frozenset[str] = frozenset(TransportSettings.__dataclass_fields__)
"""The names of :class:`TransportSettings`' fields (the adapters' former keyword
arguments of the same names)."""
