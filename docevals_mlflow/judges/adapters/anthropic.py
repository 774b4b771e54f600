"""Anthropic's Messages API (``POST /v1/messages``), answering through a forced tool."""

from __future__ import annotations

import json
from typing import Any, Unpack

from docevals_mlflow.judges.adapters.attachments import (
    DEFAULT_MAX_PDF_PAGES,
    DEFAULT_PDF_DPI,
    AttachmentPolicy,
    FilePart,
    ImagePart,
    Part,
    PdfMode,
    TextPart,
)
from docevals_mlflow.judges.adapters.base import HttpAdapter
from docevals_mlflow.judges.adapters.options import HostedAdapterOptions
from docevals_mlflow.judges.adapters.wire import SCHEMA_NAME, as_dict, as_int
from docevals_mlflow.judges.judge import AdapterReply, RepairHint
from docevals_mlflow.judges.request import JudgeRequest
from docevals_mlflow.judges.usage import Usage

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096

UNSUPPORTED_KEYWORDS: frozenset[str] = frozenset(
    {
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
    }
)
"""Schema keywords Anthropic's structured outputs reject (numeric, length and size
bounds). Answers are validated against the full schema afterwards anyway."""

SUPPORTED_FORMATS: frozenset[str] = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
)
"""String ``format`` values Anthropic accepts; other formats are dropped."""

# Where a JSON Schema holds further schemas. Everything else under a schema is a
# keyword whose value is data (enum, const, default, required, description, ...)
# and is copied untouched.
_NAMED_SUBSCHEMAS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)
_SUBSCHEMA = frozenset(
    {
        "items",
        "additionalItems",
        "additionalProperties",
        "unevaluatedItems",
        "unevaluatedProperties",
        "contains",
        "propertyNames",
        "not",
        "if",
        "then",
        "else",
    }
)
_SUBSCHEMA_LISTS = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})


def anthropic_input_schema(
    schema: Any, *, unsupported: frozenset[str] = UNSUPPORTED_KEYWORDS
) -> Any:
    """A copy of ``schema`` without the keywords Anthropic rejects.

    The walk follows the JSON Schema structure: only *keywords* are dropped. The keys
    of ``properties`` (and ``$defs``, ``patternProperties``, ...) are property names,
    kept whatever they are called, so a property named ``format``, ``pattern`` or
    ``minimum`` survives (the seed library stripped those). Values such as ``enum``
    and ``default`` are data and are copied as they are. ``minItems`` is kept when it
    is 0 or 1, the only values accepted; ``format`` when its value is supported.
    """
    if not isinstance(schema, dict):
        return schema  # boolean schemas (true/false) have no keywords
    converted: dict[str, Any] = {}
    for key, value in schema.items():
        if key in unsupported:
            continue
        if key == "minItems" and isinstance(value, int) and value > 1:
            continue
        if key == "format" and isinstance(value, str) and value not in SUPPORTED_FORMATS:
            continue
        if key in _NAMED_SUBSCHEMAS and isinstance(value, dict):
            converted[key] = {
                name: anthropic_input_schema(sub, unsupported=unsupported)
                for name, sub in value.items()
            }
        elif isinstance(value, list) and (key in _SUBSCHEMA_LISTS or key == "items"):
            # "items" as a list is the draft-07 tuple form.
            converted[key] = [anthropic_input_schema(sub, unsupported=unsupported) for sub in value]
        elif key in _SUBSCHEMA:
            converted[key] = anthropic_input_schema(value, unsupported=unsupported)
        else:
            # Data, not schema: a deep copy keeps the request independent of the caller.
            converted[key] = json.loads(json.dumps(value))
    return converted


class AnthropicMessagesAdapter(HttpAdapter):
    """A judge model behind Anthropic's Messages API.

    The instructions are the ``system`` prompt; the task JSON and the labelled
    attachments (``image`` blocks, PDFs as ``document`` blocks, text files as text
    documents) form one user message. The answer comes as the input of one tool,
    ``judge_output``, which the model is forced to call (``tool_choice``); its
    ``input_schema`` is the output schema without the keywords Anthropic rejects (see
    :func:`anthropic_input_schema`). ``stop_reason`` ``max_tokens`` means truncated,
    ``refusal`` refused.

    Args:
        strict_tool: mark the tool ``strict`` so that sampling is constrained to the
            schema (supported by recent models).
        pdf_mode: ``"file"`` (default) sends PDFs as documents; ``"pages"`` PNGs.
        pdf_dpi, max_pdf_pages: rendering settings for ``pdf_mode="pages"``.
        anthropic_version: the ``anthropic-version`` header.

    The other arguments (``model``, ``api_key``, ``base_url``, ``temperature``,
    ``top_p``, ``max_output_tokens``, ``prices`` and ``http``, the
    :class:`~docevals_mlflow.judges.settings.TransportSettings`) are those of
    :class:`~docevals_mlflow.judges.adapters.base.HttpAdapter`; ``max_output_tokens``
    is sent as ``max_tokens`` (required by Anthropic; default 4096), and the key
    defaults to ``ANTHROPIC_API_KEY``.
    """

    provider = "anthropic"
    default_base_url = "https://api.anthropic.com/v1"
    default_model = "claude-sonnet-4-5"
    api_key_env = "ANTHROPIC_API_KEY"
    api_path = "messages"

    def __init__(
        self,
        *,
        strict_tool: bool = False,
        pdf_mode: PdfMode = "file",
        pdf_dpi: int = DEFAULT_PDF_DPI,
        max_pdf_pages: int = DEFAULT_MAX_PDF_PAGES,
        anthropic_version: str = ANTHROPIC_VERSION,
        **options: Unpack[HostedAdapterOptions],
    ) -> None:
        super().__init__(**options)
        self.strict_tool = strict_tool
        self.anthropic_version = anthropic_version
        self.policy = AttachmentPolicy(
            pdf_mode=pdf_mode,
            file_mode="text",
            pdf_dpi=pdf_dpi,
            max_pdf_pages=max_pdf_pages,
            provider_label="Anthropic",
        )

    @property
    def max_tokens(self) -> int:
        """The ``max_tokens`` sent (Anthropic requires one)."""
        return self.max_output_tokens or DEFAULT_MAX_TOKENS

    def headers(self) -> dict[str, str]:
        """``x-api-key`` and ``anthropic-version`` plus any extra headers."""
        return {
            **super().headers(),
            "x-api-key": self.api_key or "",
            "anthropic-version": self.anthropic_version,
        }

    def describe_extra(self) -> dict[str, Any]:
        """``max_tokens`` actually sent and strictness (the attachment settings follow)."""
        return {"max_tokens": self.max_tokens, "strict_tool": self.strict_tool}

    def wire_part(self, part: Part) -> dict[str, Any]:
        """Text, ``image`` and ``document`` blocks (PDFs as base64, text files as text)."""
        if isinstance(part, TextPart):
            return {"type": "text", "text": part.text}
        if isinstance(part, ImagePart):
            return {
                "type": "image",
                "source": {"type": "base64", "media_type": part.media_type, "data": part.base64()},
            }
        assert isinstance(part, FilePart)
        if part.media_type == "application/pdf":
            source: dict[str, Any] = {
                "type": "base64",
                "media_type": "application/pdf",
                "data": part.base64(),
            }
        else:
            # Plain-text documents are the only other kind the Messages API reads.
            source = {"type": "text", "media_type": "text/plain", "data": part.text()}
        return {"type": "document", "source": source, "title": part.name}

    def tool(self, request: JudgeRequest) -> dict[str, Any]:
        """The ``judge_output`` tool whose input is the answer."""
        tool: dict[str, Any] = {
            "name": SCHEMA_NAME,
            "description": (
                "Record your judgement. Call this exactly once with the complete answer "
                "in the required schema."
            ),
            "input_schema": anthropic_input_schema(request.output_schema),
        }
        if self.strict_tool:
            tool["strict"] = True
        return tool

    def build_body(self, request: JudgeRequest, repair: RepairHint | None = None) -> dict[str, Any]:
        """The ``/messages`` request body."""
        messages: list[dict[str, Any]] = [{"role": "user", "content": self.user_content(request)}]
        if repair is not None:
            # The earlier tool call goes back as plain text: a tool_use turn would
            # need a tool_result in the next user turn, which has nothing to report.
            messages.extend(self.repair_turns(repair, answer_blocks=True, problem_blocks=True))
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "system": request.instructions,
            "messages": messages,
            "tools": [self.tool(request)],
            "tool_choice": {"type": "tool", "name": SCHEMA_NAME},
        }
        return self.finish_body(body)

    def parse_reply(self, data: Any) -> AdapterReply:
        """The ``judge_output`` tool input as data (text blocks as text); ``stop_reason``
        ``max_tokens`` or ``model_context_window_exceeded`` → truncated, ``refusal`` →
        refused."""
        if not isinstance(data, dict) or not isinstance(data.get("content"), list):
            raise self.shape_error("no content list", data)
        texts: list[str] = []
        tool_input: Any = None
        for block in data["content"]:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif (
                block.get("type") == "tool_use"
                and block.get("name") == SCHEMA_NAME
                and tool_input is None
            ):
                tool_input = block.get("input")
        text = "".join(texts) if texts else None
        stop_reason = data.get("stop_reason")
        if stop_reason == "refusal":
            return AdapterReply(
                text=text,
                data=tool_input,
                status="refused",
                refusal=text or "the model declined to answer (stop_reason refusal)",
            )
        if stop_reason in ("max_tokens", "model_context_window_exceeded"):
            return AdapterReply(text=text, data=tool_input, status="truncated")
        if tool_input is None:
            # The model answered in prose instead of calling the tool: let the judge
            # try to read (or repair) the text.
            return AdapterReply(text=text)
        return AdapterReply(text=text, data=tool_input)

    def parse_usage(self, data: Any) -> Usage:
        """Token counts. Anthropic's ``input_tokens`` excludes cache reads and writes;
        here ``input_tokens`` is all input (as for OpenAI) and ``cached_input_tokens``
        the cache reads."""
        usage = as_dict(as_dict(data).get("usage"))
        uncached = as_int(usage.get("input_tokens"))
        cache_read = as_int(usage.get("cache_read_input_tokens"))
        cache_write = as_int(usage.get("cache_creation_input_tokens"))
        input_tokens = uncached + cache_read + cache_write
        output_tokens = as_int(usage.get("output_tokens"))
        return Usage(
            requests=1,
            input_tokens=input_tokens,
            cached_input_tokens=cache_read,
            output_tokens=output_tokens,
            total_tokens=input_tokens + output_tokens,
        )
