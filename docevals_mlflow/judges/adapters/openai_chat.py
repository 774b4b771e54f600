"""OpenAI-compatible chat completions (``POST {base_url}/chat/completions``): vLLM,
Ollama, llama.cpp, LM Studio and other local or hosted servers."""

from __future__ import annotations

from typing import Any, Unpack

from docevals_mlflow.judges.adapters.attachments import (
    DEFAULT_MAX_PDF_PAGES,
    DEFAULT_PDF_DPI,
    AttachmentPolicy,
    FilePart,
    ImagePart,
    Part,
    TextPart,
)
from docevals_mlflow.judges.adapters.base import HttpAdapter
from docevals_mlflow.judges.adapters.options import AdapterOptions
from docevals_mlflow.judges.adapters.wire import SCHEMA_NAME, as_dict, openai_usage
from docevals_mlflow.judges.judge import AdapterReply, RepairHint
from docevals_mlflow.judges.request import JudgeRequest
from docevals_mlflow.judges.usage import Usage


class OpenAICompatibleChatAdapter(HttpAdapter):
    """A judge model behind any server speaking OpenAI's chat-completions format.

    The instructions are the system message; the task JSON and the labelled
    attachments form the user message (images as ``image_url`` data URLs). Most local
    servers cannot read PDFs, so PDFs are rendered to PNG page images by default
    (``pdf_as_file=True`` sends them as ``file`` parts instead, for servers that take
    them). Other files are labelled as not attachable. The answer is constrained with
    ``response_format`` ``json_schema`` (strict) where the server supports it, and
    checked afterwards either way.

    Args:
        base_url: the server's API root, such as ``http://localhost:8000/v1``
            (required: there is no default server).
        api_key: optional; servers that check none need none. No environment variable
            is read unless ``api_key_env`` names one, so an OpenAI key is never sent
            to another server by accident.
        provider: the provider name shown in reports (``vllm``, ``ollama``, ...).
        pdf_as_file: send PDFs as ``file`` parts instead of rendered pages.
        pdf_dpi, max_pdf_pages: page rendering settings (default 150 dpi, 20 pages).
        max_tokens_field: the body key for ``max_output_tokens`` (``max_tokens``,
            understood by every server; or ``max_completion_tokens``).
        image_detail: an optional ``detail`` for image parts.

    The other arguments (``api_key``, ``temperature``, ``top_p``,
    ``max_output_tokens``, ``prices`` and ``http``, the
    :class:`~docevals_mlflow.judges.settings.TransportSettings`) are those of
    :class:`~docevals_mlflow.judges.adapters.base.HttpAdapter`.
    """

    provider = "openai-compatible"
    requires_api_key = False
    api_path = "chat/completions"

    def __init__(
        self,
        *,
        model: str,
        base_url: str,
        api_key_env: str | None = None,
        provider: str = "openai-compatible",
        pdf_as_file: bool = False,
        pdf_dpi: int = DEFAULT_PDF_DPI,
        max_pdf_pages: int = DEFAULT_MAX_PDF_PAGES,
        max_tokens_field: str = "max_tokens",
        image_detail: str | None = None,
        **options: Unpack[AdapterOptions],
    ) -> None:
        # Set before the base class builds the transport, which is keyed by provider.
        self.provider = provider
        super().__init__(model=model, base_url=base_url, api_key_env=api_key_env, **options)
        self.max_tokens_field = max_tokens_field
        self.image_detail = image_detail
        self.policy = AttachmentPolicy(
            pdf_mode="file" if pdf_as_file else "pages",
            file_mode="none",
            pdf_dpi=pdf_dpi,
            max_pdf_pages=max_pdf_pages,
            provider_label="this chat-completions server",
        )

    def headers(self) -> dict[str, str]:
        """Bearer authentication when a key is set, plus any extra headers."""
        return self.bearer_headers()

    def describe_extra(self) -> dict[str, Any]:
        """The image detail (the attachment settings follow it)."""
        return {"image_detail": self.image_detail}

    def wire_part(self, part: Part) -> dict[str, Any]:
        """``text``, ``image_url`` and ``file`` parts (data URLs)."""
        if isinstance(part, TextPart):
            return {"type": "text", "text": part.text}
        if isinstance(part, ImagePart):
            image: dict[str, Any] = {"url": part.data_url()}
            if self.image_detail is not None:
                image["detail"] = self.image_detail
            return {"type": "image_url", "image_url": image}
        assert isinstance(part, FilePart)
        return {"type": "file", "file": {"filename": part.name, "file_data": part.data_url()}}

    def build_body(self, request: JudgeRequest, repair: RepairHint | None = None) -> dict[str, Any]:
        """The ``/chat/completions`` request body."""
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": request.instructions},
            {"role": "user", "content": self.user_content(request)},
        ]
        if repair is not None:
            messages.extend(self.repair_turns(repair, answer_blocks=False, problem_blocks=False))
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "response_format": {
                "type": "json_schema",
                "json_schema": {
                    "name": SCHEMA_NAME,
                    "schema": request.output_schema,
                    "strict": True,
                },
            },
        }
        return self.finish_body(body, max_tokens_field=self.max_tokens_field)

    def parse_reply(self, data: Any) -> AdapterReply:
        """``choices[0].message.content``; ``message.refusal`` or ``finish_reason``
        ``content_filter`` → refused, ``length`` → truncated."""
        choices = as_dict(data).get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise self.shape_error("no choices", data)
        choice = choices[0]
        message = as_dict(choice.get("message"))
        content = message.get("content")
        if isinstance(content, list):
            # Some servers answer with content parts rather than a string.
            content = "".join(
                str(part.get("text", "")) for part in content if isinstance(part, dict)
            )
        text = content if isinstance(content, str) else None
        refusal = message.get("refusal")
        finish_reason = choice.get("finish_reason")
        if refusal:
            return AdapterReply(text=text, status="refused", refusal=str(refusal))
        if finish_reason == "content_filter":
            return AdapterReply(
                text=text, status="refused", refusal="stopped by the server's content filter"
            )
        if finish_reason == "length":
            return AdapterReply(text=text, status="truncated")
        return AdapterReply(text=text)

    def parse_usage(self, data: Any) -> Usage:
        """``prompt_tokens``/``completion_tokens`` and, where reported, cached and
        reasoning tokens."""
        return openai_usage(data, input_key="prompt_tokens", output_key="completion_tokens")
