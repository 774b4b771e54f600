"""Adapters through :class:`ModelJudge` against the loopback fake provider.

Real HTTP on 127.0.0.1: the shared pooled client, retries, the three wire formats,
repairs, refusals, truncation, concurrency, and the API key kept out of everything
except the one header that needs it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pymupdf
import pytest

from docevals_mlflow import EvaluationCase, EvaluationSpec, artifact_from_path, artifact_from_value
from docevals_mlflow.errors import ProviderError
from docevals_mlflow.judges.adapters import (
    AnthropicMessagesAdapter,
    OpenAICompatibleChatAdapter,
    OpenAIResponsesAdapter,
)
from docevals_mlflow.judges.adapters.base import HttpAdapter
from docevals_mlflow.judges.judge import JudgeResult, ModelJudge
from docevals_mlflow.judges.request import JudgeRequest, build_judge_request
from docevals_mlflow.judges.retry import RetryPolicy
from docevals_mlflow.judges.settings import TransportSettings
from docevals_mlflow.judges.usage import PriceTable
from tests.judges.provider_server import (
    ProviderServer,
    embed,
    malformed,
    ok,
    refusal,
    slow,
    status,
    truncated,
)

KEY = "sk-test-PLANTED-123"
FAST = RetryPolicy(base_delay=0.01, max_delay=0.02)
"""Backoff short enough for tests; Retry-After from the server still wins."""


def fast(**settings: Any) -> TransportSettings:
    """Transport settings with the short test backoff unless a policy is given."""
    settings.setdefault("retry_policy", FAST)
    return TransportSettings(**settings)


def openai_adapter(
    server: ProviderServer,
    *,
    prices: PriceTable | None = None,
    max_output_tokens: int | None = None,
    **transport: Any,
) -> HttpAdapter:
    return OpenAIResponsesAdapter(
        model="gpt-test",
        api_key=KEY,
        base_url=server.base_url,
        temperature=0.2,
        max_output_tokens=max_output_tokens,
        prices=prices,
        http=fast(**transport),
    )


def anthropic_adapter(
    server: ProviderServer,
    *,
    prices: PriceTable | None = None,
    max_output_tokens: int | None = None,
    **transport: Any,
) -> HttpAdapter:
    return AnthropicMessagesAdapter(
        model="claude-test",
        api_key=KEY,
        base_url=server.base_url,
        temperature=0.2,
        max_output_tokens=max_output_tokens,
        prices=prices,
        http=fast(**transport),
    )


def chat_adapter(
    server: ProviderServer,
    *,
    prices: PriceTable | None = None,
    max_output_tokens: int | None = None,
    **transport: Any,
) -> HttpAdapter:
    return OpenAICompatibleChatAdapter(
        model="local-vl",
        api_key=KEY,
        base_url=server.base_url,
        temperature=0.2,
        max_output_tokens=max_output_tokens,
        pdf_dpi=40,
        prices=prices,
        http=fast(**transport),
    )


FACTORIES: dict[str, Callable[..., HttpAdapter]] = {
    "responses": openai_adapter,
    "messages": anthropic_adapter,
    "chat/completions": chat_adapter,
}
ENDPOINTS = list(FACTORIES)


def key_header(endpoint: str, headers: dict[str, str]) -> str:
    if endpoint == "messages":
        return headers["x-api-key"]
    return headers["authorization"]


@pytest.fixture
def judge_request(tmp_path: Path) -> JudgeRequest:
    document = pymupdf.open()
    for number in (1, 2):
        page = document.new_page(width=300, height=200)
        page.insert_text((40, 60), f"Total due page {number}: 12.50 EUR")
    document.save(tmp_path / "invoice.pdf")
    image = document[0].get_pixmap(dpi=20)
    (tmp_path / "scan.png").write_bytes(image.tobytes("png"))
    document.close()
    case = EvaluationCase(
        case_id="statement-1",
        stage_id="extract",
        operation="extract",
        action_instruction="Extract the total and currency.",
        evaluation_spec=EvaluationSpec(spec_id="e", objective="o", criteria=["c"]),
        prediction={"total": 12.5, "currency": "EUR"},
        references=[
            artifact_from_path(tmp_path / "invoice.pdf", authority="evidence"),
            artifact_from_path(tmp_path / "scan.png", authority="evidence"),
            artifact_from_value({"total": 12.5}, authority="ground_truth", artifact_id="gt"),
            artifact_from_value("Total due: 12.50 EUR", authority="evidence", artifact_id="ocr"),
        ],
    )
    return build_judge_request(case)


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_ok_answer_through_model_judge(provider_server, judge_request, tmp_path, endpoint):
    adapter = FACTORIES[endpoint](provider_server)
    result = ModelJudge(adapter).judge(judge_request)

    assert result.status == "ok", result.error
    assert result.output is not None
    assert [claim.claim_id for claim in result.output.prediction_claims] == ["p00001", "p00002"]
    assert [claim.claim_id for claim in result.output.reference_claims] == ["r00001"]
    assert result.usage.requests == 1
    assert result.usage.input_tokens > 0
    assert result.usage.output_tokens > 0
    assert result.judge == adapter.describe()

    (received,) = provider_server.requests
    assert received.endpoint == endpoint
    assert received.method == "POST"
    assert received.path == f"/v1/{endpoint}"
    assert key_header(endpoint, received.headers).endswith(KEY)
    assert received.body["temperature"] == 0.2
    text = received.text
    assert "Reference invoice (evidence, pdf, invoice.pdf)" in text
    assert "Reference scan (evidence, image, scan.png)" in text
    assert str(tmp_path) not in text  # only file names leave the machine
    assert "/tmp" not in text

    (record,) = adapter.usage_records
    assert (record.status, record.attempts, record.http_status) == ("complete", 1, 200)
    assert record.usage == result.usage


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_malformed_answer_is_repaired(provider_server, judge_request, endpoint):
    provider_server.script(endpoint, malformed('{"summary": "oops", '), ok())
    adapter = FACTORIES[endpoint](provider_server)
    result = ModelJudge(adapter).judge(judge_request)

    assert result.status == "repaired", result.error
    assert result.attempts == 2
    assert result.usage.requests == 2
    first, second = provider_server.requests
    assert "Your previous answer could not be used" not in first.text
    assert "Your previous answer could not be used" in second.text
    assert json.dumps('{"summary": "oops", ')[1:-1] in second.text  # the answer went back
    assert [record.repair for record in adapter.usage_records] == [False, True]


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_malformed_twice_keeps_the_raw_text(provider_server, judge_request, endpoint):
    provider_server.script(endpoint, malformed("not json at all"), malformed("still { not json"))
    result = ModelJudge(FACTORIES[endpoint](provider_server)).judge(judge_request)

    assert result.status == "malformed"
    assert result.output is None
    assert result.raw_text == "still { not json"
    assert "after one repair attempt" in (result.error or "")
    assert len(provider_server.requests) == 2


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_refusal_is_reported_not_parsed(provider_server, judge_request, endpoint):
    provider_server.script(endpoint, refusal("I can't help with that document."))
    result = ModelJudge(FACTORIES[endpoint](provider_server)).judge(judge_request)

    assert result.status == "refused"
    assert result.output is None
    assert "I can't help with that document." in (result.error or "")
    assert len(provider_server.requests) == 1  # a refusal is not retried or repaired


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_truncated_answer_is_reported(provider_server, judge_request, endpoint):
    provider_server.script(endpoint, truncated())
    adapter = FACTORIES[endpoint](provider_server, max_output_tokens=64)
    result = ModelJudge(adapter).judge(judge_request)

    assert result.status == "truncated"
    assert result.output is None
    assert result.raw_text
    assert "cut off" in (result.error or "")
    assert adapter.usage_records[0].status == "truncated"


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_429_is_retried_after_the_servers_delay(provider_server, judge_request, endpoint):
    provider_server.script(endpoint, status(429, retry_after="0", message="rate limited"), ok())
    adapter = FACTORIES[endpoint](provider_server)
    result = ModelJudge(adapter).judge(judge_request)

    assert result.status == "ok", result.error
    assert result.attempts == 1  # one judgement attempt ...
    assert adapter.usage_records[0].attempts == 2  # ... that took two HTTP requests
    assert len(provider_server.requests) == 2
    first, second = provider_server.requests
    assert first.raw == second.raw


def test_529_overloaded_then_ok(provider_server, judge_request):
    provider_server.script("messages", status(529, message="Overloaded"), ok())
    adapter = anthropic_adapter(provider_server)
    assert ModelJudge(adapter).judge(judge_request).status == "ok"
    assert adapter.usage_records[0].attempts == 2


def test_read_timeout_is_retried(provider_server, judge_request):
    provider_server.script("responses", slow(1.5), ok())
    adapter = openai_adapter(provider_server, timeout=0.4)
    result = ModelJudge(adapter).judge(judge_request)

    assert result.status == "ok", result.error
    assert adapter.usage_records[0].attempts == 2


def test_exhausted_retries_become_an_error_result(provider_server, judge_request):
    provider_server.script("responses", *[status(500, message="internal") for _ in range(3)])
    adapter = openai_adapter(provider_server, max_retries=2)
    result = ModelJudge(adapter).judge(judge_request)

    assert result.status == "error"
    assert result.error is not None
    assert result.error.startswith("ProviderError: openai returned HTTP 500")
    assert "after 3 attempts" in result.error
    (record,) = adapter.usage_records
    assert (record.status, record.attempts, record.http_status) == ("error", 3, 500)


def test_bad_request_is_not_retried(provider_server, judge_request):
    provider_server.script("chat/completions", status(400, message="response_format unsupported"))
    adapter = chat_adapter(provider_server)
    result = ModelJudge(adapter).judge(judge_request)
    assert result.status == "error"
    assert "response_format unsupported" in (result.error or "")
    assert len(provider_server.requests) == 1


def test_non_json_body_is_an_error_result(provider_server, judge_request):
    from tests.judges.provider_server import invalid_body

    provider_server.script("responses", invalid_body())
    result = ModelJudge(openai_adapter(provider_server)).judge(judge_request)
    assert result.status == "error"
    assert "not JSON" in (result.error or "")


def test_concurrent_judgements_respect_the_concurrency_limit(provider_server, judge_request):
    provider_server.latency = 0.15
    adapter = chat_adapter(provider_server, max_concurrency=2)
    judge = ModelJudge(adapter)

    async def judge_many() -> list[JudgeResult]:
        return list(await asyncio.gather(*(judge.ajudge(judge_request) for _ in range(6))))

    results = asyncio.run(judge_many())
    assert [result.status for result in results] == ["ok"] * 6
    assert len(provider_server.requests) == 6
    assert provider_server.max_in_flight == 2
    # Each result carries its own call's usage, never another's.
    assert sum(result.usage.requests for result in results) == 6
    assert adapter.total_usage.requests == 6


def test_cost_is_computed_from_prices(provider_server, judge_request):
    prices = PriceTable.from_mapping({"anthropic:claude-test": {"input": 3.0, "output": 15.0}})
    result = ModelJudge(anthropic_adapter(provider_server, prices=prices)).judge(judge_request)
    usage = result.usage
    assert usage.cost_usd == pytest.approx(
        (usage.input_tokens * 3.0 + usage.output_tokens * 15.0) / 1e6
    )


def test_embeddings_endpoint_is_deterministic_and_normalised(provider_server):
    url = f"{provider_server.base_url}/embeddings"
    payload = {"model": "fake-embed", "input": ["total due 12.50", "Total due 12.50", "cat"]}
    with httpx.Client() as client:
        first = client.post(url, json=payload).json()
        second = client.post(url, json={**payload, "dimensions": 16}).json()
    vectors = [item["embedding"] for item in first["data"]]
    assert [item["index"] for item in first["data"]] == [0, 1, 2]
    assert all(math.isclose(sum(value * value for value in vector), 1.0) for vector in vectors)
    assert vectors[0] == vectors[1] == embed("total due 12.50")  # case-insensitive words
    assert vectors[0] != vectors[2]
    assert len(second["data"][0]["embedding"]) == 16
    assert first["usage"]["prompt_tokens"] == 9  # "12.50" counts as two words


def test_the_api_key_never_leaks(provider_server, judge_request, caplog):
    """A planted key reaches the provider's header and nothing else: not an exception,
    a judge result, a usage record, ``describe()`` or a log record."""
    caplog.set_level(logging.DEBUG)
    seen: list[str] = []

    for endpoint, factory in FACTORIES.items():
        provider_server.script(
            endpoint,
            # Rejected key echoed back in the error message, as real providers do.
            status(401, message="Incorrect API key provided: {key}."),
            # Retries exhausted, with the key in every error body.
            status(503, message="overloaded ({key})"),
            status(503, message="overloaded ({key})"),
            # Then a retried success and a plain success.
            status(429, retry_after="0", message="slow down {key}"),
            ok(),
            ok(),
        )
        adapter = factory(provider_server, max_retries=1)
        judge = ModelJudge(adapter)

        for _ in range(2):  # the 401, then the exhausted 503s, raised directly
            with pytest.raises(ProviderError) as caught:
                asyncio.run(adapter.agenerate(judge_request))
            seen.append(str(caught.value))
            seen.append(repr(caught.value))
            seen.append(json.dumps(caught.value.context()))
        assert "Incorrect API key provided: [REDACTED]." in seen[-6]

        results = [judge.judge(judge_request) for _ in range(2)]
        assert [result.status for result in results] == ["ok", "ok"]
        seen.extend(result.model_dump_json() for result in results)
        seen.extend(record.model_dump_json() for record in adapter.usage_records)
        seen.append(json.dumps(adapter.describe()))
        seen.append(json.dumps(judge.describe()))
        seen.append(repr(adapter))

        # The failure path through the judge: an error result, redacted.
        provider_server.script(endpoint, status(403, message="key {key} has no access"))
        failed = judge.judge(judge_request)
        assert failed.status == "error"
        assert "[REDACTED]" in (failed.error or "")
        seen.append(failed.model_dump_json())

    seen.extend(record.getMessage() for record in caplog.records)
    assert any("retrying" in message for message in seen)  # the retries were logged
    leaks = [text for text in seen if KEY in text]
    assert leaks == []
    # Positive control: the key did reach the provider, in the header only.
    for received in provider_server.requests:
        assert key_header(received.endpoint, received.headers).endswith(KEY)
        assert KEY not in received.text


# -- review fixes: requests counted, retry policy, refusal text ------------------------


def test_failed_and_retried_requests_are_counted_in_usage(provider_server, judge_request):
    from docevals_mlflow.evaluation.llm_metric import judge_metric_result

    provider_server.script("responses", *[status(500, message="internal") for _ in range(3)])
    adapter = openai_adapter(provider_server, max_retries=2)
    failed = ModelJudge(adapter).judge(judge_request)
    assert failed.status == "error"
    assert failed.usage.requests == 3  # three HTTP requests, all failed
    assert adapter.usage_records[0].usage.requests == 3
    metric = judge_metric_result("judge", judge_request, failed, None)
    assert metric.usage["requests"] == 3

    provider_server.script("responses", status(429, retry_after="0"), ok())
    retried = ModelJudge(adapter).judge(judge_request)
    assert retried.status == "ok"
    assert retried.usage.requests == 2  # the 429 and the answer


def test_a_failed_call_of_a_priced_model_costs_nothing_but_is_priced(
    provider_server, judge_request
):
    provider_server.script("responses", status(400, message="bad"))
    prices = PriceTable.from_mapping({"gpt-test": {"input": 1.0, "output": 1.0}})
    failed = ModelJudge(openai_adapter(provider_server, prices=prices)).judge(judge_request)
    assert (failed.usage.requests, failed.usage.cost_usd) == (1, 0.0)


def test_the_retry_policy_sets_the_retry_count(provider_server, judge_request):
    provider_server.script("responses", *[status(500, message="internal") for _ in range(6)])
    policy = RetryPolicy(max_retries=1, base_delay=0.01, max_delay=0.02)
    adapter = openai_adapter(provider_server, retry_policy=policy)
    result = ModelJudge(adapter).judge(judge_request)
    assert result.status == "error"
    assert len(provider_server.requests) == 2  # not the adapter's default of 5 retries
    assert "after 2 attempts" in (result.error or "")
    # Agreeing counts are fine; contradicting ones are refused.
    assert openai_adapter(provider_server, retry_policy=policy, max_retries=1)
    from docevals_mlflow.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="contradicts"):
        openai_adapter(provider_server, retry_policy=policy, max_retries=3)


def test_an_openai_refusal_keeps_its_words(provider_server, judge_request):
    from docevals_mlflow.evaluation.llm_metric import judge_metric_result

    provider_server.script("responses", refusal("I won't grade this."))
    result = ModelJudge(openai_adapter(provider_server)).judge(judge_request)
    assert result.status == "refused"
    assert result.raw_text == "I won't grade this."
    metric = judge_metric_result("judge", judge_request, result, None)
    assert metric.details["raw_text"] == "I won't grade this."
    assert metric.notes == ["no verdict: the model refused: I won't grade this."]


def test_a_request_is_out_of_flight_before_its_answer_leaves(provider_server, monkeypatch):
    """Otherwise a client at its concurrency limit could send its next request while
    the server still counts the answered one, and ``max_in_flight`` would overshoot."""
    from tests.judges import provider_server as module

    counted: list[int] = []
    send_json = module._Handler.send_json

    def recording(self, code, payload, headers=None):
        counted.append(provider_server.in_flight)
        return send_json(self, code, payload, headers)

    monkeypatch.setattr(module._Handler, "send_json", recording)
    with httpx.Client() as client:
        for _ in range(2):
            client.post(
                f"{provider_server.base_url}/embeddings", json={"model": "m", "input": ["a"]}
            )
    assert counted == [0, 0]
    assert provider_server.max_in_flight == 1
