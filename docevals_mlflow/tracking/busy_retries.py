"""Retrying store calls that SQLite answers with "database is locked".

Once a store is ready, processes log into it concurrently; a statement SQLite
refused as busy rolled its transaction back, so retrying it is safe.
"""

from __future__ import annotations

import functools
import logging
import random
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

BUSY_RETRY_SECONDS = 60.0
"""How long to keep retrying a store call that SQLite answers with "database is locked"."""

_BUSY_MESSAGES = ("database is locked", "database table is locked", "database is busy")
_T = TypeVar("_T")
_retrying_here = threading.local()


def is_busy(error: BaseException) -> bool:
    """Whether ``error`` is SQLite saying another connection holds the lock it needs
    (a retry succeeds once that connection commits)."""
    text = str(error).lower()
    return any(message in text for message in _BUSY_MESSAGES)


def retry_busy(call: Callable[[], _T], *, seconds: float = BUSY_RETRY_SECONDS) -> _T:
    """``call()``, retried with growing, jittered pauses while SQLite answers "database
    is locked", for at most ``seconds``.

    Safe for store calls: a statement SQLite refused this way rolled its transaction
    back, so nothing of the failed attempt was written.
    """
    deadline = time.monotonic() + seconds
    delay = 0.02
    _install_busy_filter()
    _retrying_here.active = getattr(_retrying_here, "active", 0) + 1
    try:
        while True:
            try:
                return call()
            except Exception as error:
                if not is_busy(error) or time.monotonic() > deadline:
                    raise
            # Jitter keeps processes that collided once from colliding again.
            time.sleep(delay * random.uniform(0.5, 1.5))
            delay = min(delay * 2, 1.0)
    finally:
        _retrying_here.active -= 1


class _RetryingClient:
    """An ``MlflowClient`` whose every method is retried by :func:`retry_busy`."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._client, name)
        if not callable(attribute):
            return attribute

        @functools.wraps(attribute)
        def call(*args: Any, **kwargs: Any) -> Any:
            return retry_busy(lambda: attribute(*args, **kwargs))

        return call


def retrying(client: Any) -> Any:
    """``client`` (an ``MlflowClient``) with store calls retried on "database is locked"."""
    return _RetryingClient(client)


class _BusyFilter(logging.Filter):
    # MLflow logs every SQLite OperationalError with a traceback before raising it;
    # a busy one that is about to be retried is not an error.
    def filter(self, record: logging.LogRecord) -> bool:
        if not getattr(_retrying_here, "active", 0):
            return True
        return not any(message in record.getMessage().lower() for message in _BUSY_MESSAGES)


_busy_filter = _BusyFilter()


def _install_busy_filter() -> None:
    logger = logging.getLogger("mlflow.store.db.utils")
    if _busy_filter not in logger.filters:
        logger.addFilter(_busy_filter)
