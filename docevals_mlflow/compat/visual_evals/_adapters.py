"""The seed's OpenAI and Anthropic adapters, on this package's adapters.

They keep the seed's keyword arguments and defaults, its ``sender=`` seam, its
synchronous ``build_request`` / ``generate`` and its usage ledger of
:class:`~docevals_mlflow.compat.visual_evals.usage.TokenUsage`, and lay out the
request as the seed did: OpenAI gets the task first, Anthropic the attachments first
and an ``output_config`` JSON schema. Every attachment is still labelled with its
reference id, the label following it (``Reference <id> (...)``, "the attachment
above"), which the seed did not do.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from docevals_mlflow.compat.visual_evals.usage import TokenUsage, UsageSummary
from docevals_mlflow.errors import ConfigurationError, ProviderError
from docevals_mlflow.judges.adapters import anthropic as native_anthropic
from docevals_mlflow.judges.adapters import openai_responses as native_openai
from docevals_mlflow.judges.adapters.attachments import FilePart, Part, TextPart
from docevals_mlflow.judges.adapters.wire import task_text
from docevals_mlflow.judges.judge import AdapterReply, RepairHint, run_sync
from docevals_mlflow.judges.request import JudgeRequest
from docevals_mlflow.judges.settings import TransportSettings
from docevals_mlflow.judges.usage import Usage

OpenAISender = Callable[[dict[str, Any]], dict[str, Any]]
AnthropicSender = Callable[[dict[str, Any]], dict[str, Any]]


def _labels_after(parts: list[Part]) -> list[Part]:
    """``[label, attachment...]`` groups reordered to ``[attachment..., label]``, the
    label saying it is about the attachment above (so the attachment comes where the
    seed put it, and is still labelled)."""
    ordered: list[Part] = []
    label: TextPart | None = None
    held: list[Part] = []
    for part in [*parts, None]:
        if part is None or isinstance(part, TextPart):
            if label is not None:
                text = f"The attachment above is {label.text}" if held else label.text
                ordered.extend([*held, TextPart(text)])
            elif held:
                ordered.extend(held)
            label, held = part, []
        else:
            held.append(part)
    return ordered


class _SeedLedger:
    """The seed's usage ledger and synchronous calls, mixed into an adapter that also
    keeps this package's records (``usage_records`` etc. are the seed's here)."""

    provider: str
    model: str
    _usage_records: list[TokenUsage]

    if TYPE_CHECKING:

        def build_body(
            self, request: JudgeRequest, repair: RepairHint | None = None
        ) -> dict[str, Any]: ...

        async def agenerate(
            self, request: JudgeRequest, *, repair: RepairHint | None = None
        ) -> AdapterReply: ...

    def _start_records(self) -> None:
        super()._start_records()  # type: ignore[misc]
        self._usage_records = []

    @property
    def usage_records(self) -> list[TokenUsage]:
        """One :class:`TokenUsage` per answered call (the seed's records)."""
        return list(self._usage_records)

    @property
    def last_usage(self) -> TokenUsage | None:
        """The record of the call that finished last (under reuse or concurrency,
        whichever finished last: prefer the records)."""
        return self._usage_records[-1] if self._usage_records else None

    @property
    def total_usage(self) -> UsageSummary:
        """The sum of every record."""
        return UsageSummary.from_records(self._usage_records)

    def reset_usage(self) -> None:
        """Forget every record (the seed's and this package's)."""
        self._usage_records.clear()
        super().reset_usage()  # type: ignore[misc]

    def _record_usage(self, usage: TokenUsage) -> None:
        self._usage_records.append(usage)

    def with_settings(self, **settings: Any) -> Any:
        """A copy with other sampling settings (a panel variant's temperature) whose
        seed records go to this adapter's ledger, as the seed's one adapter kept them."""
        copied = super().with_settings(**settings)  # type: ignore[misc]
        copied._usage_records = self._usage_records
        return copied

    def build_request(self, request: JudgeRequest) -> dict[str, Any]:
        """The provider request body for ``request`` (a judge or generation request)."""
        return self.build_body(request)

    def generate(self, request: JudgeRequest) -> str:
        """Send ``request`` and return the answer's text (the seed's synchronous call).

        Raises:
            ProviderError: the provider failed, refused or cut the answer off.
        """
        reply = run_sync(self.agenerate(request))
        if reply.status == "refused":
            raise ProviderError(
                f"{self.provider} model refused: {reply.refusal or 'no reason given'}",
                provider=self.provider,
                status_code=200,
            )
        if reply.status == "truncated":
            raise ProviderError(
                f"{self.provider} answer was cut off (output token limit) before it was complete",
                provider=self.provider,
                status_code=200,
            )
        if reply.text is not None:
            return reply.text
        return json.dumps(reply.data)

    def _ledger_usage(self, data: Any, reader: Callable[..., TokenUsage]) -> None:
        usage = data.get("usage") if isinstance(data, Mapping) else None
        if isinstance(usage, Mapping):
            model = data.get("model") if isinstance(data.get("model"), str) else self.model
            self._record_usage(reader(model=str(model), usage=usage))


def _transport(timeout_seconds: float, http: TransportSettings | None) -> TransportSettings:
    if http is not None:
        return http
    return TransportSettings(timeout=timeout_seconds)


def _check_temperature(temperature: float | None, highest: float) -> None:
    if temperature is not None and not 0.0 <= temperature <= highest:
        raise ConfigurationError(
            f"temperature must be between 0 and {highest:g}", path="temperature"
        )


# The seed's ledger properties replace the native ones on purpose (seed types).
class OpenAIResponsesAdapter(_SeedLedger, native_openai.OpenAIResponsesAdapter):  # type: ignore[misc]
    """OpenAI's Responses API with the seed's arguments (see
    :class:`docevals_mlflow.judges.adapters.OpenAIResponsesAdapter` for the rest).

    ``sender=`` replaces HTTP with a function ``sender(body) -> response`` (no key is
    then needed). ``pdf_detail`` is sent as the ``detail`` of PDF file parts.
    """

    def __init__(
        self,
        *,
        api_key: str | None = None,
        model: str = "gpt-4o-mini",
        reasoning_effort: Literal["none", "low", "medium", "high", "xhigh", "max"] | None = None,
        image_detail: Literal["low", "high", "original", "auto"] = "original",
        pdf_detail: Literal["low", "high", "auto"] = "high",
        base_url: str | None = None,
        timeout_seconds: float = 300.0,
        max_output_tokens: int = 32000,
        temperature: float | None = None,
        sender: OpenAISender | None = None,
        http: TransportSettings | None = None,
    ) -> None:
        _check_temperature(temperature, 2.0)
        super().__init__(
            api_key=api_key,
            model=model,
            reasoning_effort=reasoning_effort,
            image_detail=image_detail,
            base_url=base_url,
            max_output_tokens=max_output_tokens,
            temperature=temperature,
            sender=sender,
            http=_transport(timeout_seconds, http),
        )
        self.pdf_detail = pdf_detail
        self.timeout_seconds = timeout_seconds

    def user_content(self, request: JudgeRequest) -> list[dict[str, Any]]:
        """The task JSON, then each attachment followed by its label."""
        parts: list[Part] = [TextPart(task_text(request)), *_labels_after(self.parts(request))]
        return [self.wire_part(part) for part in parts]

    def wire_part(self, part: Part) -> dict[str, Any]:
        """As natively, with ``detail`` on PDF file parts."""
        wired = super().wire_part(part)
        if isinstance(part, FilePart) and part.media_type == "application/pdf":
            wired["detail"] = self.pdf_detail
        return wired

    def parse_usage(self, data: Any) -> Usage:
        """The package's usage, and the seed's record of it."""
        self._ledger_usage(data, TokenUsage.from_openai)
        return super().parse_usage(data)


class AnthropicMessagesAdapter(  # type: ignore[misc]
    _SeedLedger, native_anthropic.AnthropicMessagesAdapter
):
    """Anthropic's Messages API with the seed's arguments and request layout: the
    attachments, then the task; the answer constrained by ``output_config`` (a JSON
    schema without the keywords Anthropic rejects, property names kept) instead of
    the forced tool this package uses natively.
    """

    def __init__(
        self,
        *,
        api_key: str | None = None,
        model: str = "claude-haiku-4-5-20251001",
        base_url: str | None = None,
        timeout_seconds: float = 300.0,
        max_output_tokens: int = 32000,
        temperature: float | None = None,
        sender: AnthropicSender | None = None,
        http: TransportSettings | None = None,
    ) -> None:
        _check_temperature(temperature, 1.0)
        super().__init__(
            api_key=api_key,
            model=model,
            base_url=base_url,
            max_output_tokens=max_output_tokens,
            temperature=temperature,
            sender=sender,
            http=_transport(timeout_seconds, http),
        )
        self.timeout_seconds = timeout_seconds

    def user_content(self, request: JudgeRequest) -> list[dict[str, Any]]:
        """Each attachment followed by its label, then the task JSON."""
        parts: list[Part] = [*_labels_after(self.parts(request)), TextPart(task_text(request))]
        return [self.wire_part(part) for part in parts]

    def build_body(self, request: JudgeRequest, repair: RepairHint | None = None) -> dict[str, Any]:
        """The native body with ``output_config`` in place of the answer tool."""
        body = super().build_body(request, repair)
        body.pop("tools", None)
        body.pop("tool_choice", None)
        body["output_config"] = {
            "format": {
                "type": "json_schema",
                "schema": native_anthropic.anthropic_input_schema(request.output_schema),
            }
        }
        return body

    def parse_usage(self, data: Any) -> Usage:
        """The package's usage, and the seed's record of it."""
        self._ledger_usage(data, TokenUsage.from_anthropic)
        return super().parse_usage(data)
