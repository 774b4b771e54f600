"""Reading and writing provider JSON: the pieces every adapter's wire format shares."""

from __future__ import annotations

import json
from typing import Any

from docevals_mlflow.judges.request import JudgeRequest
from docevals_mlflow.judges.usage import Usage

SCHEMA_NAME = "judge_output"
"""The name of the structured-output schema (OpenAI) and of the answer tool (Anthropic)."""


def as_int(value: Any) -> int:
    """A token count from a usage field that may be missing or null."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return 0


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (for optional sub-objects)."""
    return value if isinstance(value, dict) else {}


def task_text(request: JudgeRequest) -> str:
    """The task as JSON text: the first part of every user message."""
    return json.dumps(request.task, ensure_ascii=False, default=str)


def openai_usage(data: Any, *, input_key: str, output_key: str) -> Usage:
    """The token counts of an OpenAI-style ``usage`` object in the body ``data``.

    ``input_key`` and ``output_key`` name the input and output counts (cached and
    reasoning tokens included); their ``*_details`` objects give the cached and
    reasoning tokens, and a missing ``total_tokens`` is their sum.
    """
    usage = as_dict(as_dict(data).get("usage"))
    input_tokens = as_int(usage.get(input_key))
    output_tokens = as_int(usage.get(output_key))
    return Usage(
        requests=1,
        input_tokens=input_tokens,
        cached_input_tokens=as_int(as_dict(usage.get(f"{input_key}_details")).get("cached_tokens")),
        output_tokens=output_tokens,
        reasoning_tokens=as_int(
            as_dict(usage.get(f"{output_key}_details")).get("reasoning_tokens")
        ),
        total_tokens=as_int(usage.get("total_tokens")) or input_tokens + output_tokens,
    )
