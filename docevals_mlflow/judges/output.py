"""What a judge answers: the ``JudgeOutput`` schema, and reading it from model text."""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import ConfigDict, Field, ValidationError

from docevals_mlflow.core.model import DocEvalsModel, describe_validation_error

PredictionVerdict = Literal["correct", "incorrect", "not_verifiable", "ambiguous"]
ReferenceVerdict = Literal["matched", "missing", "ambiguous"]
RubricVerdict = Literal["pass", "fail", "uncertain"]


class _Lenient(DocEvalsModel):
    # Models add harmless extra keys; the schema sent to them forbids extras, but a
    # stray key must not turn a good judgement into an error.
    model_config = ConfigDict(extra="ignore")


class PredictionClaim(_Lenient):
    """The judge's verdict on one claim the prediction makes (``p00001``, ...)."""

    claim_id: str
    path: str = ""
    verdict: PredictionVerdict
    evidence: str = ""
    reference_id: str | None = None
    confidence: float | None = Field(default=None, ge=0, le=1)


class ReferenceClaim(_Lenient):
    """The judge's verdict on one authoritative reference claim (``r00001``, ...)."""

    claim_id: str
    path: str = ""
    expected_value: Any = None
    verdict: ReferenceVerdict
    matched_prediction_path: str | None = None
    evidence: str = ""
    reference_id: str | None = None
    confidence: float | None = Field(default=None, ge=0, le=1)


class RubricResult(_Lenient):
    """The judge's verdict on one rubric criterion."""

    criterion: str
    verdict: RubricVerdict
    evidence: str = ""
    confidence: float | None = Field(default=None, ge=0, le=1)


class JudgeOutput(_Lenient):
    """A judge's structured answer."""

    summary: str = ""
    prediction_claims: list[PredictionClaim] = Field(default_factory=list)
    reference_claims: list[ReferenceClaim] = Field(default_factory=list)
    rubric_results: list[RubricResult] = Field(default_factory=list)


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [schema, {"type": "null"}]}


def judge_output_schema() -> dict[str, Any]:
    """The JSON Schema sent to providers: strict (every key required, no extras), which
    is what OpenAI's strict structured outputs demand."""

    def obj(properties: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": properties,
            "required": list(properties),
            "additionalProperties": False,
        }

    confidence = _nullable({"type": "number"})
    text = {"type": "string"}
    return obj(
        {
            "summary": text,
            "prediction_claims": {
                "type": "array",
                "items": obj(
                    {
                        "claim_id": text,
                        "path": text,
                        "verdict": {
                            "type": "string",
                            "enum": ["correct", "incorrect", "not_verifiable", "ambiguous"],
                        },
                        "evidence": text,
                        "reference_id": _nullable(text),
                        "confidence": confidence,
                    }
                ),
            },
            "reference_claims": {
                "type": "array",
                "items": obj(
                    {
                        "claim_id": text,
                        "path": text,
                        "expected_value": _nullable(text),
                        "verdict": {"type": "string", "enum": ["matched", "missing", "ambiguous"]},
                        "matched_prediction_path": _nullable(text),
                        "evidence": text,
                        "reference_id": _nullable(text),
                        "confidence": confidence,
                    }
                ),
            },
            "rubric_results": {
                "type": "array",
                "items": obj(
                    {
                        "criterion": text,
                        "verdict": {"type": "string", "enum": ["pass", "fail", "uncertain"]},
                        "evidence": text,
                        "confidence": confidence,
                    }
                ),
            },
        }
    )


class OutputParseError(ValueError):
    """Model text that is not a valid ``JudgeOutput`` (kept with the text)."""

    def __init__(self, message: str, text: str) -> None:
        super().__init__(message)
        self.text = text


_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def _json_candidate(text: str) -> str:
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    if fenced:
        return fenced.group(1)
    if stripped.startswith("{"):
        return stripped
    # Prose around one JSON object: take the outermost braces.
    start, end = stripped.find("{"), stripped.rfind("}")
    return stripped[start : end + 1] if 0 <= start < end else stripped


def parse_judge_output(value: Any) -> JudgeOutput:
    """A ``JudgeOutput`` from an instance, a dict, or model text (code fences and prose
    around the JSON object are tolerated).

    Raises:
        OutputParseError: the value is not a valid judge output.
    """
    if isinstance(value, JudgeOutput):
        return value
    text = value if isinstance(value, str) else None
    try:
        data = json.loads(_json_candidate(value)) if isinstance(value, str) else value
    except json.JSONDecodeError as exc:
        raise OutputParseError(f"not valid JSON: {exc.msg} (line {exc.lineno})", value) from None
    if not isinstance(data, dict):
        raise OutputParseError(
            f"expected a JSON object, got {type(data).__name__}", text or repr(value)
        )
    try:
        return JudgeOutput.model_validate(data)
    except ValidationError as exc:
        message = describe_validation_error(exc, title="JudgeOutput")
        raise OutputParseError(message, text or json.dumps(data, default=str)) from None
    except ValueError as exc:  # our models raise InputError (a ValueError) on bad data
        raise OutputParseError(str(exc), text or json.dumps(data, default=str)) from None
