"""Usage totals and price lookup."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from docevals_mlflow.judges.adapters import OpenAICompatibleChatAdapter
from docevals_mlflow.judges.request import JudgeRequest
from docevals_mlflow.judges.settings import TransportSettings
from docevals_mlflow.judges.usage import PriceTable, Usage, canonical_provider, total_usage

PRICE = {"input": 1.0, "output": 2.0}
MILLION = Usage(requests=1, input_tokens=1_000_000, output_tokens=1_000_000)


@pytest.mark.parametrize("key", ["openai-compatible:qwen", "openai_compatible:qwen"])
@pytest.mark.parametrize(
    "provider", ["openai-compatible", "openai_compatible", "OpenAI_Compatible"]
)
def test_provider_spellings_name_the_same_price(key, provider):
    table = PriceTable.from_mapping({key: PRICE})
    assert table.cost(provider, "qwen", MILLION) == 3.0


def test_bare_model_names_with_colons_still_match():
    table = PriceTable.from_mapping(
        {"qwen2.5:7b": PRICE, "openai:gpt-x": {"input": 5, "output": 5}}
    )
    assert table.cost("openai-compatible", "qwen2.5:7b", MILLION) == 3.0
    assert table.cost("openai", "gpt-x", MILLION) == 10.0
    assert table.cost("anthropic", "gpt-x", MILLION) is None


def test_canonical_provider():
    assert canonical_provider(" OpenAI_Compatible ") == "openai-compatible"
    assert canonical_provider("anthropic") == "anthropic"


def test_a_chat_adapter_reports_the_canonical_provider_and_finds_its_price():
    reply = {
        "choices": [{"message": {"content": '{"results": []}'}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1_000_000, "completion_tokens": 0},
    }
    client = httpx.AsyncClient(
        transport=httpx.MockTransport(lambda _: httpx.Response(200, json=reply))
    )
    adapter = OpenAICompatibleChatAdapter(
        model="qwen",
        base_url="http://127.0.0.1:9/v1",
        prices=PriceTable.from_mapping({"openai-compatible:qwen": PRICE}),
        http=TransportSettings(client=client),
    )
    assert adapter.describe()["provider"] == "openai-compatible"
    request = JudgeRequest(instructions="i", task={}, output_schema={"type": "object"})
    answer = asyncio.run(adapter.agenerate(request))
    assert answer.usage.cost_usd == 1.0


def test_an_unpriced_call_makes_a_sum_partial_never_free():
    priced = Usage(requests=2, cost_usd=0.5)
    unpriced = Usage(requests=3)
    total = priced + unpriced
    assert (total.cost_usd, total.unpriced_requests, total.cost_is_partial) == (0.5, 3, True)
    assert total.as_metrics()["unpriced_requests"] == 3.0
    # Nothing priced: the cost is unknown, not partial.
    assert (unpriced + unpriced).cost_usd is None
    assert not (unpriced + unpriced).cost_is_partial
    # A cached answer (no requests) leaves a priced total complete.
    assert not (priced + Usage()).cost_is_partial
    assert "unpriced_requests" not in (priced + Usage()).as_metrics()


usages = st.builds(
    Usage,
    requests=st.integers(0, 5),
    cost_usd=st.one_of(st.none(), st.floats(0, 1)),
)


@given(st.lists(usages, max_size=6))
def test_unknown_cost_requests_add_up(parts):
    total = total_usage(parts)
    assert total.unknown_cost_requests == sum(part.unknown_cost_requests for part in parts)
    assert total.requests == sum(part.requests for part in parts)
