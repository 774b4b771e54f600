"""When a provider request is tried again, and how long to wait first.

Retried: 429, the 5xx overload statuses and transient connection errors, with
exponential backoff and full jitter, honouring ``Retry-After`` and
``retry-after-ms``. The wait is computed here; sleeping it is the transport's.
"""

from __future__ import annotations

import dataclasses
import email.utils
import math
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC

import httpx

from docevals_mlflow.errors import ConfigurationError
from docevals_mlflow.judges.settings import DEFAULT_MAX_RETRIES

RETRY_STATUSES: frozenset[int] = frozenset({429, 500, 502, 503, 504, 529})
"""Statuses worth another attempt: rate limits, server errors and Anthropic's 529
"overloaded". Other 4xx mean the request itself is wrong and would fail again."""

RETRYABLE_ERRORS = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)
"""Timeouts, refused or reset connections and half-closed streams: transient. Other
httpx errors (bad URL, unsupported protocol, too many redirects) are not."""


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
