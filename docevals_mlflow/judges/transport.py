"""HTTP for every provider adapter: pooled clients, retries, limits and redaction.

* One shared, pooled :class:`httpx.AsyncClient` per event loop, created on first use
  and closed when the loop shuts down (or by :func:`aclose_shared_client`); an adapter
  given its own client uses that one instead.
* :class:`Transport` sends one request with timeouts, retries on 429, 5xx overload
  statuses and connection errors (exponential backoff with full jitter, honouring
  ``Retry-After`` and ``retry-after-ms``), a concurrency limit per provider and base
  URL, and an optional requests-per-minute limit.
* :func:`redact` removes secrets from every message built from a request or response,
  so an API key never reaches an exception, a log line or a report; every response
  body is redacted the same way before anyone reads it, so a provider that quotes
  the key back in its answer cannot put it into a report, a cache or a checkpoint.
  Every credential a transport sends (its secrets, credential headers, user-info of
  the URL) is registered in the process-wide registry of
  :mod:`docevals_mlflow.core.secrets`, which everything written is redacted with.

Sleeping, the monotonic clock, the wall clock and the jitter source can be injected,
so tests check delays without waiting for them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import email.utils
import json
import logging
import math
import random
import threading
import time
import weakref
from collections.abc import AsyncGenerator, Callable, Hashable, Iterable, Mapping
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import UTC
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from docevals_mlflow.core.secrets import (
    MIN_WORD_LENGTH,
    contains_secret,
    redact_data,
    redact_text,
    register_headers,
    register_secrets,
    register_url,
    url_credentials,
)
from docevals_mlflow.core.secrets import REDACTED as REDACTED  # callers import it from here
from docevals_mlflow.errors import ConfigurationError, ProviderError

# Defined with the settings (which configuration code loads without httpx); callers
# import them from here as ever.
from docevals_mlflow.judges.settings import DEFAULT_CONNECT_TIMEOUT as DEFAULT_CONNECT_TIMEOUT
from docevals_mlflow.judges.settings import DEFAULT_MAX_CONCURRENCY as DEFAULT_MAX_CONCURRENCY
from docevals_mlflow.judges.settings import DEFAULT_MAX_RETRIES as DEFAULT_MAX_RETRIES
from docevals_mlflow.judges.settings import DEFAULT_TIMEOUT as DEFAULT_TIMEOUT
from docevals_mlflow.judges.settings import Sleep as Sleep
from docevals_mlflow.judges.settings import TransportSettings as TransportSettings

logger = logging.getLogger(__name__)

Clock = Callable[[], float]
"""A clock returning seconds (``time.monotonic`` or ``time.time``)."""

RETRY_STATUSES: frozenset[int] = frozenset({429, 500, 502, 503, 504, 529})
"""Statuses worth another attempt: rate limits, server errors and Anthropic's 529
"overloaded". Other 4xx mean the request itself is wrong and would fail again."""

MIN_SECRET_LENGTH = MIN_WORD_LENGTH
"""Shorter "secrets" (placeholders such as ``"x"``) would shred every message when
replaced, and are not secret anyway. Values under 8 characters are replaced only as
whole words (see :mod:`docevals_mlflow.core.secrets`)."""

DEFAULT_LIMITS = httpx.Limits(
    max_connections=100, max_keepalive_connections=20, keepalive_expiry=30.0
)
_ERROR_BODY_CHARS = 500


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with ``secrets`` and every registered secret replaced by ``[REDACTED]``,
    plain, URL-encoded, JSON-escaped and base64-encoded.

    Longer forms are replaced first so that a secret containing another one is
    removed whole. ``secrets`` of 4 to 7 characters are replaced only as whole words
    (plain or URL-encoded), shorter ones are ignored; see
    :mod:`docevals_mlflow.core.secrets`.
    """
    return redact_text(text, secrets)


def public_url(url: str, secrets: Iterable[str | None] = ()) -> str:
    """``url`` without user-info credentials (``https://user:pass@host``) and with any
    secret in its path or query redacted: safe for reports, caches and logs."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literals keep their brackets
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port is not None else host
    cleaned = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return redact(cleaned, secrets)


def retry_after_seconds(headers: Mapping[str, str], *, now: float) -> float | None:
    """How long the server asked us to wait, from ``retry-after-ms`` (milliseconds) or
    ``Retry-After`` (seconds or an HTTP date, compared with ``now``, a Unix time).

    ``None`` when neither header is present or readable; never negative.
    """
    milliseconds = headers.get("retry-after-ms")
    if milliseconds is not None:
        try:
            value = float(milliseconds) / 1000.0
        except ValueError:
            value = math.nan
        if math.isfinite(value):
            return max(0.0, value)
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        seconds = float(raw.strip())
    except ValueError:
        try:
            moment = email.utils.parsedate_to_datetime(raw.strip())
        except (TypeError, ValueError, IndexError):
            return None
        if moment.tzinfo is None:
            # HTTP dates are always GMT; "-0000" parses as naive.
            moment = moment.replace(tzinfo=UTC)
        seconds = moment.timestamp() - now
    return max(0.0, seconds) if math.isfinite(seconds) else None


@dataclass(frozen=True)
class RetryPolicy:
    """When and how long to wait before trying a request again.

    Attributes:
        max_retries: retries after the first attempt (``0`` disables retrying);
            ``None`` (the default) leaves the count to whoever uses the policy (an
            adapter's ``max_retries``), else :data:`DEFAULT_MAX_RETRIES`.
        base_delay: the first backoff ceiling, doubled on every retry.
        max_delay: the largest backoff ceiling.
        max_retry_after: the longest server-requested wait honoured; a longer
            ``Retry-After`` is shortened to this.
        retry_statuses: HTTP statuses that are retried.
    """

    max_retries: int | None = None
    base_delay: float = 0.5
    max_delay: float = 30.0
    max_retry_after: float = 60.0
    retry_statuses: frozenset[int] = RETRY_STATUSES

    def __post_init__(self) -> None:
        if self.max_retries is not None and self.max_retries < 0:
            raise ValueError("max_retries must be 0 or more")
        if self.base_delay < 0 or self.max_delay < 0 or self.max_retry_after < 0:
            raise ValueError("delays must be 0 or more")

    @property
    def retries(self) -> int:
        """The retry count in force (:data:`DEFAULT_MAX_RETRIES` when unset)."""
        return DEFAULT_MAX_RETRIES if self.max_retries is None else self.max_retries

    def ceiling(self, retry: int) -> float:
        """The backoff ceiling before retry number ``retry`` (0 for the first retry)."""
        # Capping the exponent keeps 2**retry finite for absurd retry counts.
        return min(self.max_delay, self.base_delay * 2.0 ** min(retry, 62))

    def backoff(self, retry: int, rng: Callable[[], float] = random.random) -> float:
        """A full-jitter delay: uniform between 0 and :meth:`ceiling`.

        Full jitter spreads clients that failed together, so they do not retry in
        lockstep against a provider that is already overloaded.
        """
        return rng() * self.ceiling(retry)

    def delay(
        self,
        retry: int,
        response: httpx.Response | None,
        *,
        now: float,
        rng: Callable[[], float] = random.random,
    ) -> float:
        """The wait before retry ``retry``: the server's ``Retry-After`` when it gave
        one (capped at ``max_retry_after``), else :meth:`backoff`."""
        if response is not None:
            requested = retry_after_seconds(response.headers, now=now)
            if requested is not None:
                return min(requested, self.max_retry_after)
        return self.backoff(retry, rng)


def resolve_retry_policy(max_retries: int | None, retry_policy: RetryPolicy | None) -> RetryPolicy:
    """The policy that ``max_retries`` and ``retry_policy`` ask for together.

    Either alone decides the retry count (a policy without one takes ``max_retries``,
    and with neither it is :data:`DEFAULT_MAX_RETRIES`); when both set one they must
    agree, since silently letting one win would retry more (or less) than asked.

    Raises:
        ConfigurationError: both set a retry count, and the counts differ.
    """
    if retry_policy is None:
        retry_policy = RetryPolicy()
    if retry_policy.max_retries is None:
        return dataclasses.replace(
            retry_policy,
            max_retries=DEFAULT_MAX_RETRIES if max_retries is None else max_retries,
        )
    if max_retries is not None and max_retries != retry_policy.max_retries:
        raise ConfigurationError(
            f"max_retries={max_retries} contradicts retry_policy's "
            f"max_retries={retry_policy.max_retries}",
            path="max_retries",
            expected="one of them, or the same count in both",
        )
    return retry_policy


class RateLimiter:
    """A token bucket allowing ``requests_per_minute``, with bursts of ``burst``.

    Each request reserves a token at once and sleeps until its slot comes, so waiting
    callers are served in order without a lock held across the sleep. Thread-safe:
    one limiter may serve several event loops.
    """

    def __init__(
        self, requests_per_minute: float, *, burst: int = 1, clock: Clock = time.monotonic
    ) -> None:
        if requests_per_minute <= 0:
            raise ValueError("requests_per_minute must be positive")
        if burst < 1:
            raise ValueError("burst must be at least 1")
        self.requests_per_minute = requests_per_minute
        self.interval = 60.0 / requests_per_minute
        self.capacity = float(burst)
        self._clock = clock
        self._tokens = float(burst)
        self._updated = clock()
        self._lock = threading.Lock()

    def reserve(self) -> float:
        """Take a token; returns how many seconds to wait before using it."""
        with self._lock:
            now = self._clock()
            elapsed = max(0.0, now - self._updated)
            self._tokens = min(self.capacity, self._tokens + elapsed / self.interval)
            self._updated = now
            self._tokens -= 1.0
            return 0.0 if self._tokens >= 0 else -self._tokens * self.interval

    async def acquire(self, sleep: Sleep = asyncio.sleep) -> float:
        """Wait for a token; returns the time waited."""
        wait = self.reserve()
        if wait > 0:
            await sleep(wait)
        return wait


# Limits are shared by every adapter talking to the same provider endpoint with the
# same setting. Semaphores bind to the event loop that first waits on them, so they
# are kept per loop; rate limiters are plain clocks and are shared across loops.
_registry_lock = threading.Lock()
_semaphores: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[tuple[str, str, int], asyncio.Semaphore]
] = weakref.WeakKeyDictionary()
_rate_limiters: dict[tuple[Hashable, ...], RateLimiter] = {}


def _shared_semaphore(provider: str, endpoint: str, limit: int) -> asyncio.Semaphore:
    loop = asyncio.get_running_loop()
    with _registry_lock:
        per_loop = _semaphores.setdefault(loop, {})
        key = (provider, endpoint, limit)
        semaphore = per_loop.get(key)
        if semaphore is None:
            semaphore = per_loop[key] = asyncio.Semaphore(limit)
        return semaphore


def shared_rate_limiter(
    provider: str,
    endpoint: str,
    requests_per_minute: float,
    *,
    burst: int = 1,
    clock: Clock = time.monotonic,
) -> RateLimiter:
    """The rate limiter shared by every transport with the same provider, endpoint,
    limit and clock."""
    key: tuple[Hashable, ...] = (provider, endpoint, float(requests_per_minute), burst, clock)
    with _registry_lock:
        limiter = _rate_limiters.get(key)
        if limiter is None:
            limiter = _rate_limiters[key] = RateLimiter(
                requests_per_minute, burst=burst, clock=clock
            )
        return limiter


@dataclass
class _SharedClient:
    client: httpx.AsyncClient
    closer: AsyncGenerator[None, None]


_clients_lock = threading.Lock()
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _SharedClient] = (
    weakref.WeakKeyDictionary()
)
_shared_limits: httpx.Limits = DEFAULT_LIMITS


def configure_shared_clients(*, limits: httpx.Limits) -> None:
    """Connection-pool limits for shared clients created from now on (existing ones
    keep theirs until closed)."""
    global _shared_limits
    _shared_limits = limits


async def _close_at_loop_shutdown(client: httpx.AsyncClient) -> AsyncGenerator[None, None]:
    # A started async generator is registered with its event loop, and
    # ``asyncio.run`` (and ``run_sync``) closes every such generator before closing
    # the loop: the finally block then closes the pooled connections on the loop that
    # owns them, instead of leaking sockets when the loop is gone.
    try:
        yield
    finally:
        await client.aclose()


async def shared_client() -> httpx.AsyncClient:
    """The pooled client of the running event loop, created on first use."""
    loop = asyncio.get_running_loop()
    with _clients_lock:
        entry = _clients.get(loop)
        if entry is not None and not entry.client.is_closed:
            return entry.client
        client = httpx.AsyncClient(
            limits=_shared_limits,
            timeout=httpx.Timeout(DEFAULT_TIMEOUT, connect=DEFAULT_CONNECT_TIMEOUT),
        )
        closer = _close_at_loop_shutdown(client)
        _clients[loop] = _SharedClient(client, closer)
    await closer.__anext__()
    return client


async def aclose_shared_client() -> None:
    """Close the running loop's shared client now (a new one is made when needed)."""
    loop = asyncio.get_running_loop()
    with _clients_lock:
        entry = _clients.pop(loop, None)
    if entry is not None:
        # Closing the generator runs its finally block, which closes the client; the
        # explicit close covers a generator that never started.
        await entry.closer.aclose()
        if not entry.client.is_closed:
            await entry.client.aclose()


@dataclass
class ProviderResponse:
    """A successful (2xx) provider response."""

    status_code: int
    data: Any
    """The parsed JSON body."""
    headers: dict[str, str] = field(default_factory=dict)
    attempts: int = 1
    latency_seconds: float = 0.0


def _error_details(
    response: httpx.Response, clean: Callable[[str], str] = str
) -> tuple[str | None, str]:
    """The provider's error type and message from an error response.

    OpenAI and Anthropic both answer ``{"error": {"type"/"code", "message"}}``;
    anything else is shown as (the start of) the body text. ``clean`` (redaction) is
    applied before the text is shortened: cut first, a secret at the cut would
    survive as a fragment no redaction recognises.
    """
    try:
        data = response.json()
    except (ValueError, UnicodeDecodeError):
        data = None
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict):
            kind = error.get("type") or error.get("code")
            message = error.get("message")
            if message is not None:
                return (str(kind) if kind else None), str(message)
        elif isinstance(error, str):
            return None, error
        if isinstance(data.get("message"), str):
            return None, str(data["message"])
    text = clean(response.text).strip()
    if len(text) > _ERROR_BODY_CHARS:
        text = text[:_ERROR_BODY_CHARS] + "..."
    return None, text or response.reason_phrase or "no error message"


_RETRYABLE_ERRORS = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)
"""Timeouts, refused or reset connections and half-closed streams: transient. Other
httpx errors (bad URL, unsupported protocol, too many redirects) are not."""


class Transport:
    """Sends requests to one provider endpoint with retries and limits.

    Args:
        provider: provider name, used in errors, logs and as part of the limit key.
        endpoint: the base URL; adapters sharing provider and endpoint share the
            concurrency and rate limits.
        client: an :class:`httpx.AsyncClient` to use instead of the shared one (tests
            pass one with an ``httpx.MockTransport``). It is not closed here.
        timeout: read (and write and pool) timeout in seconds, or a full
            :class:`httpx.Timeout`.
        connect_timeout: connect timeout in seconds (ignored with an ``httpx.Timeout``).
        max_retries: retries after the first attempt (default: the policy's, else 5).
        retry_policy: full backoff settings, retry count included. Giving both
            ``max_retries`` and a policy with another count is a
            :class:`~docevals_mlflow.errors.ConfigurationError`.
        max_concurrency: requests in flight at once for this provider and endpoint;
            ``None`` for no limit.
        requests_per_minute: an optional rate limit (token bucket).
        rate_burst: requests allowed back to back before the rate limit spaces them.
        secrets: strings removed from every error message and log line.
        sleep, clock, wall_clock, rng: injection points for tests (``asyncio.sleep``,
            ``time.monotonic``, ``time.time``, ``random.random``).
    """

    def __init__(
        self,
        *,
        provider: str,
        endpoint: str = "",
        client: httpx.AsyncClient | None = None,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        max_retries: int | None = None,
        retry_policy: RetryPolicy | None = None,
        max_concurrency: int | None = DEFAULT_MAX_CONCURRENCY,
        requests_per_minute: float | None = None,
        rate_burst: int = 1,
        secrets: Iterable[str | None] = (),
        sleep: Sleep | None = None,
        clock: Clock | None = None,
        wall_clock: Clock | None = None,
        rng: Callable[[], float] | None = None,
    ) -> None:
        if max_concurrency is not None and max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1 (or None for no limit)")
        policy = resolve_retry_policy(max_retries, retry_policy)
        self.provider = provider
        self.endpoint = endpoint
        self.client = client
        self.timeout = (
            timeout
            if isinstance(timeout, httpx.Timeout)
            else httpx.Timeout(timeout, connect=connect_timeout)
        )
        self.policy = policy
        self.max_concurrency = max_concurrency
        self.requests_per_minute = requests_per_minute
        self.secrets = tuple(secret for secret in secrets if secret) + tuple(
            url_credentials(endpoint)
        )
        # Registered process-wide, so that what is written later (reports, caches,
        # checkpoints) is redacted of them too, not only this transport's messages.
        register_secrets(*self.secrets)
        self._sleep: Sleep = sleep or asyncio.sleep
        self._clock: Clock = clock or time.monotonic
        self._wall_clock: Clock = wall_clock or time.time
        self._rng = rng or random.random
        self.rate_limiter = (
            shared_rate_limiter(
                provider, endpoint, requests_per_minute, burst=rate_burst, clock=self._clock
            )
            if requests_per_minute is not None
            else None
        )

    @classmethod
    def from_settings(
        cls,
        settings: TransportSettings,
        *,
        provider: str,
        endpoint: str = "",
        secrets: Iterable[str | None] = (),
    ) -> Transport:
        """A transport with ``settings``' timeouts, retries, limits, client and sleep
        (its extra headers and body keys are the adapter's to send).

        Raises:
            ConfigurationError: ``max_retries`` contradicts the policy's count.
            ValueError: ``max_concurrency`` below 1.
        """
        return cls(
            provider=provider,
            endpoint=endpoint,
            client=settings.client,
            timeout=settings.timeout,
            connect_timeout=settings.connect_timeout,
            max_retries=settings.max_retries,
            retry_policy=settings.retry_policy,
            max_concurrency=settings.max_concurrency,
            requests_per_minute=settings.requests_per_minute,
            secrets=secrets,
            sleep=settings.sleep,
        )

    def redact(self, text: str) -> str:
        """``text`` without this transport's secrets."""
        return redact(text, self.secrets)

    def _slot(self) -> AbstractAsyncContextManager[Any]:
        if self.max_concurrency is None:
            return nullcontext()
        return _shared_semaphore(self.provider, self.endpoint, self.max_concurrency)

    async def send(
        self,
        method: str,
        url: str,
        *,
        json_body: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> ProviderResponse:
        """Send one request, retrying transient failures; returns the parsed JSON.

        Raises:
            ProviderError: a non-retryable status, retries exhausted, a connection
                that never succeeded, or a 2xx body that is not JSON. The message
                holds the provider's error message, redacted.
        """
        client = self.client if self.client is not None else await shared_client()
        # Serialised once: a retried request re-sends the same bytes (bodies with
        # base64 attachments are large).
        content = (
            None
            if json_body is None
            else json.dumps(json_body, ensure_ascii=False, separators=(",", ":")).encode()
        )
        request_headers = {"accept": "application/json", **(headers or {})}
        if content is not None:
            request_headers.setdefault("content-type", "application/json")
        # Whatever credential goes on the wire is a secret from now on, even one an
        # adapter built outside this package put into a header or the URL.
        register_headers(request_headers)
        register_url(url)
        shown_url = public_url(url, self.secrets)
        started = self._clock()
        attempts = 0
        while True:
            attempts += 1
            retry = attempts - 1
            if self.rate_limiter is not None:
                await self.rate_limiter.acquire(self._sleep)
            logger.debug("%s: %s %s (attempt %d)", self.provider, method, shown_url, attempts)
            try:
                async with self._slot():
                    response = await client.request(
                        method, url, content=content, headers=request_headers, timeout=self.timeout
                    )
            except _RETRYABLE_ERRORS as exc:
                problem = self.redact(f"{type(exc).__name__}: {exc}".rstrip(": "))
                if retry >= self.policy.retries:
                    raise ProviderError(
                        f"{self.provider} request to {shown_url} failed: {problem}"
                        + _after(attempts),
                        provider=self.provider,
                        attempts=attempts,
                    ) from None
                delay = self.policy.delay(retry, None, now=self._wall_clock(), rng=self._rng)
                logger.info(
                    "%s: %s from %s; retrying in %.2f s (attempt %d of %d)",
                    self.provider,
                    problem,
                    shown_url,
                    delay,
                    attempts + 1,
                    self.policy.retries + 1,
                )
                await self._sleep(delay)
                continue
            except httpx.HTTPError as exc:
                raise ProviderError(
                    self.redact(
                        f"{self.provider} request to {shown_url} failed: {type(exc).__name__}: "
                        f"{exc}"
                    ),
                    provider=self.provider,
                    attempts=attempts,
                ) from None

            status = response.status_code
            if status in self.policy.retry_statuses and retry < self.policy.retries:
                delay = self.policy.delay(retry, response, now=self._wall_clock(), rng=self._rng)
                logger.info(
                    "%s: HTTP %d from %s; retrying in %.2f s (attempt %d of %d)",
                    self.provider,
                    status,
                    shown_url,
                    delay,
                    attempts + 1,
                    self.policy.retries + 1,
                )
                await self._sleep(delay)
                continue
            if status >= 400:
                kind, message = _error_details(response, self.redact)
                label = f"HTTP {status}" + (f" {kind}" if kind else "")
                request_id = response.headers.get("x-request-id") or response.headers.get(
                    "request-id"
                )
                suffix = f" [request id {request_id}]" if request_id else ""
                raise ProviderError(
                    self.redact(
                        f"{self.provider} returned {label} from {shown_url}: {message}"
                        f"{suffix}{_after(attempts)}"
                    ),
                    provider=self.provider,
                    status_code=status,
                    attempts=attempts,
                )
            try:
                data = self._redacted_json(response)
            except (ValueError, UnicodeDecodeError):
                raise ProviderError(
                    self.redact(
                        f"{self.provider} returned HTTP {status} from {shown_url} with a body "
                        f"that is not JSON: {self.redact(response.text)[:200]!r}"
                    ),
                    provider=self.provider,
                    status_code=status,
                    attempts=attempts,
                ) from None
            return ProviderResponse(
                status_code=status,
                data=data,
                headers=redact_data(dict(response.headers)),
                attempts=attempts,
                latency_seconds=self._clock() - started,
            )

    def _redacted_json(self, response: httpx.Response) -> Any:
        """The parsed body with every secret removed from its strings.

        A provider may quote the key back (an echoed request, an error inside an
        answer); redacting here means no answer, refusal, reason or cached entry
        built from this body can hold it. The walk over the parsed data is skipped
        when the raw text holds no secret in any form and no escape that could hide
        one (embedding vectors, the bulk of all bodies, skip it).

        Only registered secrets (8 characters or more, this transport's among them)
        are removed: a short placeholder key such as ``EMPTY`` is a word a model
        may well use in an answer, and answers are kept as they were said.
        """
        data = response.json()
        text = response.text
        if "\\" in text or contains_secret(text):
            data = redact_data(data)
        return data


def _after(attempts: int) -> str:
    return f" (after {attempts} attempts)" if attempts > 1 else ""
