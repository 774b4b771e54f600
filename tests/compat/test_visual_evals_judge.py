"""The seed's judge and usage API (``visual_evals.judge``, ``visual_evals.usage``)
through the compat module: request shape, adapters with ``sender=``, usage ledgers.

Written from the seed's documented API; providers only through fake senders.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import docevals_mlflow.compat.visual_evals as visual_evals
from docevals_mlflow.compat.visual_evals import judge, usage
from docevals_mlflow.errors import ConfigurationError, ProviderError

JPEG = b"\xff\xd8\xff\xe0" + b"jpeg body"
PDF = b"%PDF-1.4\n"


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    # A sender needs no key: prove it by having none.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)


def _answer(**overrides: Any) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "summary": "The language is correct.",
        "prediction_claims": [
            {
                "claim_id": "p00001",
                "path": "$.language",
                "verdict": "correct",
                "evidence": "The notes say English.",
                "reference_id": "truth",
                "confidence": 0.9,
            }
        ],
        "reference_claims": [
            {
                "claim_id": "r00001",
                "path": "$.language",
                "expected_value": "English",
                "verdict": "matched",
                "matched_prediction_path": "$.language",
                "evidence": "Same value.",
                "reference_id": "truth",
                "confidence": 0.9,
            }
        ],
        "rubric_results": [
            {"criterion": "Correct", "verdict": "pass", "evidence": "ok", "confidence": 0.9}
        ],
    }
    answer.update(overrides)
    return answer


def _openai_response(text: str, **usage_fields: Any) -> dict[str, Any]:
    return {
        "model": "gpt-test",
        "usage": usage_fields
        or {
            "input_tokens": 100,
            "input_tokens_details": {"cached_tokens": 20},
            "output_tokens": 10,
        },
        "output": [{"type": "message", "content": [{"type": "output_text", "text": text}]}],
    }


def _case(tmp_path: Path) -> Any:
    image = tmp_path / "page.jpg"
    image.write_bytes(JPEG)
    notes = tmp_path / "notes.md"
    notes.write_text("The priority is urgent.", encoding="utf-8")
    return visual_evals.EvaluationCase(
        case_id="case-2",
        stage_id="calculate-score",
        operation="weighted_priority_score",
        input_data={"impact": 4, "urgency": 3},
        prediction={"score": 11},
        depends_on=[],
        metadata={"batch": "b1"},
        references=[
            visual_evals.artifact_from_path(image, authority="evidence"),
            visual_evals.artifact_from_path(notes, authority="ground_truth"),
        ],
    )


def _truth_case(tmp_path: Path) -> Any:
    truth = tmp_path / "truth.csv"
    truth.write_text("path,expected\n$.language,English\n", encoding="utf-8")
    return visual_evals.EvaluationCase(
        case_id="case-3",
        prediction={"language": "English"},
        references=[visual_evals.artifact_from_path(truth, authority="ground_truth")],
    )


def test_judge_request_has_the_seed_task_keys_and_a_titled_schema(tmp_path: Path) -> None:
    request = visual_evals.build_judge_request(_case(tmp_path))

    assert isinstance(request, visual_evals.JudgeRequest)
    assert request.output_schema["title"] == "JudgeOutput"
    task = request.task
    assert task["stage_id"] == "calculate-score"
    assert task["operation"] == "weighted_priority_score"
    assert task["input_data"] == {"impact": 4, "urgency": 3}
    assert task["metadata"] == {"batch": "b1"}
    assert task["depends_on"] == []
    assert task["allow_unsafe_judge_override"] is False
    assert {"action_instruction_hash", "evaluation_spec_hash", "operation_spec_id"} <= set(task)
    # Text references are the seed's textual_references (with their content), the
    # image is not; every reference is still listed, the text sent only once.
    (textual,) = task["textual_references"]
    assert textual["authority"] == "ground_truth"
    assert textual["content"] == "The priority is urgent."
    assert textual["comparison_mode"] == "auto"
    assert [entry["id"] for entry in task["references"]] == ["page", "notes"]
    assert json.dumps(task).count("The priority is urgent.") == 1
    assert task["prediction_claims"][0]["claim_id"] == "p00001"
    assert judge.JUDGE_INSTRUCTIONS in request.instructions


def test_openai_request_keeps_the_seed_layout_with_labelled_attachments(tmp_path: Path) -> None:
    adapter = visual_evals.OpenAIResponsesAdapter(api_key="test-key", temperature=0.7)
    payload = adapter.build_request(visual_evals.build_judge_request(_case(tmp_path)))
    content = payload["input"][0]["content"]

    assert payload["store"] is False
    assert payload["temperature"] == 0.7
    assert payload["max_output_tokens"] == 32000
    assert payload["text"]["format"]["strict"] is True
    assert json.loads(content[0]["text"])["textual_references"][0]["authority"] == "ground_truth"
    assert content[1]["type"] == "input_image"
    assert content[1]["detail"] == "original"
    assert (
        content[2]["text"] == "The attachment above is Reference page (evidence, image, page.jpg)"
    )
    assert str(tmp_path) not in json.dumps(payload)


def test_openai_adapter_with_a_sender_runs_a_metric_and_keeps_token_usage(tmp_path: Path) -> None:
    bodies: list[dict[str, Any]] = []

    def sender(body: dict[str, Any]) -> dict[str, Any]:
        bodies.append(body)
        return _openai_response(
            json.dumps(_answer()),
            input_tokens=100,
            input_tokens_details={"cached_tokens": 20},
            output_tokens=10,
            output_tokens_details={"reasoning_tokens": 3},
            total_tokens=110,
        )

    adapter = visual_evals.OpenAIResponsesAdapter(model="gpt-test", sender=sender)
    report = visual_evals.Evaluator(
        [
            visual_evals.ExactStructuredMetric(),
            visual_evals.LLMJudgeMetric(visual_evals.ModelJudge(adapter)),
        ]
    ).evaluate(_truth_case(tmp_path))

    assert report.metric_results[0].scores["field_accuracy"] == 1.0
    assert report.metric_results[1].scores["claim_precision"] == 1.0
    assert report.metric_results[1].scores["reference_recall"] == 1.0
    assert bodies[0]["text"]["format"]["schema"]["title"] == "JudgeOutput"
    (record,) = adapter.usage_records
    assert isinstance(record, visual_evals.TokenUsage)
    assert (record.provider, record.model) == ("openai", "gpt-test")
    assert (record.input_tokens, record.uncached_input_tokens) == (100, 80)
    assert record.reasoning_output_tokens == 3
    assert adapter.last_usage == record
    assert adapter.total_usage.total_tokens == 110
    assert adapter.total_usage.by_provider_model["openai:gpt-test"]["request_count"] == 1
    adapter.reset_usage()
    assert adapter.usage_records == []
    assert adapter.last_usage is None


def test_anthropic_adapter_puts_documents_first_and_asks_for_a_json_schema(tmp_path: Path) -> None:
    pdf = tmp_path / "sample.pdf"
    pdf.write_bytes(PDF)
    reference = visual_evals.artifact_from_path(pdf, authority="evidence")
    captured: dict[str, Any] = {}

    def sender(body: dict[str, Any]) -> dict[str, Any]:
        captured.update(body)
        return {
            "model": "claude-test",
            "usage": {
                "input_tokens": 80,
                "cache_read_input_tokens": 15,
                "cache_creation_input_tokens": 5,
                "output_tokens": 12,
            },
            "content": [{"type": "text", "text": '{"ok": true}'}],
            "stop_reason": "end_turn",
        }

    adapter = visual_evals.AnthropicMessagesAdapter(
        model="claude-test", temperature=0.2, sender=sender
    )
    schema = {
        "title": "Output",
        "type": "object",
        "properties": {
            "minimum": {"type": "number", "minimum": 0, "maximum": 1},
            "format": {"type": "string", "format": "not-a-format"},
        },
        "required": ["minimum", "format"],
    }
    request = visual_evals.JudgeRequest(
        instructions="Read it.", task={"case_id": "c"}, output_schema=schema, references=[reference]
    )
    assert adapter.generate(request) == '{"ok": true}'

    content = captured["messages"][0]["content"]
    assert content[0]["type"] == "document"
    assert content[0]["title"] == "sample.pdf"
    assert content[1]["text"].startswith("The attachment above is Reference sample")
    assert json.loads(content[-1]["text"]) == {"case_id": "c"}
    assert captured["system"] == "Read it."
    assert captured["temperature"] == 0.2
    assert "tools" not in captured
    sent = captured["output_config"]["format"]["schema"]
    # Constraint keywords go; properties that happen to be called so stay.
    assert set(sent["properties"]) == {"minimum", "format"}
    assert "minimum" not in sent["properties"]["minimum"]
    assert "format" not in sent["properties"]["format"]
    record = adapter.last_usage
    assert record is not None
    assert (record.input_tokens, record.uncached_input_tokens) == (100, 80)
    assert (record.cached_input_tokens, record.cache_creation_input_tokens) == (15, 5)
    assert adapter.total_usage.total_tokens == 112


def test_adapter_keywords_are_checked_as_the_seed_did() -> None:
    with pytest.raises(ConfigurationError, match="temperature"):
        visual_evals.OpenAIResponsesAdapter(api_key="k", temperature=2.5)
    with pytest.raises(ConfigurationError, match="temperature"):
        visual_evals.AnthropicMessagesAdapter(api_key="k", temperature=1.5)
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        visual_evals.OpenAIResponsesAdapter()
    adapter = visual_evals.OpenAIResponsesAdapter(
        api_key="secret-key-123456",
        reasoning_effort="low",
        pdf_detail="low",
        image_detail="auto",
        base_url="http://127.0.0.1:9/v1",
        timeout_seconds=12.0,
        max_output_tokens=100,
    )
    assert adapter.http.timeout == 12.0
    assert adapter.build_request(visual_evals.JudgeRequest(instructions="i", task={}))[
        "reasoning"
    ] == {"effort": "low"}
    assert "secret-key-123456" not in repr(adapter)
    claude = visual_evals.AnthropicMessagesAdapter(api_key="k", timeout_seconds=5.0)
    assert (claude.model, claude.max_tokens) == ("claude-haiku-4-5-20251001", 32000)


def test_refusals_and_sender_failures_raise_in_seed_calls(tmp_path: Path) -> None:
    refusal = {"output": [{"type": "message", "content": [{"type": "refusal", "refusal": "no"}]}]}
    adapter = visual_evals.OpenAIResponsesAdapter(sender=lambda _body: refusal)
    with pytest.raises(ProviderError, match="refused"):
        adapter.generate(visual_evals.JudgeRequest(instructions="i", task={}))

    def broken(_body: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("connection reset")

    failing = visual_evals.ModelJudge(visual_evals.OpenAIResponsesAdapter(sender=broken))
    with pytest.raises(ProviderError, match="connection reset"):
        failing.judge(_truth_case(tmp_path))


def test_model_judge_takes_functions_and_seed_adapter_objects() -> None:
    case = visual_evals.EvaluationCase(
        case_id="provider-neutral",
        operation="summarize_text",
        input_data={"text": "The inspection passed."},
        prediction={"summary": "Inspection passed."},
        rubric="Preserve the outcome.",
    )
    seen: list[Any] = []

    def local_model(request: Any) -> dict[str, Any]:
        seen.append(request)
        return _answer(
            prediction_claims=[
                {
                    "claim_id": "p00001",
                    "path": "$.summary",
                    "verdict": "correct",
                    "evidence": "same",
                    "reference_id": None,
                    "confidence": 0.9,
                }
            ],
            reference_claims=[],
        )

    output = visual_evals.ModelJudge(local_model).judge(case)
    assert isinstance(output, visual_evals.JudgeOutput)
    assert output.prediction_claims[0].verdict == "correct"
    assert seen[0].output_schema["title"] == "JudgeOutput"
    assert seen[0].references == []

    class SeedAdapter:
        provider = "local"
        model = "tiny-1"

        def generate(self, request: visual_evals.JudgeRequest) -> str:
            return json.dumps(local_model(request))

    seed_judge = visual_evals.ModelJudge(SeedAdapter())
    assert (seed_judge.provider, seed_judge.model, seed_judge.last_usage) == (
        "local",
        "tiny-1",
        None,
    )
    assert seed_judge.judge(case).summary == "The language is correct."
    result = seed_judge.judge(visual_evals.build_judge_request(case))
    assert result.status == "ok"
    assert result.usage.requests == 1
    metric = visual_evals.LLMJudgeMetric(seed_judge, name="local-judge")
    verdict = visual_evals.Evaluator([metric]).evaluate(case).metric_results[0]
    assert (verdict.name, verdict.verdict) == ("local-judge", "pass")


def test_usage_records_convert_between_the_seed_and_this_package() -> None:
    openai = visual_evals.TokenUsage.from_openai(
        model="m", usage={"input_tokens": 10, "output_tokens": 5, "input_tokens_details": None}
    )
    assert (openai.total_tokens, openai.cached_input_tokens) == (15, 0)
    claude = visual_evals.TokenUsage.from_anthropic(
        model="c",
        usage={
            "input_tokens": 1,
            "output_tokens": 2,
            "output_tokens_details": {"thinking_tokens": 1},
        },
    )
    assert (claude.input_tokens, claude.reasoning_output_tokens) == (1, 1)
    summary = visual_evals.UsageSummary.from_records([openai, openai, claude])
    assert summary.request_count == 3
    assert summary.by_provider_model == {
        "openai:m": {
            "request_count": 2,
            "input_tokens": 20,
            "output_tokens": 10,
            "total_tokens": 30,
        },
        "anthropic:c": {
            "request_count": 1,
            "input_tokens": 1,
            "output_tokens": 2,
            "total_tokens": 3,
        },
    }
    ledger = visual_evals.UsageLedger()
    assert ledger.last_usage is None
    assert ledger.total_usage.total_tokens == 0
    assert usage.usage_records_for(object()) == []
    assert usage.usage_records_for(type("A", (), {"usage_records": [openai.model_dump()]})()) == [
        openai
    ]


def test_a_panel_variant_temperature_is_sent_and_counted_on_the_adapter() -> None:
    bodies: list[dict[str, Any]] = []

    def sender(body: dict[str, Any]) -> dict[str, Any]:
        bodies.append(body)
        return {
            "usage": {"input_tokens": 5, "output_tokens": 1},
            "content": [{"type": "text", "text": json.dumps(_answer(reference_claims=[]))}],
            "stop_reason": "end_turn",
        }

    claude = visual_evals.AnthropicMessagesAdapter(model="claude-x", sender=sender)
    other = visual_evals.ModelJudge(lambda _request: _answer(reference_claims=[]))
    panel = visual_evals.JudgePanelMetric(
        [
            visual_evals.JudgeVariant(
                name="claude",
                judge=visual_evals.ModelJudge(claude),
                provider="anthropic",
                model="claude-x",
                temperature=0.3,
            ),
            visual_evals.JudgeVariant(name="local", judge=other, provider="local", model="m"),
        ]
    )
    case = visual_evals.EvaluationCase(
        case_id="c", prediction={"language": "English"}, input_data={"text": "English"}
    )
    assert visual_evals.Evaluator([panel]).evaluate(case).verdict == "pass"
    assert [body["temperature"] for body in bodies] == [0.3]
    assert len(claude.usage_records) == 1
    assert claude.total_usage.total_tokens == 6
