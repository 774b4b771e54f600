"""Versioned specifications: what an operation was asked to do and how it is judged."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from docevals_mlflow.core.fingerprints import sha256_json
from docevals_mlflow.core.literals import SpecStatus
from docevals_mlflow.core.model import FrozenModel


class EvaluationSpec(FrozenModel):
    """Independently reviewed correctness rules for an operation.

    ``status="approved"`` records that the rules were reviewed; ``draft`` rules still
    need calibration against human-labelled cases.
    """

    spec_id: str = Field(min_length=1)
    version: str = "1"
    status: SpecStatus = "draft"
    objective: str = Field(min_length=1)
    criteria: list[str] = Field(min_length=1)
    allowed_outputs: list[str] = Field(default_factory=list)
    examples: list[Any] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("criteria")
    @classmethod
    def _criteria_not_blank(cls, criteria: list[str]) -> list[str]:
        for index, criterion in enumerate(criteria):
            if not criterion.strip():
                raise ValueError(f"criterion {index} is blank")
        return criteria

    @property
    def sha256(self) -> str:
        """Fingerprint of the whole spec (canonical JSON)."""
        return sha256_json(self)


class OperationSpec(FrozenModel):
    """The prompt under test for one operation, paired with its evaluation spec.

    ``action_instruction`` is the real production prompt; it may be imperfect and is
    never treated as truth. ``evaluation_spec`` defines correctness.
    """

    spec_id: str = Field(min_length=1)
    operation: str = Field(min_length=1)
    version: str = "1"
    action_instruction: str | None = None
    evaluation_spec: EvaluationSpec
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def sha256(self) -> str:
        """Fingerprint of the whole operation spec (canonical JSON)."""
        return sha256_json(self)
