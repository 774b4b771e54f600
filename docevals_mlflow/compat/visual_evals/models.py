"""The seed's ``visual_evals.models``: cases, specs, references, results and reports.

The classes are this package's own (see :mod:`docevals_mlflow.core`); the seed's
``ProducerInfo`` is :class:`~docevals_mlflow.core.cases.Producer`. The pipeline report
is the package's with the seed's equality: a run resumed from checkpoints equals the
run that wrote them.
"""

from __future__ import annotations

from typing import Any

from docevals_mlflow.core import reports as native_reports
from docevals_mlflow.core.artifacts import ReferenceArtifact
from docevals_mlflow.core.cases import EvaluationCase, PipelineCase
from docevals_mlflow.core.cases import Producer as ProducerInfo
from docevals_mlflow.core.literals import (
    ArtifactKind,
    Authority,
    ComparisonMode,
    FailureContext,
    JudgeInstructionMode,
    Verdict,
)
from docevals_mlflow.core.reports import EvaluationReport
from docevals_mlflow.core.results import MetricResult
from docevals_mlflow.core.specs import EvaluationSpec, OperationSpec

__all__ = [
    "ArtifactKind",
    "Authority",
    "ComparisonMode",
    "EvaluationCase",
    "EvaluationReport",
    "EvaluationSpec",
    "FailureContext",
    "JudgeInstructionMode",
    "MetricResult",
    "OperationSpec",
    "PipelineCase",
    "PipelineEvaluationReport",
    "ProducerInfo",
    "ReferenceArtifact",
    "Verdict",
]


# What a report records about how it was obtained (computed now or read back from a
# checkpoint), as opposed to what was evaluated.
_BOOKKEEPING: Any = {"checkpoint": True, "stage_reports": {"__all__": {"from_checkpoint"}}}


class PipelineEvaluationReport(native_reports.PipelineEvaluationReport):
    """The package's pipeline report; two reports are equal when they evaluated the
    same thing, whether or not stages came from checkpoints (``from_checkpoint`` and
    ``checkpoint`` still say which did)."""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, native_reports.PipelineEvaluationReport):
            return NotImplemented
        mine = self.model_dump(mode="json", exclude=_BOOKKEEPING)
        return mine == other.model_dump(mode="json", exclude=_BOOKKEEPING)

    __hash__ = None  # type: ignore[assignment]

    @classmethod
    def of(cls, report: native_reports.PipelineEvaluationReport) -> PipelineEvaluationReport:
        """``report`` as this class (the same values, not copied or revalidated)."""
        values = {name: getattr(report, name) for name in type(report).model_fields}
        return cls.model_construct(_fields_set=set(report.model_fields_set), **values)
