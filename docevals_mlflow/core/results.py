"""What one metric says about one case."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from docevals_mlflow.core.literals import Verdict
from docevals_mlflow.core.model import DocEvalsModel


class ErrorRecord(DocEvalsModel):
    """An exception a metric raised, kept in the report instead of aborting the run."""

    type: str
    message: str


class MetricResult(DocEvalsModel):
    """One metric's verdict on one case, with the numbers behind it.

    ``basis`` says what the verdict rests on (e.g. ``ground_truth`` or
    ``generated (provisional)``); ``scores`` are ratios (``None`` when a denominator is
    zero, never a silent 0); ``counts`` are the integers they come from.
    """

    name: str = Field(min_length=1)
    basis: str
    verdict: Verdict
    scores: dict[str, float | None] = Field(default_factory=dict)
    counts: dict[str, int] = Field(default_factory=dict)
    details: Any = None
    notes: list[str] = Field(default_factory=list)
    requires_human_review: bool = False
    usage: dict[str, float] = Field(default_factory=dict)
    """Resource use (requests, tokens, cost) of this metric on this case, if any."""
    error: ErrorRecord | None = None
