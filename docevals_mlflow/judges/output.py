"""What a judge answers: the ``JudgeOutput`` schema, and reading it from model text."""

from __future__ import annotations

import json
import re
from typing import Any, Literal, get_args

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


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    """A strict object schema: every key required, no extras."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _list_of(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": _object(properties)}


def _verdicts(verdict_type: Any) -> dict[str, Any]:
    """The schema of a verdict ``Literal``: a string among its values."""
    return {"type": "string", "enum": list(get_args(verdict_type))}


def judge_output_schema() -> dict[str, Any]:
    """The JSON Schema sent to providers: strict (every key required, no extras), which
    is what OpenAI's strict structured outputs demand."""
    confidence = _nullable({"type": "number"})
    text = {"type": "string"}
    return _object(
        {
            "summary": text,
            "prediction_claims": _list_of(
                {
                    "claim_id": text,
                    "path": text,
                    "verdict": _verdicts(PredictionVerdict),
                    "evidence": text,
                    "reference_id": _nullable(text),
                    "confidence": confidence,
                }
            ),
            "reference_claims": _list_of(
                {
                    "claim_id": text,
                    "path": text,
                    "expected_value": _nullable(text),
                    "verdict": _verdicts(ReferenceVerdict),
                    "matched_prediction_path": _nullable(text),
                    "evidence": text,
                    "reference_id": _nullable(text),
                    "confidence": confidence,
                }
            ),
            "rubric_results": _list_of(
                {
                    "criterion": text,
                    "verdict": _verdicts(RubricVerdict),
                    "evidence": text,
                    "confidence": confidence,
                }
            ),
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
