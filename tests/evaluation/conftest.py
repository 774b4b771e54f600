from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from docevals_mlflow import EvaluationCase, MetricResult, artifact_from_value
from docevals_mlflow.core.literals import Verdict


class VerdictMetric:
    """A fake metric that returns a fixed verdict per stage and counts its calls."""

    def __init__(self, verdicts: dict[str, Verdict], name: str = "fixed") -> None:
        self.name = name
        self.verdicts = verdicts
        self.calls: list[str] = []

    def config(self) -> dict[str, Any]:
        return {"verdicts": self.verdicts}

    def evaluate(self, case: EvaluationCase) -> MetricResult:
        self.calls.append(case.stage_id)
        return MetricResult(name=self.name, basis="fixed", verdict=self.verdicts[case.stage_id])


@pytest.fixture
def verdict_metric() -> Callable[..., VerdictMetric]:
    return VerdictMetric


def stage(
    stage_id: str,
    depends_on: list[str] | None = None,
    *,
    prediction: Any = None,
    truth: Any = None,
    operation: str = "generic",
    **fields: Any,
) -> EvaluationCase:
    references = (
        [artifact_from_value(truth, authority="ground_truth", artifact_id=f"{stage_id}-truth")]
        if truth is not None
        else []
    )
    return EvaluationCase(
        case_id="case-1",
        stage_id=stage_id,
        operation=operation,
        prediction=prediction if prediction is not None else {"value": stage_id},
        input_data=None if references else {"from": "upstream"},
        references=references,
        depends_on=depends_on or [],
        **fields,
    )
