"""OpenAI's Responses API (``POST /v1/responses``) with strict structured output."""

from __future__ import annotations

from typing import Any, Unpack

from docevals_mlflow.errors import ProviderError
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
from docevals_mlflow.judges.adapters.wire import SCHEMA_NAME, as_dict, openai_usage
from docevals_mlflow.judges.judge import AdapterReply, RepairHint
from docevals_mlflow.judges.request import JudgeRequest
from docevals_mlflow.judges.usage import Usage


class OpenAIResponsesAdapter(HttpAdapter):
    """A judge model behind OpenAI's Responses API.

    The task JSON and the labelled attachments (images as ``input_image`` data URLs,
    PDFs and other files as ``input_file`` with base64 data and the file name) go in
    one user message; the answer is constrained by ``text.format`` (``json_schema``,
    strict). Nothing is stored at OpenAI (``store: false``). ``temperature`` and
    ``top_p`` are sent exactly as set (OpenAI advises changing one, not both);
    reasoning models may reject them, so leave them unset for those.

    Args:
        reasoning_effort: ``reasoning.effort`` for reasoning models (``"low"``, ...).
        image_detail: ``detail`` of image parts (``"auto"``, ``"low"``, ``"high"``).
        pdf_mode: ``"file"`` (default) sends PDFs as files; ``"pages"`` renders PNGs.
        pdf_dpi, max_pdf_pages: rendering settings for ``pdf_mode="pages"``.

    The other arguments (``model``, ``api_key``, ``base_url``, ``temperature``,
    ``top_p``, ``max_output_tokens``, ``prices`` and ``http``, the
    :class:`~docevals_mlflow.judges.settings.TransportSettings`) are those of
    :class:`~docevals_mlflow.judges.adapters.base.HttpAdapter`; the key defaults to
    ``OPENAI_API_KEY``.
    """

    provider = "openai"
    default_base_url = "https://api.openai.com/v1"
    default_model = "gpt-4o-mini"
    api_key_env = "OPENAI_API_KEY"
    api_path = "responses"

    def __init__(
        self,
        *,
        reasoning_effort: str | None = None,
        image_detail: str = "auto",
        pdf_mode: PdfMode = "file",
        pdf_dpi: int = DEFAULT_PDF_DPI,
        max_pdf_pages: int = DEFAULT_MAX_PDF_PAGES,
        **options: Unpack[HostedAdapterOptions],
    ) -> None:
        super().__init__(**options)
        self.reasoning_effort = reasoning_effort
        self.image_detail = image_detail
        self.policy = AttachmentPolicy(
            pdf_mode=pdf_mode,
            file_mode="file",
            pdf_dpi=pdf_dpi,
            max_pdf_pages=max_pdf_pages,
            provider_label="OpenAI",
        )

    def headers(self) -> dict[str, str]:
        """Bearer authentication plus any extra headers."""
        return self.bearer_headers()

    def describe_extra(self) -> dict[str, Any]:
        """Reasoning effort and image detail (the attachment settings follow them)."""
        return {"reasoning_effort": self.reasoning_effort, "image_detail": self.image_detail}

    def wire_part(self, part: Part) -> dict[str, Any]:
        """``input_text``, ``input_image`` and ``input_file`` parts (data URLs)."""
        if isinstance(part, TextPart):
            return {"type": "input_text", "text": part.text}
        if isinstance(part, ImagePart):
            return {
                "type": "input_image",
                "image_url": part.data_url(),
                "detail": self.image_detail,
            }
        assert isinstance(part, FilePart)
        return {"type": "input_file", "filename": part.name, "file_data": part.data_url()}

    def build_body(self, request: JudgeRequest, repair: RepairHint | None = None) -> dict[str, Any]:
        """The ``/responses`` request body."""
        messages: list[dict[str, Any]] = [{"role": "user", "content": self.user_content(request)}]
        if repair is not None:
            # The previous answer goes back as the assistant's turn (plain string
            # content: typed assistant content must be output_text, not input_text).
            messages.extend(self.repair_turns(repair, answer_blocks=False, problem_blocks=True))
        body: dict[str, Any] = {
            "model": self.model,
            "instructions": request.instructions,
            "input": messages,
            "text": {
                "format": {
                    "type": "json_schema",
                    "name": SCHEMA_NAME,
                    "schema": request.output_schema,
                    "strict": True,
                }
            },
            "store": False,
        }
        effort = self.reasoning_effort
        return self.finish_body(
            body,
            max_tokens_field="max_output_tokens",
            reasoning=None if effort is None else {"effort": effort},
        )

    def parse_reply(self, data: Any) -> AdapterReply:
        """Output text from ``output[].content[]`` (``output_text``); ``refusal`` parts
        make a refused reply; ``status: incomplete`` a truncated (or, for the content
        filter, refused) one."""
        if not isinstance(data, dict) or not isinstance(data.get("output"), list):
            raise self.shape_error("no output list", data)
        status = data.get("status")
        if status == "failed":
            error = as_dict(data.get("error"))
            raise ProviderError(
                self.redact(
                    f"openai response failed: {error.get('code') or 'error'}: "
                    f"{error.get('message') or 'no message'}"
                ),
                provider=self.provider,
                status_code=200,
            )
        texts: list[str] = []
        refusals: list[str] = []
        for item in data["output"]:
            # Reasoning and tool items carry no answer text.
            if not isinstance(item, dict) or item.get("type", "message") != "message":
                continue
            for part in item.get("content") or []:
                if not isinstance(part, dict):
                    continue
                if part.get("type") == "output_text" and isinstance(part.get("text"), str):
                    texts.append(part["text"])
                elif part.get("type") == "refusal":
                    refusals.append(str(part.get("refusal") or ""))
        text = "".join(texts) if texts else None
        if refusals:
            refusal = "\n".join(item for item in refusals if item) or "refused without a reason"
            return AdapterReply(text=text, status="refused", refusal=refusal)
        if status == "incomplete":
            reason = as_dict(data.get("incomplete_details")).get("reason")
            if reason == "content_filter":
                return AdapterReply(
                    text=text, status="refused", refusal="stopped by OpenAI's content filter"
                )
            # max_output_tokens (or a reason added later): the answer is cut off.
            return AdapterReply(text=text, status="truncated")
        if status not in (None, "completed"):
            raise self.shape_error(f"status {status!r}", {"status": status, "id": data.get("id")})
        return AdapterReply(text=text)

    def parse_usage(self, data: Any) -> Usage:
        """``input_tokens`` (cached ones included), ``output_tokens`` (reasoning ones
        included) and their details."""
        return openai_usage(data, input_key="input_tokens", output_key="output_tokens")
