"""Recorded reruns and actions must name pipelines, stages or operations that exist:
one that names nothing would leave the attribution unrefined without a word."""

from __future__ import annotations

import pytest

from docevals_mlflow import InputError
from docevals_mlflow.diagnostics import Counterfactual
from docevals_mlflow.diagnostics.counterfactual import RecordedRerun
from tests.diagnostics.pipelines import calculate, evaluator, invoice


def rerun(pipeline_id: str, stage_id: str) -> RecordedRerun:
    return RecordedRerun(pipeline_id=pipeline_id, stage_id=stage_id, prediction={"total": 1})


def test_references_that_exist_pass():
    pipelines = [invoice("inv-1", calculate), invoice("inv-2", calculate)]
    Counterfactual(
        {"calculate": calculate, "extract": calculate},
        reruns=[rerun("inv-2", "calculate")],
    ).check_references(pipelines)


@pytest.mark.parametrize(
    ("reruns", "message", "expected"),
    [
        (
            [rerun("inv-1", "calculate"), rerun("inv-1", "calculat")],
            "recorded rerun for stage 'calculat', which pipeline 'inv-1' does not have",
            "one of its stages: 'calculate', 'extract'",
        ),
        (
            [rerun("inv-9", "calculate")],
            "recorded rerun for pipeline 'inv-9', which is not evaluated",
            "one of the pipelines: 'inv-1'",
        ),
    ],
)
def test_reruns_naming_nothing_are_refused(reruns, message, expected):
    with pytest.raises(InputError, match=message) as caught:
        Counterfactual(reruns=reruns).check_references([invoice("inv-1", calculate)])
    assert caught.value.record == f"rerun {len(reruns)}"
    assert caught.value.expected == expected


def test_actions_naming_nothing_are_refused():
    with pytest.raises(InputError, match="action 'calc' names neither a stage nor an operation"):
        Counterfactual({"calc": calculate}).check_references([invoice("inv-1", calculate)])


def test_the_pipeline_evaluator_checks_its_counterfactual():
    pipelines = [invoice("inv-1", calculate)]
    checked = evaluator(Counterfactual({"calc": calculate}))
    with pytest.raises(InputError, match="action 'calc'"):
        checked.check_references(pipelines)
