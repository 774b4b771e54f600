"""Batch pipeline runs (a suite of pipelines, panels on every stage) pair their judges'
votes by (case, stage, metric, member), through a real logged run and back."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from docevals_mlflow import (
    EvaluationCase,
    PipelineCase,
    PipelineEvaluationReport,
    PipelineEvaluator,
    artifact_from_value,
    compare_runs,
    load_run_snapshot,
)
from docevals_mlflow.evaluation.panel_metric import JudgePanelMetric, JudgeVariant
from docevals_mlflow.evaluation.suite import build_suite_report
from docevals_mlflow.judges.testing import ScriptedAdapter, answer
from docevals_mlflow.tracking.bundle import BundleWriter
from docevals_mlflow.tracking.layout import layout_evaluation
from docevals_mlflow.tracking.runs import log_bundle
from docevals_mlflow.tracking.snapshot_tables import snapshot_from_artifacts
from docevals_mlflow.tracking.vote_records import VOTES

CASES = ("inv-1", "inv-2", "inv-3")
STAGES = ("ocr", "extract")

Script = Mapping[str, Mapping[tuple[str, str], str]]
"""member -> (case, stage) -> the member's answer."""


def _member(name: str, script: Mapping[tuple[str, str], str]) -> JudgeVariant:
    adapter = ScriptedAdapter(
        lambda request, repair: answer(
            request, prediction=script[request.task["case_id"], request.task["stage_id"]]
        ),
        provider=name,
        model=f"{name}-1",
    )
    return JudgeVariant(name=name, judge=adapter)


def pipeline_reports(script: Script) -> list[PipelineEvaluationReport]:
    """Three pipelines judged by a three-member panel on each stage."""
    panel = JudgePanelMetric([_member(member, votes) for member, votes in script.items()])
    evaluator = PipelineEvaluator(operation_metrics={"extract": [panel]})
    reports = []
    for case in CASES:
        stages = [
            EvaluationCase(
                case_id=case,
                stage_id=stage,
                operation="extract",
                prediction={"total": 1},
                references=[
                    artifact_from_value({"total": 1}, authority="ground_truth", artifact_id="gt")
                ],
            )
            for stage in STAGES
        ]
        reports.append(evaluator.evaluate(PipelineCase(pipeline_id=case, stages=stages)))
    return reports


def log_batch(folder: Path, script: Script, *, name: str) -> str:
    """The pipelines of :func:`pipeline_reports` logged as the batch run
    ``evaluate-pipeline`` logs (a suite report with its stages)."""
    reports = pipeline_reports(script)
    suite = build_suite_report(reports, suite_id="batch")
    writer = BundleWriter(run_name=name)
    stage_reports = [stage for report in reports for stage in report.stage_reports]
    layout_evaluation(writer, suite, markdown="", dashboard="", stage_reports=stage_reports)
    return log_bundle(writer.write(folder / name), experiment="batches").run_id


def everyone(verdict: str) -> dict[tuple[str, str], str]:
    return {(case, stage): verdict for case in CASES for stage in STAGES}


def test_batch_pipeline_runs_pair_votes_per_judge(mlflow_store, tmp_path):
    flipped = everyone("correct") | {
        ("inv-2", "extract"): "incorrect",
        ("inv-3", "ocr"): "incorrect",
    }
    first = log_batch(
        tmp_path,
        {"a": everyone("correct"), "b": everyone("correct"), "c": everyone("incorrect")},
        name="batch-v1",
    )
    second = log_batch(
        tmp_path,
        {"a": everyone("correct"), "b": flipped, "c": everyone("incorrect")},
        name="batch-v2",
    )
    baseline, candidate = load_run_snapshot(first), load_run_snapshot(second)
    assert baseline.report_kind == "suite"
    assert baseline.votes is not None
    assert len(baseline.votes) == 3 * len(CASES) * len(STAGES)
    (pair,) = compare_runs(baseline, candidate, resamples=200).pairs
    judges = pair.judges.set_index("member")
    assert list(judges["votes_matched"]) == [6, 6, 6]
    assert judges.loc["a", "votes_changed"] == 0
    assert judges.loc["b", "votes_changed"] == 2
    assert judges.loc["c", "votes_changed"] == 0
    # b passed all six stages before and four of six after.
    assert judges.loc["b", "baseline_pass_rate"] == pytest.approx(1.0)
    assert judges.loc["b", "candidate_pass_rate"] == pytest.approx(4 / 6)
    assert judges.loc["b", "delta"] == pytest.approx(-2 / 6)
    assert judges.loc["c", "baseline_pass_rate"] == pytest.approx(0.0)
    assert judges.loc["a", "baseline_model"] == "a:a-1"


def test_runs_without_the_votes_table_read_the_votes_from_their_report():
    # Runs logged before judges/votes.parquet existed keep their votes in the report.
    flipped = everyone("correct") | {("inv-1", "ocr"): "incorrect"}
    (report, *_) = pipeline_reports({"a": everyone("correct"), "b": flipped})
    writer = BundleWriter(run_name="p")
    layout_evaluation(writer, report, markdown="", dashboard="")
    assert VOTES in writer.files

    def load(hide_votes: bool):
        bundle = writer.bundle
        return snapshot_from_artifacts(
            run_id="p",
            run_name="p",
            experiment=None,
            params=bundle.params,
            metrics=bundle.metrics,
            tags=bundle.tags,
            read=lambda path: None if hide_votes and path == VOTES else writer.files.get(path),
        )

    from_table, from_report = load(hide_votes=False), load(hide_votes=True)
    assert from_table.votes is not None
    assert from_table.votes == from_report.votes
    assert from_table.votes.verdict.count("fail") == 1
