"""What each call of an HTTP adapter used and how it went, kept per adapter."""

from __future__ import annotations

import threading
import time
from typing import Any, Literal

from docevals_mlflow.core.model import DocEvalsModel
from docevals_mlflow.judges.usage import Usage, total_usage

CallStatus = Literal["complete", "refused", "truncated", "error"]


class UsageRecord(DocEvalsModel):
    """One provider call: what it used and how it went."""

    provider: str
    model: str
    status: CallStatus
    usage: Usage
    latency_seconds: float
    attempts: int
    """HTTP requests made, retries included."""
    repair: bool = False
    """Whether this was a repair attempt."""
    http_status: int | None = None
    response_model: str | None = None
    """The model version the provider reports having used."""
    error: str | None = None
    """The (redacted) error message of a failed call."""


class UsageAccounting:
    """One :class:`UsageRecord` per call of an adapter, in the order calls finished
    (the usage half of :class:`~docevals_mlflow.judges.adapters.base.HttpAdapter`).

    Thread-safe: calls may finish on several threads (``run_sync`` from notebooks).
    """

    provider: str
    model: str

    def _start_records(self) -> None:
        """Begin with no records (a copied adapter keeps its own)."""
        self._records: list[UsageRecord] = []
        self._records_lock = threading.Lock()

    def _record(self, started: float, repair: bool, **outcome: Any) -> None:
        """Keep the record of a call begun at ``started`` (``time.perf_counter``)."""
        record = UsageRecord(
            provider=self.provider,
            model=self.model,
            latency_seconds=time.perf_counter() - started,
            repair=repair,
            **outcome,
        )
        with self._records_lock:
            self._records.append(record)

    @property
    def usage_records(self) -> list[UsageRecord]:
        """One record per call, in the order calls finished."""
        with self._records_lock:
            return list(self._records)

    @property
    def last_usage(self) -> Usage | None:
        """The usage of the call that finished last (``None`` before any call)."""
        with self._records_lock:
            return self._records[-1].usage if self._records else None

    @property
    def total_usage(self) -> Usage:
        """The sum over every recorded call."""
        return total_usage(record.usage for record in self.usage_records)

    def reset_usage(self) -> None:
        """Forget every usage record."""
        with self._records_lock:
            self._records.clear()
