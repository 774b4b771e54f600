"""Pipeline evaluations judged by a scripted panel, for tracking and comparison tests."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from docevals_mlflow import (
    EvaluationCase,
    EvaluationSpec,
    OperationSpec,
    PipelineCase,
    PipelineEvaluationReport,
    PipelineEvaluator,
    artifact_from_value,
)
from docevals_mlflow.evaluation.panel_metric import JudgePanelMetric, JudgeVariant
from docevals_mlflow.tracking.bundle import BundleWriter
from docevals_mlflow.tracking.layout import layout_evaluation
from docevals_mlflow.tracking.runs import LoggedRun, log_bundle
from tests.judges.fakes import ScriptedAdapter, answer

STAGES = ("s1", "s2", "s3", "s4")


def panel_report(
    votes: Mapping[str, Mapping[str, str]],
    *,
    action: str = "Extract the total.",
    criteria: tuple[str, ...] = ("the total matches",),
    models: Mapping[str, str] | None = None,
) -> PipelineEvaluationReport:
    """A four-stage pipeline (one ``extract`` operation) judged by a panel whose
    members answer ``votes[member][stage]`` (``correct`` or ``incorrect``)."""

    def member(name: str) -> JudgeVariant:
        script = votes[name]
        adapter = ScriptedAdapter(
            lambda request, repair: answer(request, prediction=script[request.task["stage_id"]]),
            provider=name,
            model=(models or {}).get(name, f"{name}-1"),
        )
        return JudgeVariant(name=name, judge=adapter)

    panel = JudgePanelMetric([member(name) for name in votes], name="panel")
    spec = OperationSpec(
        spec_id="extract-spec",
        operation="extract",
        action_instruction=action,
        evaluation_spec=EvaluationSpec(
            spec_id="extract-eval", objective="Totals are right.", criteria=list(criteria)
        ),
    )
    stages = [
        EvaluationCase(
            case_id="inv",
            stage_id=stage,
            operation="extract",
            prediction={"total": 1},
            references=[
                artifact_from_value({"total": 1}, authority="ground_truth", artifact_id="gt")
            ],
        )
        for stage in STAGES
    ]
    evaluator = PipelineEvaluator(operation_metrics={"extract": [panel]}, operation_specs=[spec])
    return evaluator.evaluate(PipelineCase(pipeline_id="inv", stages=stages))


def log_panel_run(
    folder: Path, report: PipelineEvaluationReport, *, name: str, experiment: str = "judged"
) -> LoggedRun:
    """Log ``report`` as an evaluation run (the path every evaluation run takes)."""
    writer = BundleWriter(run_name=name)
    layout_evaluation(writer, report, markdown="", dashboard="")
    return log_bundle(writer.write(folder / name), experiment=experiment)
