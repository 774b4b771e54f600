"""In-memory generators for ground-truth generation tests: scripted claims, no network."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from docevals_mlflow.groundtruth.models import GeneratedClaim, ProviderGeneration
from docevals_mlflow.judges.judge import AdapterReply, RepairHint
from docevals_mlflow.judges.request import JudgeRequest
from docevals_mlflow.judges.testing import ScriptedAdapter

OMIT = object()
"""A value meaning "leave the field out"."""


def claims_answer(values: Mapping[str, Any], *, cite: str | None = None) -> dict[str, Any]:
    """A claims object for ``{path: value}`` (``OMIT`` leaves a path out)."""
    return {
        "claims": [
            {
                "path": path,
                "expected_value": value,
                "evidence": f"{path} as printed",
                "reference_id": cite,
                "confidence": 0.9,
            }
            for path, value in values.items()
            if value is not OMIT
        ]
    }


def reader(
    values: Mapping[str, Any],
    *,
    model: str,
    provider: str = "fake",
    cite: str | None = None,
    delay: float = 0.0,
) -> ScriptedAdapter:
    """A generator that always answers ``values``."""
    return ScriptedAdapter(
        lambda request, repair: claims_answer(values, cite=cite),
        provider=provider,
        model=model,
        delay=delay,
    )


class RecordingReader:
    """A generator that records every request it is sent and answers per expected
    field from ``values`` (fields it has no value for are omitted)."""

    def __init__(self, values: Mapping[str, Any], *, model: str, provider: str = "fake") -> None:
        self.values = dict(values)
        self.provider = provider
        self.model = model
        self.requests: list[JudgeRequest] = []

    def describe(self) -> dict[str, Any]:
        return {"provider": self.provider, "model": self.model}

    async def agenerate(
        self, request: JudgeRequest, *, repair: RepairHint | None = None
    ) -> AdapterReply:
        self.requests.append(request)
        await asyncio.sleep(0)
        wanted = request.task["expected_fields"]
        answer = claims_answer({path: self.values.get(path, OMIT) for path in wanted})
        return AdapterReply(data=answer)


def generation(
    label: str,
    values: Mapping[str, Any],
    *,
    group: str = "",
    status: str = "ok",
) -> ProviderGeneration:
    """A provider's answer as the panel records it (for voting tests)."""
    return ProviderGeneration(
        provider=label,
        model=f"model-{label}",
        group=group,
        status=status,  # type: ignore[arg-type]
        claims=[
            GeneratedClaim(path=path, expected_value=value, evidence=f"{label} read {path}")
            for path, value in values.items()
            if value is not OMIT
        ],
    )
