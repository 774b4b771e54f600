"""The pooled HTTP client every adapter shares, one per event loop.

Created on first use and closed when its loop shuts down (or by
:func:`aclose_shared_client`); an adapter given its own client uses that one instead.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import AsyncGenerator
from dataclasses import dataclass

import httpx

from docevals_mlflow.judges.settings import DEFAULT_CONNECT_TIMEOUT, DEFAULT_TIMEOUT

DEFAULT_LIMITS = httpx.Limits(
    max_connections=100, max_keepalive_connections=20, keepalive_expiry=30.0
)
"""Connection-pool limits of shared clients (see :func:`configure_shared_clients`)."""


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
