"""In-memory judges for tests: scripted answers, no network."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from docevals_mlflow.judges.judge import AdapterReply, RepairHint
from docevals_mlflow.judges.request import JudgeRequest
from docevals_mlflow.judges.usage import Usage


def answer(
    request: JudgeRequest,
    *,
    prediction: str | dict[str, str] = "correct",
    reference: str | dict[str, str] = "matched",
    rubric: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A well-formed answer for every claim sent (per-id overrides allowed)."""

    def pick(choice: str | dict[str, str], claim_id: str, default: str) -> str:
        return choice.get(claim_id, default) if isinstance(choice, dict) else choice

    return {
        "summary": "scripted",
        "prediction_claims": [
            {"claim_id": claim_id, "verdict": pick(prediction, claim_id, "correct")}
            for claim_id in request.prediction_claim_ids()
        ],
        "reference_claims": [
            {"claim_id": claim_id, "verdict": pick(reference, claim_id, "matched")}
            for claim_id in request.reference_claim_ids()
        ],
        "rubric_results": [
            {"criterion": criterion, "verdict": verdict}
            for criterion, verdict in (rubric or {}).items()
        ],
    }


class ScriptedAdapter:
    """Answers with ``respond(request, repair)``; counts calls; optional delay."""

    def __init__(
        self,
        respond: Callable[[JudgeRequest, RepairHint | None], Any],
        *,
        provider: str = "fake",
        model: str = "judge-1",
        temperature: float | None = 0.0,
        delay: float = 0.0,
    ) -> None:
        self.respond = respond
        self.provider = provider
        self.model = model
        self.temperature = temperature
        self.delay = delay
        self.calls = 0
        self.in_flight = 0
        self.max_in_flight = 0

    def describe(self) -> dict[str, Any]:
        return {"provider": self.provider, "model": self.model, "temperature": self.temperature}

    async def agenerate(
        self, request: JudgeRequest, *, repair: RepairHint | None = None
    ) -> AdapterReply:
        self.calls += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            value = self.respond(request, repair)
        finally:
            self.in_flight -= 1
        if isinstance(value, AdapterReply):
            return value
        usage = Usage(requests=1, input_tokens=100, output_tokens=20, total_tokens=120)
        if isinstance(value, str):
            return AdapterReply(text=value, usage=usage)
        return AdapterReply(data=value, usage=usage)
