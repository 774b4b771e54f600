"""How many requests go to one provider endpoint at once, and how often.

Limits are shared by every transport talking to the same provider and base URL with
the same setting, so that several adapters (a panel's variants, a judge and its
copies) stay within one budget together:

* a concurrency limit (an :class:`asyncio.Semaphore` per event loop, since a
  semaphore binds to the loop that first waits on it);
* an optional requests-per-minute limit (a token bucket, :class:`RateLimiter`,
  shared across loops: it is a plain clock).
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections.abc import Callable, Hashable
from contextlib import AbstractAsyncContextManager, nullcontext
from typing import Any

from docevals_mlflow.judges.settings import Sleep

Clock = Callable[[], float]
"""A clock returning seconds (``time.monotonic`` or ``time.time``)."""


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


_registry_lock = threading.Lock()
_semaphores: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[tuple[str, str, int], asyncio.Semaphore]
] = weakref.WeakKeyDictionary()
_rate_limiters: dict[tuple[Hashable, ...], RateLimiter] = {}


def shared_semaphore(provider: str, endpoint: str, limit: int) -> asyncio.Semaphore:
    """The running loop's semaphore shared by every transport with the same provider,
    endpoint and limit."""
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


class EndpointLimits:
    """The concurrency and rate limits of one provider endpoint, as a transport
    applies them to every attempt: :meth:`wait_turn` before it, :meth:`slot` around it.

    Args:
        provider, endpoint: the key the limits are shared under.
        max_concurrency: requests in flight at once; ``None`` for no limit.
        requests_per_minute: an optional rate limit; ``None`` for none.
        burst: requests allowed back to back before the rate limit spaces them.
        clock: the rate limiter's clock.

    Raises:
        ValueError: ``max_concurrency`` below 1, or an invalid rate or burst.
    """

    def __init__(
        self,
        provider: str,
        endpoint: str,
        *,
        max_concurrency: int | None,
        requests_per_minute: float | None,
        burst: int = 1,
        clock: Clock = time.monotonic,
    ) -> None:
        if max_concurrency is not None and max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1 (or None for no limit)")
        self.provider = provider
        self.endpoint = endpoint
        self.max_concurrency = max_concurrency
        self.rate_limiter = (
            shared_rate_limiter(provider, endpoint, requests_per_minute, burst=burst, clock=clock)
            if requests_per_minute is not None
            else None
        )

    async def wait_turn(self, sleep: Sleep) -> None:
        """Wait until the rate limit lets another request go (at once without one)."""
        if self.rate_limiter is not None:
            await self.rate_limiter.acquire(sleep)

    def slot(self) -> AbstractAsyncContextManager[Any]:
        """Held while a request is in flight."""
        if self.max_concurrency is None:
            return nullcontext()
        return shared_semaphore(self.provider, self.endpoint, self.max_concurrency)
