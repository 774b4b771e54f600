"""Per-call usage (tokens, requests, cost) and its totals."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pydantic import Field

from docevals_mlflow.core.model import DocEvalsModel, Number
from docevals_mlflow.errors import InputError


class Usage(DocEvalsModel):
    """Resources one or more provider calls used.

    ``requests`` counts HTTP requests (retries and failed calls included) or, for a
    plain-function judge, calls.
    """

    requests: int = 0
    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    total_tokens: int = 0
    cost_usd: float | None = None
    """``None`` when no price is known for any of the calls."""
    unpriced_requests: int = 0
    """Requests whose cost is unknown (no price for their model). With ``cost_usd``
    set and this above zero, the cost is partial: it leaves those requests out."""

    @property
    def unknown_cost_requests(self) -> int:
        """Requests whose cost is not in ``cost_usd`` (all of them when it is ``None``)."""
        return self.requests if self.cost_usd is None else self.unpriced_requests

    @property
    def cost_is_partial(self) -> bool:
        """Whether ``cost_usd`` is known but leaves some requests out."""
        return self.cost_usd is not None and self.unpriced_requests > 0

    def __add__(self, other: Usage) -> Usage:
        cost = (
            None
            if self.cost_usd is None and other.cost_usd is None
            else (self.cost_usd or 0.0) + (other.cost_usd or 0.0)
        )
        # A sum with a known cost must still say which requests it does not cover:
        # an unpriced model's calls are unknown, never $0.
        unpriced = self.unknown_cost_requests + other.unknown_cost_requests
        return Usage(
            requests=self.requests + other.requests,
            input_tokens=self.input_tokens + other.input_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            cost_usd=cost,
            unpriced_requests=unpriced if cost is not None else 0,
        )

    def as_metrics(self) -> dict[str, float]:
        """The figures a metric result carries (``usage`` in reports and MLflow);
        ``cost_usd`` only when known, and ``unpriced_requests`` when it leaves some
        requests out."""
        figures: dict[str, float] = {
            "requests": float(self.requests),
            "input_tokens": float(self.input_tokens),
            "cached_input_tokens": float(self.cached_input_tokens),
            "output_tokens": float(self.output_tokens),
            "reasoning_tokens": float(self.reasoning_tokens),
            "total_tokens": float(self.total_tokens),
        }
        if self.cost_usd is not None:
            figures["cost_usd"] = self.cost_usd
            if self.unpriced_requests:
                figures["unpriced_requests"] = float(self.unpriced_requests)
        return figures


def total_usage(usages: Iterable[Usage]) -> Usage:
    """The sum of many usages."""
    total = Usage()
    for usage in usages:
        total = total + usage
    return total


class Price(DocEvalsModel):
    """USD per million tokens for one model."""

    # Number: a boolean (``input: true``) is a slip, not a price of 1.0.
    input: Number = Field(ge=0)
    output: Number = Field(ge=0)
    cached_input: Number | None = Field(default=None, ge=0)


def canonical_provider(name: str) -> str:
    """The one spelling of a provider name used in price keys and reports:
    lower case with hyphens (``openai_compatible`` and ``OpenAI-Compatible`` are
    ``openai-compatible``)."""
    return name.strip().casefold().replace("_", "-")


class PriceTable(DocEvalsModel):
    """Prices by ``provider:model`` or ``model``; configurable, never fetched.

    The provider part of a key is compared in its canonical spelling
    (:func:`canonical_provider`), so ``openai_compatible:qwen`` and
    ``openai-compatible:qwen`` name the same price.
    """

    prices: dict[str, Price] = Field(default_factory=dict)

    def price(self, provider: str, model: str) -> Price | None:
        """The price of ``model`` as served by ``provider``: ``provider:model`` first,
        then the bare ``model``; ``None`` when neither is known."""
        exact = self.prices.get(f"{provider}:{model}")
        if exact is not None:
            return exact
        wanted = f"{canonical_provider(provider)}:{model}"
        for key, value in self.prices.items():
            head, sep, rest = key.partition(":")
            if sep and f"{canonical_provider(head)}:{rest}" == wanted:
                return value
        return self.prices.get(model)

    def cost(self, provider: str, model: str, usage: Usage) -> float | None:
        """The cost of ``usage`` for a model, or ``None`` when its price is unknown."""
        price = self.price(provider, model)
        if price is None:
            return None
        cached = min(usage.cached_input_tokens, usage.input_tokens)
        cached_price = price.cached_input if price.cached_input is not None else price.input
        return (
            (usage.input_tokens - cached) * price.input
            + cached * cached_price
            + usage.output_tokens * price.output
        ) / 1_000_000

    @classmethod
    def from_mapping(cls, data: Mapping[str, Mapping[str, float]]) -> PriceTable:
        """From ``{"openai:gpt-x": {"input": 0.4, "output": 1.6}, ...}``.

        Raises:
            InputError: a price is invalid (the path names its model).
        """
        prices: dict[str, Price] = {}
        for key, value in data.items():
            try:
                prices[key] = Price.model_validate(dict(value))
            except InputError as exc:
                path = f"{key}.{exc.path}" if exc.path else key
                raise InputError(exc.message, path=path, expected=exc.expected) from None
        return cls(prices=prices)
