"""What each adapter puts on the wire and how it reads answers.

Requests are captured by an ``httpx.MockTransport``; nothing leaves the process.
"""

from __future__ import annotations

import asyncio
import base64
import json
import struct
from pathlib import Path
from typing import Any

import httpx
import pymupdf
import pytest

from docevals_mlflow import EvaluationCase, EvaluationSpec, artifact_from_path, artifact_from_value
from docevals_mlflow.errors import (
    ConfigurationError,
    InputError,
    InputFileNotFoundError,
    ProviderError,
)
from docevals_mlflow.judges.adapters import (
    AnthropicMessagesAdapter,
    OpenAICompatibleChatAdapter,
    OpenAIResponsesAdapter,
    anthropic_input_schema,
)
from docevals_mlflow.judges.adapters.attachments import (
    AttachmentPolicy,
    FilePart,
    ImagePart,
    TextPart,
    attachment_parts,
    reference_label,
)
from docevals_mlflow.judges.judge import AdapterReply, RepairHint
from docevals_mlflow.judges.request import JudgeRequest, build_judge_request
from docevals_mlflow.judges.settings import TransportSettings
from docevals_mlflow.judges.usage import PriceTable, Usage

KEY = "sk-test-PLANTED-123"


# -- fixtures ------------------------------------------------------------------------


def write_pdf(path: Path, pages: int) -> Path:
    document = pymupdf.open()
    for number in range(1, pages + 1):
        page = document.new_page(width=300, height=200)
        page.insert_text((40, 60), f"Invoice page {number}")
    document.save(path)
    document.close()
    return path


def write_png(path: Path) -> Path:
    pixmap = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 4, 4), False)
    pixmap.clear_with(200)
    path.write_bytes(pixmap.tobytes("png"))
    return path


def write_bmp(path: Path) -> Path:
    # One red pixel, 24-bit, rows padded to four bytes.
    row = b"\x00\x00\xff\x00"
    info = struct.pack("<IiiHHIIiiII", 40, 1, 1, 1, 24, 0, len(row), 2835, 2835, 0, 0)
    header = b"BM" + struct.pack("<IHHI", 14 + len(info) + len(row), 0, 0, 54)
    path.write_bytes(header + info + row)
    return path


def make_request(
    tmp_path: Path, *, extra: list[Any] | None = None, plain: bool = False
) -> JudgeRequest:
    references = [
        artifact_from_value({"total": 12.5}, authority="ground_truth", artifact_id="gt"),
        artifact_from_value("Total due: 12.50", authority="evidence", artifact_id="ocr"),
    ]
    if not plain:
        references = [
            artifact_from_path(write_pdf(tmp_path / "invoice.pdf", 2), authority="evidence"),
            artifact_from_path(write_png(tmp_path / "scan.png"), authority="evidence"),
            *references,
            *(extra or []),
        ]
    case = EvaluationCase(
        case_id="c1",
        stage_id="extract",
        operation="extract",
        action_instruction="Extract the total.",
        evaluation_spec=EvaluationSpec(spec_id="e", objective="o", criteria=["c"]),
        prediction={"total": 12.5},
        references=references,
    )
    return build_judge_request(case)


class Capture:
    """A MockTransport client that records requests and answers with ``reply``."""

    def __init__(self, reply: dict[str, Any] | None = None, status: int = 200) -> None:
        self.requests: list[httpx.Request] = []
        self.reply = reply or {}
        self.status = status
        self.client = httpx.AsyncClient(transport=httpx.MockTransport(self.handle))

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return httpx.Response(self.status, json=self.reply)

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(request.content) for request in self.requests]


def run(adapter: Any, request: JudgeRequest, repair: RepairHint | None = None) -> AdapterReply:
    async def go() -> AdapterReply:
        async with adapter.transport.client:
            return await adapter.agenerate(request, repair=repair)

    return asyncio.run(go())


ANSWER = {"summary": "ok", "prediction_claims": [], "reference_claims": [], "rubric_results": []}


def responses_reply(**overrides: Any) -> dict[str, Any]:
    reply = {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "model": "gpt-test-2025",
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": json.dumps(ANSWER), "annotations": []}],
            },
        ],
        "usage": {
            "input_tokens": 1000,
            "input_tokens_details": {"cached_tokens": 400},
            "output_tokens": 200,
            "output_tokens_details": {"reasoning_tokens": 50},
            "total_tokens": 1200,
        },
    }
    reply.update(overrides)
    return reply


def messages_reply(**overrides: Any) -> dict[str, Any]:
    reply = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "judge_output", "input": ANSWER}],
        "stop_reason": "tool_use",
        "usage": {
            "input_tokens": 100,
            "cache_read_input_tokens": 900,
            "cache_creation_input_tokens": 0,
            "output_tokens": 300,
        },
    }
    reply.update(overrides)
    return reply


def chat_reply(
    message: dict[str, Any] | None = None, finish_reason: str = "stop"
) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "local-model",
        "choices": [
            {
                "index": 0,
                "message": message or {"role": "assistant", "content": json.dumps(ANSWER)},
                "finish_reason": finish_reason,
            }
        ],
        "usage": {"prompt_tokens": 700, "completion_tokens": 70, "total_tokens": 770},
    }


def data_url(kind: str, data: bytes) -> str:
    return f"data:{kind};base64,{base64.b64encode(data).decode()}"


# -- OpenAI Responses ----------------------------------------------------------------


def test_openai_responses_exact_body_and_headers(tmp_path):
    request = make_request(tmp_path, plain=True)
    capture = Capture(responses_reply())
    adapter = OpenAIResponsesAdapter(
        model="gpt-test",
        api_key=KEY,
        temperature=0.3,
        max_output_tokens=2000,
        http=TransportSettings(client=capture.client),
    )
    reply = run(adapter, request)
    sent = capture.requests[0]
    assert str(sent.url) == "https://api.openai.com/v1/responses"
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.headers["content-type"] == "application/json"
    assert capture.bodies[0] == {
        "model": "gpt-test",
        "instructions": request.instructions,
        "input": [
            {
                "role": "user",
                "content": [
                    {"type": "input_text", "text": json.dumps(request.task, ensure_ascii=False)}
                ],
            }
        ],
        "text": {
            "format": {
                "type": "json_schema",
                "name": "judge_output",
                "schema": request.output_schema,
                "strict": True,
            }
        },
        "store": False,
        "temperature": 0.3,
        "max_output_tokens": 2000,
    }
    assert reply.status == "complete"
    assert json.loads(reply.text or "") == ANSWER
    assert reply.usage == Usage(
        requests=1,
        input_tokens=1000,
        cached_input_tokens=400,
        output_tokens=200,
        reasoning_tokens=50,
        total_tokens=1200,
    )


def test_openai_sends_top_p_only_when_set_and_extra_body_last(tmp_path):
    request = make_request(tmp_path, plain=True)
    capture = Capture(responses_reply())
    adapter = OpenAIResponsesAdapter(
        api_key=KEY,
        top_p=0.9,
        reasoning_effort="low",
        http=TransportSettings(
            extra_body={"store": True, "metadata": {"run": "x"}}, client=capture.client
        ),
    )
    run(adapter, request)
    body = capture.bodies[0]
    assert body["top_p"] == 0.9
    assert "temperature" not in body
    assert "max_output_tokens" not in body
    assert body["reasoning"] == {"effort": "low"}
    assert body["store"] is True  # extra_body overrides on purpose
    assert body["metadata"] == {"run": "x"}
    assert body["model"] == "gpt-4o-mini"  # the default model


def test_openai_attachments_are_labelled_files_and_images(tmp_path):
    docx = tmp_path / "notes.docx"
    docx.write_bytes(b"PK\x03\x04 fake docx")
    request = make_request(
        tmp_path, extra=[artifact_from_path(docx, authority="evidence", artifact_id="notes")]
    )
    capture = Capture(responses_reply())
    run(OpenAIResponsesAdapter(api_key=KEY, http=TransportSettings(client=capture.client)), request)
    content = capture.bodies[0]["input"][0]["content"]
    assert json.loads(content[0]["text"]) == request.task
    assert content[1:] == [
        {"type": "input_text", "text": "Reference invoice (evidence, pdf, invoice.pdf)"},
        {
            "type": "input_file",
            "filename": "invoice.pdf",
            "file_data": data_url("application/pdf", (tmp_path / "invoice.pdf").read_bytes()),
        },
        {"type": "input_text", "text": "Reference scan (evidence, image, scan.png)"},
        {
            "type": "input_image",
            "image_url": data_url("image/png", (tmp_path / "scan.png").read_bytes()),
            "detail": "auto",
        },
        {"type": "input_text", "text": "Reference notes (evidence, file, notes.docx)"},
        {
            "type": "input_file",
            "filename": "notes.docx",
            "file_data": data_url(
                "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                docx.read_bytes(),
            ),
        },
    ]
    # Text and structured references are in the task JSON only, never attached again.
    assert not any("Reference gt" in part.get("text", "") for part in content)
    assert not any("Reference ocr" in part.get("text", "") for part in content)
    assert str(tmp_path) not in capture.requests[0].content.decode()


def test_openai_repair_appends_the_previous_answer_and_the_hint(tmp_path):
    request = make_request(tmp_path, plain=True)
    capture = Capture(responses_reply())
    hint = RepairHint(previous='{"summary": ', problem="not valid JSON: Expecting value")
    run(
        OpenAIResponsesAdapter(api_key=KEY, http=TransportSettings(client=capture.client)),
        request,
        repair=hint,
    )
    messages = capture.bodies[0]["input"]
    assert [message["role"] for message in messages] == ["user", "assistant", "user"]
    assert messages[1] == {"role": "assistant", "content": '{"summary": '}
    assert messages[2] == {
        "role": "user",
        "content": [{"type": "input_text", "text": hint.message()}],
    }


def test_openai_refusal_part_is_a_refused_reply(tmp_path):
    refused = responses_reply(
        output=[
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "refusal", "refusal": "I can't assist with that."}],
            }
        ]
    )
    reply = run(
        OpenAIResponsesAdapter(api_key=KEY, http=TransportSettings(client=Capture(refused).client)),
        make_request(tmp_path, plain=True),
    )
    assert (reply.status, reply.refusal, reply.text) == (
        "refused",
        "I can't assist with that.",
        None,
    )


def test_openai_incomplete_is_truncated_or_refused_by_reason(tmp_path):
    request = make_request(tmp_path, plain=True)
    partial = responses_reply(
        status="incomplete", incomplete_details={"reason": "max_output_tokens"}
    )
    reply = run(
        OpenAIResponsesAdapter(api_key=KEY, http=TransportSettings(client=Capture(partial).client)),
        request,
    )
    assert reply.status == "truncated"
    assert reply.text == json.dumps(ANSWER)
    filtered = responses_reply(status="incomplete", incomplete_details={"reason": "content_filter"})
    reply = run(
        OpenAIResponsesAdapter(
            api_key=KEY, http=TransportSettings(client=Capture(filtered).client)
        ),
        request,
    )
    assert reply.status == "refused"
    assert "content filter" in (reply.refusal or "")


def test_openai_failed_and_odd_responses_are_provider_errors(tmp_path):
    request = make_request(tmp_path, plain=True)
    failed = responses_reply(status="failed", error={"code": "server_error", "message": "boom"})
    with pytest.raises(ProviderError, match="server_error: boom"):
        run(
            OpenAIResponsesAdapter(
                api_key=KEY, http=TransportSettings(client=Capture(failed).client)
            ),
            request,
        )
    with pytest.raises(ProviderError, match="unexpected response"):
        run(
            OpenAIResponsesAdapter(
                api_key=KEY, http=TransportSettings(client=Capture({"nope": 1}).client)
            ),
            request,
        )


def test_openai_cost_from_price_table(tmp_path):
    prices = PriceTable.from_mapping(
        {"openai:gpt-test": {"input": 2.0, "output": 8.0, "cached_input": 0.5}}
    )
    adapter = OpenAIResponsesAdapter(
        model="gpt-test",
        api_key=KEY,
        prices=prices,
        http=TransportSettings(client=Capture(responses_reply()).client),
    )
    reply = run(adapter, make_request(tmp_path, plain=True))
    # 600 uncached x 2.0 + 400 cached x 0.5 + 200 output x 8.0, per million tokens.
    assert reply.usage.cost_usd == pytest.approx((600 * 2.0 + 400 * 0.5 + 200 * 8.0) / 1e6)
    unknown = OpenAIResponsesAdapter(
        model="other",
        api_key=KEY,
        prices=prices,
        http=TransportSettings(client=Capture(responses_reply()).client),
    )
    assert run(unknown, make_request(tmp_path, plain=True)).usage.cost_usd is None


def test_openai_pdf_pages_mode(tmp_path):
    capture = Capture(responses_reply())
    adapter = OpenAIResponsesAdapter(
        api_key=KEY, pdf_mode="pages", pdf_dpi=40, http=TransportSettings(client=capture.client)
    )
    run(adapter, make_request(tmp_path))
    types = [part["type"] for part in capture.bodies[0]["input"][0]["content"]]
    assert "input_file" not in types
    assert types.count("input_image") == 3  # two pages and the scan


# -- Anthropic Messages --------------------------------------------------------------


def test_anthropic_exact_body_and_headers(tmp_path):
    request = make_request(tmp_path, plain=True)
    capture = Capture(messages_reply())
    adapter = AnthropicMessagesAdapter(
        model="claude-test",
        api_key=KEY,
        temperature=0.0,
        http=TransportSettings(client=capture.client),
    )
    reply = run(adapter, request)
    sent = capture.requests[0]
    assert str(sent.url) == "https://api.anthropic.com/v1/messages"
    assert sent.headers["x-api-key"] == KEY
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in sent.headers
    assert capture.bodies[0] == {
        "model": "claude-test",
        "max_tokens": 4096,
        "system": request.instructions,
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": json.dumps(request.task, ensure_ascii=False)}],
            }
        ],
        "tools": [
            {
                "name": "judge_output",
                "description": (
                    "Record your judgement. Call this exactly once with the complete answer "
                    "in the required schema."
                ),
                "input_schema": anthropic_input_schema(request.output_schema),
            }
        ],
        "tool_choice": {"type": "tool", "name": "judge_output"},
        "temperature": 0.0,
    }
    assert reply.status == "complete"
    assert reply.data == ANSWER
    # input_tokens counts all input, cache reads included (as for OpenAI).
    assert reply.usage == Usage(
        requests=1, input_tokens=1000, cached_input_tokens=900, output_tokens=300, total_tokens=1300
    )


def test_anthropic_attachments_are_image_and_document_blocks(tmp_path):
    xml = tmp_path / "layout.xml"
    xml.write_text("<page><total>12.50</total></page>", encoding="utf-8")
    docx = tmp_path / "notes.docx"
    docx.write_bytes(b"PK\x03\x04 fake")
    request = make_request(
        tmp_path,
        extra=[
            artifact_from_path(xml, authority="evidence"),
            artifact_from_path(docx, authority="generated"),
        ],
    )
    capture = Capture(messages_reply())
    run(
        AnthropicMessagesAdapter(
            api_key=KEY,
            max_output_tokens=900,
            strict_tool=True,
            http=TransportSettings(client=capture.client),
        ),
        request,
    )
    body = capture.bodies[0]
    assert body["max_tokens"] == 900
    assert body["tools"][0]["strict"] is True
    blocks = body["messages"][0]["content"][1:]
    pdf = (tmp_path / "invoice.pdf").read_bytes()
    png = (tmp_path / "scan.png").read_bytes()
    assert blocks == [
        {"type": "text", "text": "Reference invoice (evidence, pdf, invoice.pdf)"},
        {
            "type": "document",
            "source": {
                "type": "base64",
                "media_type": "application/pdf",
                "data": base64.b64encode(pdf).decode(),
            },
            "title": "invoice.pdf",
        },
        {"type": "text", "text": "Reference scan (evidence, image, scan.png)"},
        {
            "type": "image",
            "source": {
                "type": "base64",
                "media_type": "image/png",
                "data": base64.b64encode(png).decode(),
            },
        },
        {"type": "text", "text": "Reference layout (evidence, file, layout.xml)"},
        {
            "type": "document",
            "source": {
                "type": "text",
                "media_type": "text/plain",
                "data": "<page><total>12.50</total></page>",
            },
            "title": "layout.xml",
        },
        {
            "type": "text",
            "text": (
                "Reference notes (generated, file, notes.docx): not attachable: Anthropic does "
                "not accept application/vnd.openxmlformats-officedocument.wordprocessingml."
                "document files; only its listing in the task is available"
            ),
        },
    ]
    assert str(tmp_path) not in capture.requests[0].content.decode()


def test_anthropic_schema_conversion_keeps_property_names_that_look_like_keywords():
    schema = {
        "type": "object",
        "properties": {
            "format": {"type": "string", "format": "decimal", "minLength": 1},
            "pattern": {"type": "string", "pattern": "^[A-Z]+$"},
            "minimum": {"type": "number", "minimum": 0, "maximum": 10},
            "when": {"type": "string", "format": "date-time"},
            "items": {
                "type": "array",
                "items": {"$ref": "#/$defs/maxLength"},
                "minItems": 2,
                "maxItems": 5,
            },
            "some": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            "kind": {"type": "string", "enum": ["minimum", "format"], "default": "format"},
            "either": {"anyOf": [{"type": "integer", "multipleOf": 2}, {"type": "null"}]},
        },
        "required": ["format", "pattern", "minimum", "items"],
        "additionalProperties": False,
        "$defs": {
            "maxLength": {"type": "object", "properties": {"uniqueItems": {"type": "boolean"}}}
        },
    }
    converted = anthropic_input_schema(schema)
    properties = converted["properties"]
    assert list(properties) == list(schema["properties"])  # no property name dropped
    assert properties["format"] == {"type": "string"}  # the keywords went, the name stayed
    assert properties["pattern"] == {"type": "string", "pattern": "^[A-Z]+$"}
    assert properties["minimum"] == {"type": "number"}
    assert properties["when"] == {"type": "string", "format": "date-time"}
    assert properties["items"] == {"type": "array", "items": {"$ref": "#/$defs/maxLength"}}
    assert properties["some"]["minItems"] == 1
    assert properties["kind"] == schema["properties"]["kind"]  # enum/default are data
    assert properties["either"] == {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    assert converted["required"] == ["format", "pattern", "minimum", "items"]
    assert converted["$defs"] == {
        "maxLength": {"type": "object", "properties": {"uniqueItems": {"type": "boolean"}}}
    }
    assert converted["additionalProperties"] is False
    assert schema["properties"]["format"]["minLength"] == 1  # the input is not modified


def test_anthropic_schema_conversion_of_the_judge_schema_is_lossless(tmp_path):
    request = make_request(tmp_path, plain=True)
    # The judge schema uses no rejected keyword: nothing is dropped.
    assert anthropic_input_schema(request.output_schema) == request.output_schema


def test_anthropic_stop_reasons(tmp_path):
    request = make_request(tmp_path, plain=True)
    cut = messages_reply(stop_reason="max_tokens")
    assert run(
        AnthropicMessagesAdapter(api_key=KEY, http=TransportSettings(client=Capture(cut).client)),
        request,
    ).status == ("truncated")
    refused = messages_reply(
        stop_reason="refusal", content=[{"type": "text", "text": "I won't do that."}]
    )
    reply = run(
        AnthropicMessagesAdapter(
            api_key=KEY, http=TransportSettings(client=Capture(refused).client)
        ),
        request,
    )
    assert (reply.status, reply.refusal) == ("refused", "I won't do that.")
    prose = messages_reply(stop_reason="end_turn", content=[{"type": "text", "text": "{}"}])
    reply = run(
        AnthropicMessagesAdapter(api_key=KEY, http=TransportSettings(client=Capture(prose).client)),
        request,
    )
    assert (reply.status, reply.text, reply.data) == ("complete", "{}", None)


def test_anthropic_repair_turns_alternate_roles(tmp_path):
    capture = Capture(messages_reply())
    hint = RepairHint(previous='{"summary": 1}', problem="summary: not a string")
    run(
        AnthropicMessagesAdapter(api_key=KEY, http=TransportSettings(client=capture.client)),
        make_request(tmp_path, plain=True),
        hint,
    )
    messages = capture.bodies[0]["messages"]
    assert [message["role"] for message in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == [{"type": "text", "text": '{"summary": 1}'}]
    assert messages[2]["content"] == [{"type": "text", "text": hint.message()}]


# -- OpenAI-compatible chat completions ---------------------------------------------


def test_chat_exact_body_without_a_key(tmp_path):
    request = make_request(tmp_path, plain=True)
    capture = Capture(chat_reply())
    adapter = OpenAICompatibleChatAdapter(
        model="qwen2.5-vl",
        base_url="http://127.0.0.1:8000/v1/",
        temperature=0.1,
        top_p=0.5,
        max_output_tokens=512,
        provider="vllm",
        http=TransportSettings(client=capture.client),
    )
    reply = run(adapter, request)
    sent = capture.requests[0]
    assert str(sent.url) == "http://127.0.0.1:8000/v1/chat/completions"
    assert "authorization" not in sent.headers
    assert capture.bodies[0] == {
        "model": "qwen2.5-vl",
        "messages": [
            {"role": "system", "content": request.instructions},
            {
                "role": "user",
                "content": [{"type": "text", "text": json.dumps(request.task, ensure_ascii=False)}],
            },
        ],
        "response_format": {
            "type": "json_schema",
            "json_schema": {
                "name": "judge_output",
                "schema": request.output_schema,
                "strict": True,
            },
        },
        "temperature": 0.1,
        "top_p": 0.5,
        "max_tokens": 512,
    }
    assert adapter.provider == "vllm"
    assert reply.usage == Usage(requests=1, input_tokens=700, output_tokens=70, total_tokens=770)


def test_chat_renders_pdf_pages_to_png(tmp_path):
    request = make_request(tmp_path)
    capture = Capture(chat_reply())
    run(
        OpenAICompatibleChatAdapter(
            model="m",
            base_url="http://127.0.0.1:1/v1",
            pdf_dpi=50,
            http=TransportSettings(client=capture.client),
        ),
        request,
    )
    parts = capture.bodies[0]["messages"][1]["content"][1:]
    texts = [part["text"] for part in parts if part["type"] == "text"]
    assert texts == [
        "Reference invoice (evidence, pdf, invoice.pdf): PDF rendered as 2 PNG page images "
        "(pages 1-2 of 2) at 50 dpi",
        "Reference invoice, page 1 of 2",
        "Reference invoice, page 2 of 2",
        "Reference scan (evidence, image, scan.png)",
    ]
    images = [part["image_url"]["url"] for part in parts if part["type"] == "image_url"]
    assert len(images) == 3
    pages = [base64.b64decode(url.split(",", 1)[1]) for url in images[:2]]
    assert all(page.startswith(b"\x89PNG\r\n\x1a\n") for page in pages)
    # The rendered pages are real images of the right size (300 pt wide at 50 dpi,
    # rounded outwards by MuPDF).
    assert pymupdf.Pixmap(pages[0]).width in (208, 209)
    assert not any(part["type"] == "file" for part in parts)


def test_chat_page_limit_is_noted_and_pdf_as_file_flag(tmp_path):
    request = make_request(tmp_path)
    capture = Capture(chat_reply())
    run(
        OpenAICompatibleChatAdapter(
            model="m",
            base_url="http://127.0.0.1:1/v1",
            max_pdf_pages=1,
            pdf_dpi=30,
            http=TransportSettings(client=capture.client),
        ),
        request,
    )
    parts = capture.bodies[0]["messages"][1]["content"][1:]
    assert parts[0]["text"] == (
        "Reference invoice (evidence, pdf, invoice.pdf): PDF rendered as 1 PNG page image "
        "(pages 1-1 of 2) at 30 dpi; pages 2-2 (1) omitted: page limit 1"
    )
    assert sum(part["type"] == "image_url" for part in parts) == 2

    capture = Capture(chat_reply())
    run(
        OpenAICompatibleChatAdapter(
            model="m",
            base_url="http://127.0.0.1:1/v1",
            pdf_as_file=True,
            http=TransportSettings(client=capture.client),
        ),
        request,
    )
    parts = capture.bodies[0]["messages"][1]["content"][1:]
    assert parts[1] == {
        "type": "file",
        "file": {
            "filename": "invoice.pdf",
            "file_data": data_url("application/pdf", (tmp_path / "invoice.pdf").read_bytes()),
        },
    }


def test_chat_reply_states(tmp_path):
    request = make_request(tmp_path, plain=True)

    def reply_for(payload: dict[str, Any]) -> AdapterReply:
        adapter = OpenAICompatibleChatAdapter(
            model="m",
            base_url="http://127.0.0.1:1/v1",
            http=TransportSettings(client=Capture(payload).client),
        )
        return run(adapter, request)

    refused = reply_for(chat_reply({"role": "assistant", "content": None, "refusal": "No."}))
    assert (refused.status, refused.refusal) == ("refused", "No.")
    cut = reply_for(chat_reply(finish_reason="length"))
    assert cut.status == "truncated"
    filtered = reply_for(chat_reply(finish_reason="content_filter"))
    assert filtered.status == "refused"
    parts = reply_for(
        chat_reply({"role": "assistant", "content": [{"type": "text", "text": "{}"}]})
    )
    assert (parts.status, parts.text) == ("complete", "{}")
    with pytest.raises(ProviderError, match="no choices"):
        reply_for({"choices": []})


def test_chat_never_reads_the_openai_key(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    capture = Capture(chat_reply())
    run(
        OpenAICompatibleChatAdapter(
            model="m",
            base_url="http://127.0.0.1:1/v1",
            http=TransportSettings(client=capture.client),
        ),
        make_request(tmp_path, plain=True),
    )
    assert "authorization" not in capture.requests[0].headers
    monkeypatch.setenv("LOCAL_LLM_KEY", "local-secret-1")
    capture = Capture(chat_reply())
    adapter = OpenAICompatibleChatAdapter(
        model="m",
        base_url="http://127.0.0.1:1/v1",
        api_key_env="LOCAL_LLM_KEY",
        http=TransportSettings(client=capture.client),
    )
    run(adapter, make_request(tmp_path, plain=True))
    assert capture.requests[0].headers["authorization"] == "Bearer local-secret-1"


# -- shared behaviour ----------------------------------------------------------------


def test_keys_come_from_the_environment_or_fail_clearly(monkeypatch):
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        OpenAIResponsesAdapter()
    with pytest.raises(ConfigurationError, match="ANTHROPIC_API_KEY"):
        AnthropicMessagesAdapter()
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    assert OpenAIResponsesAdapter().headers()["authorization"] == f"Bearer {KEY}"
    assert AnthropicMessagesAdapter().headers()["x-api-key"] == KEY
    with pytest.raises(ConfigurationError, match="base_url is required"):
        OpenAICompatibleChatAdapter(model="m", base_url="")


def test_invalid_settings_are_rejected():
    with pytest.raises(ConfigurationError, match="temperature"):
        OpenAIResponsesAdapter(api_key=KEY, temperature=-1)
    with pytest.raises(ConfigurationError, match="top_p"):
        OpenAIResponsesAdapter(api_key=KEY, top_p=1.5)
    with pytest.raises(ConfigurationError, match="max_output_tokens"):
        AnthropicMessagesAdapter(api_key=KEY, max_output_tokens=0)


def test_describe_has_settings_and_no_secret():
    adapter = OpenAIResponsesAdapter(
        model="gpt-test",
        api_key=KEY,
        base_url="https://proxy-user:proxy-pass@llm.example.test/v1",
        temperature=0.7,
        max_output_tokens=100,
        http=TransportSettings(extra_body={"metadata": {"token": KEY}}),
    )
    described = adapter.describe()
    assert described["provider"] == "openai"
    assert described["model"] == "gpt-test"
    assert described["base_url"] == "https://llm.example.test/v1"
    assert (described["temperature"], described["top_p"], described["max_output_tokens"]) == (
        0.7,
        None,
        100,
    )
    assert described["pdf_mode"] == "file"
    text = json.dumps(described) + repr(adapter) + repr(adapter._api_key)
    assert KEY not in text
    assert "proxy-pass" not in json.dumps(described)
    anthropic = AnthropicMessagesAdapter(api_key=KEY).describe()
    assert anthropic["max_tokens"] == 4096
    chat = OpenAICompatibleChatAdapter(model="m", base_url="http://127.0.0.1:1/v1").describe()
    assert (chat["pdf_mode"], chat["pdf_dpi"], chat["max_pdf_pages"]) == ("pages", 150, 20)


def test_usage_records_are_per_call_even_under_concurrency(tmp_path):
    request = make_request(tmp_path, plain=True)
    sizes = iter([(10, 1), (20, 2), (30, 3)])

    async def handler(http_request: httpx.Request) -> httpx.Response:
        tokens_in, tokens_out = next(sizes)
        # The first request is answered last, so finishing order differs from sending.
        await asyncio.sleep(0.05 / tokens_in)
        reply = responses_reply(
            usage={
                "input_tokens": tokens_in,
                "output_tokens": tokens_out,
                "total_tokens": tokens_in + tokens_out,
            }
        )
        return httpx.Response(200, json=reply)

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    adapter = OpenAIResponsesAdapter(api_key=KEY, http=TransportSettings(client=client))

    async def go() -> list[AdapterReply]:
        async with client:
            return list(await asyncio.gather(*(adapter.agenerate(request) for _ in range(3))))

    replies = asyncio.run(go())
    assert sorted(reply.usage.input_tokens for reply in replies) == [10, 20, 30]
    for reply in replies:
        assert reply.usage.output_tokens * 10 == reply.usage.input_tokens  # its own usage
    records = adapter.usage_records
    assert len(records) == 3
    assert {record.status for record in records} == {"complete"}
    assert all(record.attempts == 1 and record.model == "gpt-4o-mini" for record in records)
    assert records[0].response_model == "gpt-test-2025"
    assert adapter.total_usage.input_tokens == 60
    assert adapter.total_usage.requests == 3
    assert adapter.last_usage == records[-1].usage
    adapter.reset_usage()
    assert adapter.usage_records == []
    assert adapter.last_usage is None
    assert adapter.total_usage == Usage()


def test_failed_calls_are_recorded_and_reraised(tmp_path):
    capture = Capture({"error": {"message": "bad", "type": "invalid_request_error"}}, status=400)
    adapter = OpenAIResponsesAdapter(api_key=KEY, http=TransportSettings(client=capture.client))
    with pytest.raises(ProviderError):
        run(adapter, make_request(tmp_path, plain=True))
    (record,) = adapter.usage_records
    assert (record.status, record.http_status, record.attempts) == ("error", 400, 1)
    assert "bad" in (record.error or "")


# -- attachments -------------------------------------------------------------------


def test_missing_attachment_names_the_reference_and_file_not_the_path(tmp_path):
    pdf = write_pdf(tmp_path / "gone.pdf", 1)
    request = make_request(tmp_path, extra=[artifact_from_path(pdf, authority="evidence")])
    pdf.unlink()
    for adapter in (
        OpenAIResponsesAdapter(
            api_key=KEY, http=TransportSettings(client=Capture(responses_reply()).client)
        ),
        OpenAICompatibleChatAdapter(
            model="m",
            base_url="http://127.0.0.1:1/v1",
            http=TransportSettings(client=Capture(chat_reply()).client),
        ),
    ):
        with pytest.raises(InputFileNotFoundError) as caught:
            run(adapter, request)
        message = str(caught.value)
        assert "reference 'gone'" in message
        assert "'gone.pdf'" in message
        assert str(tmp_path) not in message


def test_unusual_images_are_converted_to_png(tmp_path):
    bmp = artifact_from_path(write_bmp(tmp_path / "stamp.bmp"), authority="evidence")
    parts = attachment_parts([bmp], AttachmentPolicy())
    assert parts[0] == TextPart(
        "Reference stamp (evidence, image, stamp.bmp): converted from image/bmp to PNG"
    )
    image = parts[1]
    assert isinstance(image, ImagePart)
    assert image.media_type == "image/png"
    assert image.data.startswith(b"\x89PNG")
    assert pymupdf.Pixmap(image.data).width == 1


def test_unreadable_pdf_is_an_input_error(tmp_path):
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.7\nnot really a pdf")
    reference = artifact_from_path(broken, authority="evidence")
    with pytest.raises(InputError, match=r"reference 'broken': 'broken\.pdf' cannot be rendered"):
        attachment_parts([reference], AttachmentPolicy(pdf_mode="pages"))


def test_file_modes_and_labels(tmp_path):
    data = tmp_path / "table.xml"
    data.write_text("<a/>", encoding="utf-8")
    sheet = tmp_path / "sheet.xlsx"
    sheet.write_bytes(b"PK\x03\x04")
    blob = tmp_path / "blob.bin"
    blob.write_bytes(b"\x00\x01")
    references = [
        artifact_from_path(data, authority="ground_truth"),
        artifact_from_path(sheet, authority="evidence"),
        artifact_from_path(blob, authority="evidence"),
    ]
    unknown = TextPart(
        "Reference blob (evidence, file, blob.bin): not attachable: unknown file type; "
        "only its listing in the task is available"
    )
    as_files = attachment_parts(references, AttachmentPolicy(file_mode="file"))
    assert [type(part) for part in as_files] == [TextPart, FilePart, TextPart, FilePart, TextPart]
    assert as_files[-1] == unknown
    as_text = attachment_parts(references, AttachmentPolicy(file_mode="text", provider_label="X"))
    assert [type(part) for part in as_text] == [TextPart, FilePart, TextPart, TextPart]
    assert as_text[2] == TextPart(
        "Reference sheet (evidence, file, sheet.xlsx): not attachable: X does not accept "
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet files; only its "
        "listing in the task is available"
    )
    assert reference_label(references[0]) == "Reference table (ground_truth, file, table.xml)"
    assert [
        type(part) for part in attachment_parts(references, AttachmentPolicy(file_mode="none"))
    ] == [
        TextPart,
        TextPart,
        TextPart,
    ]
