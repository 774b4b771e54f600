"""The seed's ``visual_evals.usage``: token counts per provider call, and their sums.

:class:`TokenUsage` is the seed's per-call record. The package itself counts usage
with :class:`~docevals_mlflow.judges.usage.Usage` (returned with every call, failed
and retried requests included); :meth:`TokenUsage.from_usage` turns one into the
other.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from docevals_mlflow.judges.usage import Usage

__all__ = ["TokenUsage", "UsageLedger", "UsageSummary", "usage_records_for"]


def _count(value: Any) -> int:
    """A token count from a usage field that may be missing, null or not a number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    return int(value)


def _details(usage: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = usage.get(key)
    return value if isinstance(value, Mapping) else {}


class TokenUsage(BaseModel):
    """Token counts of one provider request (the seed's record).

    ``input_tokens`` is all input: uncached, cache reads and cache writes.
    """

    model_config = ConfigDict(extra="forbid")

    provider: str
    model: str
    input_tokens: int = 0
    uncached_input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    output_tokens: int = 0
    reasoning_output_tokens: int = 0
    total_tokens: int = 0
    request_count: int = 1
    raw_usage: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def from_openai(cls, *, model: str, usage: Mapping[str, Any]) -> TokenUsage:
        """From the ``usage`` object of an OpenAI Responses answer."""
        input_tokens = _count(usage.get("input_tokens"))
        output_tokens = _count(usage.get("output_tokens"))
        cached = _count(_details(usage, "input_tokens_details").get("cached_tokens"))
        return cls(
            provider="openai",
            model=model,
            input_tokens=input_tokens,
            uncached_input_tokens=max(input_tokens - cached, 0),
            cached_input_tokens=cached,
            output_tokens=output_tokens,
            reasoning_output_tokens=_count(
                _details(usage, "output_tokens_details").get("reasoning_tokens")
            ),
            total_tokens=_count(usage.get("total_tokens")) or input_tokens + output_tokens,
            raw_usage=dict(usage),
        )

    @classmethod
    def from_anthropic(cls, *, model: str, usage: Mapping[str, Any]) -> TokenUsage:
        """From the ``usage`` object of an Anthropic Messages answer (whose
        ``input_tokens`` leaves out cache reads and writes)."""
        uncached = _count(usage.get("input_tokens"))
        cached = _count(usage.get("cache_read_input_tokens"))
        written = _count(usage.get("cache_creation_input_tokens"))
        output_tokens = _count(usage.get("output_tokens"))
        input_tokens = uncached + cached + written
        return cls(
            provider="anthropic",
            model=model,
            input_tokens=input_tokens,
            uncached_input_tokens=uncached,
            cached_input_tokens=cached,
            cache_creation_input_tokens=written,
            output_tokens=output_tokens,
            reasoning_output_tokens=_count(
                _details(usage, "output_tokens_details").get("thinking_tokens")
            ),
            total_tokens=input_tokens + output_tokens,
            raw_usage=dict(usage),
        )

    @classmethod
    def from_usage(cls, *, provider: str, model: str, usage: Usage) -> TokenUsage:
        """From this package's :class:`~docevals_mlflow.judges.usage.Usage` (one call
        or a sum; ``request_count`` is its request count)."""
        return cls(
            provider=provider,
            model=model,
            input_tokens=usage.input_tokens,
            uncached_input_tokens=max(usage.input_tokens - usage.cached_input_tokens, 0),
            cached_input_tokens=usage.cached_input_tokens,
            output_tokens=usage.output_tokens,
            reasoning_output_tokens=usage.reasoning_tokens,
            total_tokens=usage.total_tokens,
            request_count=usage.requests,
        )


_BUCKET_KEYS = ("request_count", "input_tokens", "output_tokens", "total_tokens")
_SUMMED = (
    "input_tokens",
    "uncached_input_tokens",
    "cached_input_tokens",
    "cache_creation_input_tokens",
    "output_tokens",
    "reasoning_output_tokens",
    "total_tokens",
)


class UsageSummary(BaseModel):
    """Usage summed over requests, with a breakdown by ``provider:model``."""

    model_config = ConfigDict(extra="forbid")

    request_count: int = 0
    input_tokens: int = 0
    uncached_input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    output_tokens: int = 0
    reasoning_output_tokens: int = 0
    total_tokens: int = 0
    by_provider_model: dict[str, dict[str, int]] = Field(default_factory=dict)

    @classmethod
    def from_records(cls, records: list[TokenUsage]) -> UsageSummary:
        """The sum of ``records``."""
        buckets: dict[str, dict[str, int]] = {}
        totals = dict.fromkeys(_SUMMED, 0)
        requests = 0
        for record in records:
            bucket = buckets.setdefault(
                f"{record.provider}:{record.model}", dict.fromkeys(_BUCKET_KEYS, 0)
            )
            for key in _BUCKET_KEYS:
                bucket[key] += getattr(record, key)
            for key in _SUMMED:
                totals[key] += getattr(record, key)
            requests += record.request_count
        return cls(request_count=requests, by_provider_model=buckets, **totals)


class UsageLedger:
    """The usage records an adapter keeps, one per answered call (the seed's mixin)."""

    def __init__(self) -> None:
        self._usage_records: list[TokenUsage] = []

    @property
    def usage_records(self) -> list[TokenUsage]:
        """One record per answered call, oldest first."""
        return list(self._usage_records)

    @property
    def last_usage(self) -> TokenUsage | None:
        """The record of the call that finished last. Under concurrency or reuse this
        is whichever call finished last: read the records (or, natively, the usage
        returned with each call) instead."""
        return self._usage_records[-1] if self._usage_records else None

    @property
    def total_usage(self) -> UsageSummary:
        """The sum of every record."""
        return UsageSummary.from_records(self._usage_records)

    def reset_usage(self) -> None:
        """Forget every record."""
        self._usage_records.clear()

    def _record_usage(self, usage: TokenUsage) -> None:
        self._usage_records.append(usage)


def usage_records_for(adapter: Any) -> list[TokenUsage]:
    """The :class:`TokenUsage` records an adapter (or function) keeps; none when it
    keeps none. This package's own adapters' records are converted."""
    records = getattr(adapter, "usage_records", None)
    if not isinstance(records, list):
        return []
    converted: list[TokenUsage] = []
    for item in records:
        if isinstance(item, TokenUsage):
            converted.append(item)
        elif isinstance(getattr(item, "usage", None), Usage):
            converted.append(
                TokenUsage.from_usage(
                    provider=str(getattr(item, "provider", "custom")),
                    model=str(getattr(item, "response_model", None) or getattr(item, "model", "")),
                    usage=item.usage,
                )
            )
        else:
            converted.append(TokenUsage.model_validate(item))
    return converted
