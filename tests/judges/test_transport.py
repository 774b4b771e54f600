"""The shared transport: retries, backoff, Retry-After, limits, pooling, redaction.

Requests go to an ``httpx.MockTransport``; sleeping and clocks are injected, so no
test waits for a real backoff.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import random

import httpx
import pytest

from docevals_mlflow.errors import DocEvalsError, ProviderError
from docevals_mlflow.judges import pool
from docevals_mlflow.judges.limits import RateLimiter
from docevals_mlflow.judges.pool import aclose_shared_client, shared_client
from docevals_mlflow.judges.retry import RetryPolicy, retry_after_seconds
from docevals_mlflow.judges.transport import Transport, public_url, redact

KEY = "sk-test-PLANTED-123"
URL = "https://api.example.test/v1/responses"


class Recorder:
    """An injected ``sleep`` that records delays and advances a fake clock."""

    def __init__(self) -> None:
        self.delays: list[float] = []
        self.now = 1000.0

    async def sleep(self, seconds: float) -> None:
        self.delays.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now


def scripted(
    *responses: httpx.Response | Exception,
) -> tuple[httpx.AsyncClient, list[httpx.Request]]:
    """A client answering with ``responses`` in order (the last one repeats)."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        item = responses[min(len(seen), len(responses)) - 1]
        if isinstance(item, Exception):
            raise item
        return item

    return httpx.AsyncClient(transport=httpx.MockTransport(handler)), seen


def error_response(code: int, message: str, **headers: str) -> httpx.Response:
    return httpx.Response(
        code, json={"error": {"message": message, "type": "api_error"}}, headers=headers
    )


def make_transport(client: httpx.AsyncClient, recorder: Recorder, **options) -> Transport:
    options.setdefault("provider", "openai")
    options.setdefault("endpoint", "https://api.example.test/v1")
    options.setdefault("secrets", [KEY])
    return Transport(
        client=client,
        sleep=recorder.sleep,
        clock=recorder.clock,
        wall_clock=recorder.clock,
        **options,
    )


def send(transport: Transport, client: httpx.AsyncClient, **kwargs):
    async def go():
        async with client:
            return await transport.send(
                "POST", URL, json_body={"model": "m"}, headers={"authorization": f"Bearer {KEY}"}
            )

    return asyncio.run(go(), **kwargs)


def test_429_with_retry_after_zero_is_retried_then_succeeds():
    client, seen = scripted(
        error_response(429, "slow down", **{"Retry-After": "0"}),
        httpx.Response(200, json={"ok": 1}),
    )
    recorder = Recorder()
    response = send(make_transport(client, recorder), client)
    assert response.data == {"ok": 1}
    assert response.attempts == 2
    assert len(seen) == 2
    assert recorder.delays == [0.0]
    # The same bytes are re-sent, credentials included.
    assert seen[0].content == seen[1].content == b'{"model":"m"}'
    assert seen[1].headers["authorization"] == f"Bearer {KEY}"


def test_500_then_success_waits_a_jittered_backoff():
    client, _seen = scripted(error_response(500, "oops"), httpx.Response(200, json={}))
    recorder = Recorder()
    response = send(make_transport(client, recorder, rng=lambda: 0.5), client)
    assert response.attempts == 2
    assert recorder.delays == [0.25]  # half of the first ceiling, 0.5 s


@pytest.mark.parametrize("code", [429, 500, 502, 503, 504, 529])
def test_every_transient_status_is_retried(code):
    client, _seen = scripted(error_response(code, "busy"), httpx.Response(200, json={}))
    assert send(make_transport(client, Recorder()), client).attempts == 2


def test_exhausted_retries_raise_provider_error_without_the_key():
    client, seen = scripted(error_response(503, f"overloaded; your key {KEY} is fine"))
    recorder = Recorder()
    with pytest.raises(ProviderError) as caught:
        send(make_transport(client, recorder, max_retries=2), client)
    error = caught.value
    assert len(seen) == 3
    assert (error.provider, error.status_code, error.attempts) == ("openai", 503, 3)
    assert KEY not in str(error)
    assert "[REDACTED]" in str(error)
    assert "overloaded" in str(error)
    assert "after 3 attempts" in str(error)
    assert isinstance(error, DocEvalsError)
    assert isinstance(error, ConnectionError)
    assert error.__cause__ is None
    assert error.__context__ is None
    assert len(recorder.delays) == 2


@pytest.mark.parametrize("code", [400, 401, 403, 404, 422])
def test_other_client_errors_are_not_retried(code):
    client, seen = scripted(error_response(code, "Invalid value for 'temperature'"))
    recorder = Recorder()
    with pytest.raises(ProviderError) as caught:
        send(make_transport(client, recorder), client)
    assert len(seen) == 1
    assert recorder.delays == []
    assert caught.value.status_code == code
    assert caught.value.attempts == 1
    assert "Invalid value for 'temperature'" in str(caught.value)
    assert f"HTTP {code} api_error" in str(caught.value)


def test_error_message_falls_back_to_body_text_and_names_the_request_id():
    client, _ = scripted(
        httpx.Response(400, text="bad gateway config", headers={"x-request-id": "req_1"})
    )
    with pytest.raises(ProviderError, match=r"bad gateway config \[request id req_1\]"):
        send(make_transport(client, Recorder()), client)


def test_backoff_delays_stay_within_full_jitter_bounds():
    client, seen = scripted(error_response(500, "down"))
    recorder = Recorder()
    rng = random.Random(7).random
    with pytest.raises(ProviderError):
        send(make_transport(client, recorder, max_retries=5, rng=rng), client)
    assert len(seen) == 6
    ceilings = [0.5, 1.0, 2.0, 4.0, 8.0]
    assert len(recorder.delays) == 5
    for delay, ceiling in zip(recorder.delays, ceilings, strict=True):
        assert 0.0 <= delay <= ceiling
    # Jitter really varies the delays.
    assert len(set(recorder.delays)) == 5


def test_backoff_ceilings_double_up_to_the_cap():
    policy = RetryPolicy()
    assert [policy.ceiling(retry) for retry in range(8)] == [0.5, 1, 2, 4, 8, 16, 30, 30]
    assert policy.ceiling(10_000) == 30.0
    assert policy.backoff(3, lambda: 1.0) == 4.0
    assert policy.backoff(3, lambda: 0.0) == 0.0
    with pytest.raises(ValueError, match="max_retries"):
        RetryPolicy(max_retries=-1)


def test_retry_after_http_date_is_honoured():
    recorder = Recorder()
    recorder.now = 1_700_000_000.0
    date = email.utils.formatdate(recorder.now + 7, usegmt=True)
    client, _ = scripted(
        error_response(503, "maintenance", **{"Retry-After": date}), httpx.Response(200, json={})
    )
    send(make_transport(client, recorder), client)
    assert recorder.delays == [pytest.approx(7.0)]


def test_retry_after_ms_wins_and_long_waits_are_capped():
    client, _ = scripted(
        error_response(429, "a", **{"retry-after-ms": "1500", "Retry-After": "9"}),
        error_response(429, "b", **{"Retry-After": "3600"}),
        httpx.Response(200, json={}),
    )
    recorder = Recorder()
    send(make_transport(client, recorder), client)
    assert recorder.delays == [1.5, 60.0]


def test_retry_after_parsing():
    now = 1_700_000_000.0
    assert retry_after_seconds({"retry-after": "12"}, now=now) == 12.0
    assert retry_after_seconds({"retry-after": "0.5"}, now=now) == 0.5
    assert retry_after_seconds({"retry-after": "-3"}, now=now) == 0.0
    past = email.utils.formatdate(now - 60, usegmt=True)
    assert retry_after_seconds({"retry-after": past}, now=now) == 0.0
    assert retry_after_seconds({"retry-after": "soon"}, now=now) is None
    assert retry_after_seconds({"retry-after-ms": "250"}, now=now) == 0.25
    assert retry_after_seconds({"retry-after-ms": "x", "retry-after": "2"}, now=now) == 2.0
    assert retry_after_seconds({}, now=now) is None


def test_connection_errors_and_timeouts_are_retried():
    client, _seen = scripted(
        httpx.ConnectError("connection refused"),
        httpx.ReadTimeout("timed out"),
        httpx.Response(200, json={"fine": True}),
    )
    recorder = Recorder()
    response = send(make_transport(client, recorder), client)
    assert response.attempts == 3
    assert len(recorder.delays) == 2


def test_connection_errors_exhausted_raise_provider_error():
    client, seen = scripted(httpx.ConnectTimeout("connect timed out"))
    with pytest.raises(ProviderError, match="ConnectTimeout: connect timed out") as caught:
        send(make_transport(client, Recorder(), max_retries=1), client)
    assert caught.value.status_code is None
    assert caught.value.attempts == 2
    # The httpx exception (which holds the request, headers and key included) is not
    # chained onto the error.
    assert caught.value.__cause__ is None
    assert caught.value.__suppress_context__
    assert len(seen) == 2


def test_non_retryable_transport_errors_fail_at_once():
    client, seen = scripted(httpx.UnsupportedProtocol("no such scheme"))
    with pytest.raises(ProviderError, match="UnsupportedProtocol"):
        send(make_transport(client, Recorder()), client)
    assert len(seen) == 1


def test_a_2xx_body_that_is_not_json_is_an_error():
    client, _ = scripted(httpx.Response(200, text="<html>proxy</html>"))
    with pytest.raises(ProviderError, match="not JSON") as caught:
        send(make_transport(client, Recorder()), client)
    assert caught.value.status_code == 200


def test_timeouts_are_passed_per_request():
    seen: list[dict] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.extensions["timeout"])
        return httpx.Response(200, json={})

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    transport = make_transport(client, Recorder(), timeout=42.0, connect_timeout=3.0)
    send(transport, client)
    assert seen == [{"connect": 3.0, "read": 42.0, "write": 42.0, "pool": 42.0}]


def test_rate_limiter_spaces_requests():
    recorder = Recorder()
    limiter = RateLimiter(60, clock=recorder.clock)
    assert [limiter.reserve() for _ in range(3)] == [0.0, 1.0, 2.0]
    recorder.now += 10  # tokens refill, but never beyond the burst size
    assert limiter.reserve() == 0.0
    assert limiter.reserve() == 1.0
    burst = RateLimiter(60, burst=3, clock=recorder.clock)
    assert [burst.reserve() for _ in range(4)] == [0.0, 0.0, 0.0, 1.0]
    with pytest.raises(ValueError, match="positive"):
        RateLimiter(0)


def test_requests_per_minute_limit_applies_to_every_attempt():
    client, seen = scripted(httpx.Response(200, json={}))
    recorder = Recorder()
    transport = make_transport(
        client, recorder, requests_per_minute=120, endpoint="https://rpm.example.test"
    )

    async def go():
        async with client:
            for _ in range(3):
                await transport.send("POST", URL, json_body={})

    asyncio.run(go())
    assert len(seen) == 3
    assert recorder.delays == [0.5, 0.5]


def test_transports_with_the_same_endpoint_share_one_rate_limiter():
    recorder = Recorder()
    client = httpx.AsyncClient(transport=httpx.MockTransport(lambda request: httpx.Response(200)))
    first = make_transport(client, recorder, requests_per_minute=30, endpoint="https://shared.test")
    second = make_transport(
        client, recorder, requests_per_minute=30, endpoint="https://shared.test"
    )
    other = make_transport(client, recorder, requests_per_minute=30, endpoint="https://other.test")
    assert first.rate_limiter is second.rate_limiter
    assert first.rate_limiter is not other.rate_limiter


def test_concurrency_limit_is_respected():
    in_flight = 0
    peak = 0

    async def handler(request: httpx.Request) -> httpx.Response:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        return httpx.Response(200, json={})

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    # Two transports for the same provider and endpoint share the limit.
    first = make_transport(client, Recorder(), max_concurrency=3, endpoint="https://limit.test")
    second = make_transport(client, Recorder(), max_concurrency=3, endpoint="https://limit.test")

    async def go():
        async with client:
            await asyncio.gather(
                *(
                    (first if number % 2 else second).send("POST", URL, json_body={})
                    for number in range(12)
                )
            )

    asyncio.run(go())
    assert peak == 3


def test_no_concurrency_limit_when_none():
    in_flight = 0
    peak = 0

    async def handler(request: httpx.Request) -> httpx.Response:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        return httpx.Response(200, json={})

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    transport = make_transport(client, Recorder(), max_concurrency=None)

    async def go():
        async with client:
            await asyncio.gather(*(transport.send("POST", URL) for _ in range(10)))

    asyncio.run(go())
    assert peak == 10
    with pytest.raises(ValueError, match="max_concurrency"):
        make_transport(client, Recorder(), max_concurrency=0)


def test_shared_client_is_pooled_per_loop_and_closed_with_the_loop():
    async def twice():
        first = await shared_client()
        second = await shared_client()
        return first, second

    first, second = asyncio.run(twice())
    assert first is second
    # asyncio.run closed it when the loop shut down: no socket outlives its loop.
    assert first.is_closed
    other, _ = asyncio.run(twice())
    assert other is not first


def test_shared_client_can_be_closed_and_recreated():
    async def go():
        client = await shared_client()
        await aclose_shared_client()
        assert client.is_closed
        fresh = await shared_client()
        assert fresh is not client
        assert not fresh.is_closed
        return fresh

    assert asyncio.run(go()).is_closed


def test_shared_client_limits_are_configurable(monkeypatch):
    limits = httpx.Limits(max_connections=3, max_keepalive_connections=1)
    monkeypatch.setattr(pool, "_shared_limits", pool.DEFAULT_LIMITS)
    pool.configure_shared_clients(limits=limits)
    assert pool._shared_limits is limits


def test_transport_without_client_uses_the_shared_one(monkeypatch):
    used: list[httpx.AsyncClient] = []

    async def fake_shared() -> httpx.AsyncClient:
        client = httpx.AsyncClient(
            transport=httpx.MockTransport(lambda request: httpx.Response(200, json={"x": 1}))
        )
        used.append(client)
        return client

    monkeypatch.setattr(pool, "shared_client", fake_shared)
    transport = Transport(provider="openai", endpoint="https://shared-client.test")

    async def go():
        response = await transport.send("POST", URL)
        await used[0].aclose()
        return response

    assert asyncio.run(go()).data == {"x": 1}
    assert len(used) == 1


def test_redact_removes_secrets_in_plain_and_url_encoded_form():
    key = "sk-test/PLANTED+123"
    text = f"key {key} and in a URL ?key=sk-test%2FPLANTED%2B123 end"
    assert redact(text, [key]) == "key [REDACTED] and in a URL ?key=[REDACTED] end"
    assert redact("abc", ["", None, "ab"]) == "abc"  # empty and tiny secrets ignored
    assert redact("one sk-1234 two sk-12345", ["sk-1234", "sk-12345"]) == (
        "one [REDACTED] two [REDACTED]"
    )


def test_public_url_strips_credentials():
    assert public_url("https://user:pass@llm.example.test:8443/v1") == (
        "https://llm.example.test:8443/v1"
    )
    assert public_url(f"http://127.0.0.1/v1?key={KEY}", [KEY]) == (
        "http://127.0.0.1/v1?key=[REDACTED]"
    )
    assert public_url("http://[::1]:8000/v1") == "http://[::1]:8000/v1"


def test_retry_log_lines_are_redacted(caplog):
    caplog.set_level("DEBUG", logger="docevals_mlflow")
    client, _ = scripted(httpx.ConnectError(f"failed for {KEY}"), httpx.Response(200, json={}))
    send(make_transport(client, Recorder()), client)
    messages = [record.getMessage() for record in caplog.records]
    assert any("retrying" in message for message in messages)
    assert not any(KEY in message for message in messages)


def test_error_body_json_with_odd_shapes():
    client, _ = scripted(httpx.Response(418, content=json.dumps({"message": "teapot"}).encode()))
    with pytest.raises(ProviderError, match="teapot"):
        send(make_transport(client, Recorder()), client)
    client, _ = scripted(httpx.Response(400, json={"error": "plain string"}))
    with pytest.raises(ProviderError, match="plain string"):
        send(make_transport(client, Recorder()), client)


def test_retry_count_comes_from_the_policy_or_the_argument_never_both():
    from docevals_mlflow.errors import ConfigurationError
    from docevals_mlflow.judges.retry import resolve_retry_policy
    from docevals_mlflow.judges.settings import DEFAULT_MAX_RETRIES

    assert resolve_retry_policy(None, None).max_retries == DEFAULT_MAX_RETRIES
    assert resolve_retry_policy(2, None).max_retries == 2
    slow = RetryPolicy(base_delay=3.0)
    assert resolve_retry_policy(2, slow) == RetryPolicy(max_retries=2, base_delay=3.0)
    assert resolve_retry_policy(None, RetryPolicy(max_retries=1)).max_retries == 1
    assert resolve_retry_policy(1, RetryPolicy(max_retries=1)).max_retries == 1
    with pytest.raises(ConfigurationError, match="contradicts"):
        resolve_retry_policy(5, RetryPolicy(max_retries=1))


def test_a_policy_with_a_retry_count_limits_the_attempts():
    client, seen = scripted(*[error_response(503, "busy") for _ in range(4)])
    transport = make_transport(client, Recorder(), retry_policy=RetryPolicy(max_retries=1))
    with pytest.raises(ProviderError) as caught:
        send(transport, client)
    assert (len(seen), caught.value.attempts) == (2, 2)
