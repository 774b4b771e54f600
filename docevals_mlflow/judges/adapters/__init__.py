"""Provider adapters: OpenAI Responses, Anthropic Messages and OpenAI-compatible chat
completions (vLLM, Ollama, llama.cpp, LM Studio), all on one pooled, retrying
transport with per-call usage accounting.

Each adapter takes its provider options as keyword arguments and its transport
(timeouts, retries, limits, extra headers and body keys, the client) as one
:class:`TransportSettings` (``http=``).

Keys come from the ``api_key`` argument or the provider's environment variable
(``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``), never from a file, and never appear in
errors, logs, usage records or :meth:`describe` output.
"""

from __future__ import annotations

from docevals_mlflow.judges.adapters.anthropic import (
    AnthropicMessagesAdapter,
    anthropic_input_schema,
)
from docevals_mlflow.judges.adapters.attachments import (
    AttachmentPolicy,
    FilePart,
    ImagePart,
    TextPart,
    attachment_parts,
    reference_label,
    render_pdf,
)
from docevals_mlflow.judges.adapters.base import HttpAdapter
from docevals_mlflow.judges.adapters.openai_chat import OpenAICompatibleChatAdapter
from docevals_mlflow.judges.adapters.openai_responses import OpenAIResponsesAdapter
from docevals_mlflow.judges.adapters.options import AdapterOptions, HostedAdapterOptions
from docevals_mlflow.judges.adapters.usage_log import UsageRecord
from docevals_mlflow.judges.settings import TransportSettings

__all__ = [
    "AdapterOptions",
    "AnthropicMessagesAdapter",
    "AttachmentPolicy",
    "FilePart",
    "HostedAdapterOptions",
    "HttpAdapter",
    "ImagePart",
    "OpenAICompatibleChatAdapter",
    "OpenAIResponsesAdapter",
    "TextPart",
    "TransportSettings",
    "UsageRecord",
    "anthropic_input_schema",
    "attachment_parts",
    "reference_label",
    "render_pdf",
]
