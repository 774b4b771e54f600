"""HTTP for every provider adapter: one request, sent with retries and limits, its
messages redacted.

:class:`Transport` sends one request to one provider endpoint on the shared pooled
client (:mod:`~docevals_mlflow.judges.pool`) or its own, retries transient failures
as its :class:`~docevals_mlflow.judges.retry.RetryPolicy` says, and keeps within the
endpoint's concurrency and rate limits (:mod:`~docevals_mlflow.judges.limits`).

:func:`redact` removes secrets from every message built from a request or response,
so an API key never reaches an exception, a log line or a report; every response
body is redacted the same way before anyone reads it, so a provider that quotes the
key back in its answer cannot put it into a report, a cache or a checkpoint. Every
credential a transport sends (its secrets, credential headers, user-info of the URL)
is registered in the process-wide registry of :mod:`docevals_mlflow.core.secrets`,
which everything written is redacted with.

Sleeping, the monotonic clock, the wall clock and the jitter source can be injected,
so tests check delays without waiting for them.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from docevals_mlflow.core.secrets import (
    contains_secret,
    redact_data,
    redact_text,
    register_headers,
    register_secrets,
    register_url,
    url_credentials,
)
from docevals_mlflow.errors import ProviderError
from docevals_mlflow.judges import pool
from docevals_mlflow.judges.limits import Clock, EndpointLimits, RateLimiter
from docevals_mlflow.judges.retry import RETRYABLE_ERRORS, resolve_retry_policy
from docevals_mlflow.judges.retry import RetryPolicy as RetryPolicy  # documented here
from docevals_mlflow.judges.settings import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_TIMEOUT,
    Sleep,
    TransportSettings,
)

logger = logging.getLogger(__name__)

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


def _encoded(json_body: Any) -> bytes | None:
    # Serialised once: a retried request re-sends the same bytes (bodies with base64
    # attachments are large).
    if json_body is None:
        return None
    return json.dumps(json_body, ensure_ascii=False, separators=(",", ":")).encode()


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
        self._clock: Clock = clock or time.monotonic
        self.limits = EndpointLimits(
            provider,
            endpoint,
            max_concurrency=max_concurrency,
            requests_per_minute=requests_per_minute,
            burst=rate_burst,
            clock=self._clock,
        )
        self.policy = resolve_retry_policy(max_retries, retry_policy)
        self.provider = provider
        self.endpoint = endpoint
        self.client = client
        self.timeout = (
            timeout
            if isinstance(timeout, httpx.Timeout)
            else httpx.Timeout(timeout, connect=connect_timeout)
        )
        self.max_concurrency = max_concurrency
        self.requests_per_minute = requests_per_minute
        self.secrets = tuple(secret for secret in secrets if secret) + tuple(
            url_credentials(endpoint)
        )
        # Registered process-wide, so that what is written later (reports, caches,
        # checkpoints) is redacted of them too, not only this transport's messages.
        register_secrets(*self.secrets)
        self._sleep: Sleep = sleep or asyncio.sleep
        self._wall_clock: Clock = wall_clock or time.time
        self._rng = rng or random.random

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

    @property
    def rate_limiter(self) -> RateLimiter | None:
        """The rate limiter shared with every transport of this provider, endpoint and
        rate (``None`` without a rate limit)."""
        return self.limits.rate_limiter

    def redact(self, text: str) -> str:
        """``text`` without this transport's secrets."""
        return redact(text, self.secrets)

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
        client = self.client if self.client is not None else await pool.shared_client()
        content = _encoded(json_body)
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
            await self.limits.wait_turn(self._sleep)
            logger.debug("%s: %s %s (attempt %d)", self.provider, method, shown_url, attempts)
            try:
                async with self.limits.slot():
                    response = await client.request(
                        method, url, content=content, headers=request_headers, timeout=self.timeout
                    )
            except httpx.HTTPError as exc:
                await self._after_failure(exc, shown_url, attempts)
                continue
            status = response.status_code
            if status in self.policy.retry_statuses and attempts <= self.policy.retries:
                await self._back_off(attempts, response, f"HTTP {status}", shown_url)
                continue
            return self._accept(response, shown_url, attempts, started)

    async def _after_failure(self, exc: httpx.HTTPError, shown_url: str, attempts: int) -> None:
        """Wait for the retry after a request that got no response.

        Raises:
            ProviderError: the failure is not transient, or no retry is left.
        """
        if not isinstance(exc, RETRYABLE_ERRORS):
            raise ProviderError(
                self.redact(
                    f"{self.provider} request to {shown_url} failed: {type(exc).__name__}: {exc}"
                ),
                provider=self.provider,
                attempts=attempts,
            ) from None
        problem = self.redact(f"{type(exc).__name__}: {exc}".rstrip(": "))
        if attempts > self.policy.retries:
            raise ProviderError(
                f"{self.provider} request to {shown_url} failed: {problem}" + _after(attempts),
                provider=self.provider,
                attempts=attempts,
            ) from None
        await self._back_off(attempts, None, problem, shown_url)

    async def _back_off(
        self, attempts: int, response: httpx.Response | None, problem: str, shown_url: str
    ) -> None:
        """Sleep before the retry that follows attempt number ``attempts``."""
        delay = self.policy.delay(attempts - 1, response, now=self._wall_clock(), rng=self._rng)
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

    def _accept(
        self, response: httpx.Response, shown_url: str, attempts: int, started: float
    ) -> ProviderResponse:
        """The final ``response`` as a :class:`ProviderResponse`.

        Raises:
            ProviderError: an error status, or a 2xx body that is not JSON.
        """
        status = response.status_code
        if status >= 400:
            kind, message = _error_details(response, self.redact)
            label = f"HTTP {status}" + (f" {kind}" if kind else "")
            request_id = response.headers.get("x-request-id") or response.headers.get("request-id")
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
