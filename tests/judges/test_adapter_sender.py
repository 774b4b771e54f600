"""The ``sender=`` transport seam of the HTTP adapters (the seed library's): a
function gets the request body instead of HTTP and returns the provider's response."""

from __future__ import annotations

import json
from typing import Any

import pytest

from docevals_mlflow.errors import ConfigurationError
from docevals_mlflow.judges.adapters import AnthropicMessagesAdapter, OpenAIResponsesAdapter
from docevals_mlflow.judges.judge import ModelJudge
from docevals_mlflow.judges.request import JudgeRequest

ANSWER = {"summary": "ok", "prediction_claims": [], "reference_claims": [], "rubric_results": []}
REQUEST = JudgeRequest(instructions="Judge it.", task={"case_id": "c"})


def _responses_body(text: str) -> dict[str, Any]:
    return {
        "model": "gpt-x",
        "usage": {"input_tokens": 7, "output_tokens": 3},
        "output": [{"type": "message", "content": [{"type": "output_text", "text": text}]}],
    }


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)


def test_a_sender_replaces_http_and_needs_no_key() -> None:
    bodies: list[dict[str, Any]] = []

    def sender(body: dict[str, Any]) -> dict[str, Any]:
        bodies.append(body)
        return _responses_body(json.dumps(ANSWER))

    adapter = OpenAIResponsesAdapter(model="gpt-x", sender=sender)
    result = ModelJudge(adapter).judge(REQUEST)
    assert result.status == "ok"
    assert result.usage.requests == 1
    assert result.usage.total_tokens == 10
    assert bodies[0]["instructions"] == "Judge it."
    assert adapter.usage_records[0].status == "complete"
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        OpenAIResponsesAdapter(model="gpt-x")


def test_an_async_sender_is_awaited() -> None:
    async def sender(body: dict[str, Any]) -> dict[str, Any]:
        return {
            "content": [{"type": "tool_use", "name": "judge_output", "input": ANSWER}],
            "usage": {"input_tokens": 2, "output_tokens": 1},
            "stop_reason": "tool_use",
        }

    result = ModelJudge(AnthropicMessagesAdapter(sender=sender)).judge(REQUEST)
    assert result.status == "ok"
    assert result.output is not None
    assert result.output.summary == "ok"


def test_a_failing_sender_is_a_failed_call_without_the_key() -> None:
    def sender(body: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("socket closed for sk-test-secret-0123456789")

    adapter = OpenAIResponsesAdapter(api_key="sk-test-secret-0123456789", sender=sender)
    result = ModelJudge(adapter).judge(REQUEST)
    assert result.status == "error"
    assert "socket closed" in (result.error or "")
    assert "sk-test-secret-0123456789" not in (result.error or "")
    assert adapter.usage_records[0].status == "error"
    with pytest.raises(ConfigurationError, match="sender"):
        OpenAIResponsesAdapter(api_key="k", sender="not a function")  # type: ignore[arg-type]
