"""The parts of a request body every HTTP adapter builds alike: the user message
(task JSON, then labelled attachments), the turns of a repair, and the sampling
settings and extra keys around the provider's own fields."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from docevals_mlflow.judges.adapters.attachments import Part, TextPart
from docevals_mlflow.judges.adapters.wire import task_text

if TYPE_CHECKING:
    from docevals_mlflow.judges.judge import RepairHint
    from docevals_mlflow.judges.request import JudgeRequest
    from docevals_mlflow.judges.settings import TransportSettings


class RequestBody:
    """Request-body building shared by the adapters (the body half of
    :class:`~docevals_mlflow.judges.adapters.base.HttpAdapter`): a subclass writes
    one content part in its wire format (:meth:`wire_part`) and its own fields; the
    rest is here."""

    temperature: float | None
    top_p: float | None
    max_output_tokens: int | None
    http: TransportSettings

    def parts(self, request: JudgeRequest) -> list[Part]:
        """The labelled attachments of ``request``."""
        raise NotImplementedError

    def wire_part(self, part: Part) -> dict[str, Any]:
        """``part`` as a content block of this provider's wire format."""
        raise NotImplementedError

    def user_content(self, request: JudgeRequest) -> list[dict[str, Any]]:
        """The content of the user message: the task JSON, then the labelled
        attachments, each as :meth:`wire_part` writes it."""
        first = self.wire_part(TextPart(task_text(request)))
        return [first, *(self.wire_part(part) for part in self.parts(request))]

    def repair_turns(
        self, repair: RepairHint, *, answer_blocks: bool, problem_blocks: bool
    ) -> list[dict[str, Any]]:
        """The turns a repair adds: the previous answer as the assistant's, the
        problem as the user's. Each content is plain text, or with ``answer_blocks``
        / ``problem_blocks`` a list of one text block."""
        answer = repair.previous or "(empty answer)"
        problem = repair.message()
        return [
            {
                "role": "assistant",
                "content": [self.wire_part(TextPart(answer))] if answer_blocks else answer,
            },
            {
                "role": "user",
                "content": [self.wire_part(TextPart(problem))] if problem_blocks else problem,
            },
        ]

    def finish_body(
        self, body: dict[str, Any], *, max_tokens_field: str | None = None, **more: Any
    ) -> dict[str, Any]:
        """``body`` with the sampling settings that are set (``max_output_tokens`` as
        ``max_tokens_field``, when one is named), then the keys of ``more`` that are
        not ``None``, then the extra body keys, which override everything."""
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.top_p is not None:
            body["top_p"] = self.top_p
        if max_tokens_field is not None and self.max_output_tokens is not None:
            body[max_tokens_field] = self.max_output_tokens
        body.update((key, value) for key, value in more.items() if value is not None)
        body.update(self.http.extra_body)
        return body
