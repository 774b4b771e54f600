"""Adapters take their transport as one frozen ``TransportSettings`` (``http=``).

The former keyword arguments (``timeout=``, ``client=``, ...) still work for a
deprecation period, with a ``DeprecationWarning`` that points at the caller, and send
byte-identical requests.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import httpx
import pytest

from docevals_mlflow.judges.adapters import (
    AnthropicMessagesAdapter,
    HttpAdapter,
    OpenAICompatibleChatAdapter,
    OpenAIResponsesAdapter,
)
from docevals_mlflow.judges.retry import RetryPolicy
from docevals_mlflow.judges.settings import TRANSPORT_FIELDS, TransportSettings
from tests.judges.test_adapters import (
    KEY,
    Capture,
    chat_reply,
    make_request,
    messages_reply,
    responses_reply,
    run,
)

TOKEN = "gateway-token-0123456789"

ADAPTERS: list[tuple[type[HttpAdapter], dict[str, Any], Any]] = [
    (OpenAIResponsesAdapter, {"api_key": KEY, "reasoning_effort": "low"}, responses_reply),
    (AnthropicMessagesAdapter, {"api_key": KEY, "strict_tool": True}, messages_reply),
    (
        OpenAICompatibleChatAdapter,
        {"model": "m", "base_url": "http://127.0.0.1:9/v1", "provider": "vllm"},
        chat_reply,
    ),
]


def transport_options(client: httpx.AsyncClient) -> dict[str, Any]:
    return {
        "timeout": 33.0,
        "connect_timeout": 4.0,
        "max_retries": 2,
        "max_concurrency": 3,
        "requests_per_minute": 600.0,
        "extra_headers": {"X-Gateway-Token": TOKEN},
        "extra_body": {"metadata": {"run": "r-1"}},
        "client": client,
    }


@pytest.mark.parametrize(("adapter_type", "options", "reply"), ADAPTERS)
def test_the_old_keywords_warn_and_send_the_same_bytes(
    tmp_path, adapter_type, options, reply
) -> None:
    request = make_request(tmp_path)
    new, old = Capture(reply()), Capture(reply())
    current = adapter_type(**options, http=TransportSettings(**transport_options(new.client)))
    with pytest.warns(DeprecationWarning, match=r"pass http=TransportSettings\(") as caught:
        former = adapter_type(**options, **transport_options(old.client))
    # The warning points at the code that built the adapter, not into the package.
    assert caught[0].filename == __file__
    assert "client, connect_timeout, extra_body" in str(caught[0].message)
    run(current, request)
    run(former, request)
    (sent,), (sent_before,) = new.requests, old.requests
    assert sent.content == sent_before.content
    assert sent.headers == sent_before.headers
    assert sent.headers["x-gateway-token"] == TOKEN
    assert current.describe() == former.describe()
    assert dataclasses.replace(current.http, client=None) == dataclasses.replace(
        former.http, client=None
    )
    for transport in (current.transport, former.transport):
        assert (transport.timeout.read, transport.timeout.connect) == (33.0, 4.0)
        assert (transport.policy.max_retries, transport.max_concurrency) == (2, 3)
        assert transport.requests_per_minute == 600.0


def test_old_keywords_apply_over_the_given_settings() -> None:
    base = TransportSettings(max_retries=1, timeout=9.0)
    with pytest.warns(DeprecationWarning, match=r"OpenAIResponsesAdapter\(max_retries=\.\.\.\)"):
        adapter = OpenAIResponsesAdapter(api_key=KEY, http=base, max_retries=4)
    assert (adapter.http.max_retries, adapter.http.timeout) == (4, 9.0)
    assert base.max_retries == 1  # the caller's settings are left as they were


def test_an_unknown_keyword_is_still_a_type_error() -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'timeuot'"):
        OpenAIResponsesAdapter(api_key=KEY, timeuot=3)  # type: ignore[call-arg]


def test_settings_are_frozen_copied_and_keep_their_secrets() -> None:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    body = {"user": "u-1"}
    settings = TransportSettings(extra_headers=headers, extra_body=body, max_concurrency=None)
    headers["X-Later"] = "added after"
    body.clear()
    assert dict(settings.extra_headers) == {"Authorization": f"Bearer {TOKEN}"}
    assert dict(settings.extra_body) == {"user": "u-1"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.timeout = 1.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        settings.extra_headers["X-New"] = "x"  # type: ignore[index]
    assert TOKEN not in repr(settings)
    assert dataclasses.replace(settings, timeout=5.0).extra_headers == settings.extra_headers
    assert TransportSettings(extra_headers=None, extra_body=None).extra_body == {}


def test_one_settings_value_serves_several_adapters() -> None:
    policy = RetryPolicy(base_delay=0.01)
    shared = TransportSettings(retry_policy=policy, max_concurrency=1)
    adapters = [
        OpenAIResponsesAdapter(api_key=KEY, http=shared),
        AnthropicMessagesAdapter(api_key=KEY, http=shared),
        OpenAICompatibleChatAdapter(model="m", base_url="http://127.0.0.1:9/v1", http=shared),
    ]
    for adapter in adapters:
        assert adapter.http is shared
        assert adapter.transport.policy.base_delay == 0.01
        assert adapter.transport.max_concurrency == 1


def test_settings_are_checked_when_an_adapter_is_built() -> None:
    contradiction = TransportSettings(max_retries=2, retry_policy=RetryPolicy(max_retries=3))
    with pytest.raises(Exception, match="contradicts"):
        OpenAIResponsesAdapter(api_key=KEY, http=contradiction)
    with pytest.raises(ValueError, match="max_concurrency"):
        OpenAIResponsesAdapter(api_key=KEY, http=TransportSettings(max_concurrency=0))


@pytest.mark.parametrize("adapter_type", [adapter for adapter, _, _ in ADAPTERS])
def test_adapters_list_only_their_own_options(adapter_type) -> None:
    # The transport fields and the shared provider options are HttpAdapter's alone.
    own = set(inspect.signature(adapter_type.__init__).parameters) - {"self", "options"}
    assert not own & TRANSPORT_FIELDS
    assert not own & {"api_key", "temperature", "top_p", "max_output_tokens", "prices", "http"}
