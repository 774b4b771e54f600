"""The layout of a case, pipeline or suite evaluation run: params per operation, stage,
metric and usage figures, the cases table, ``specs/operations.json``, the ground-truth
dataset and (through :mod:`~docevals_mlflow.tracking.judge_layout`) the judges.

Does not import mlflow; :mod:`docevals_mlflow.tracking.runs` logs what this builds.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from docevals_mlflow._version import __version__
from docevals_mlflow.core.fingerprints import sha256_json
from docevals_mlflow.core.formatting import percent_text
from docevals_mlflow.core.literals import VERDICTS
from docevals_mlflow.core.reports import EvaluationReport, PipelineEvaluationReport, SuiteReport
from docevals_mlflow.evaluation.suite import build_suite_report
from docevals_mlflow.reports.markdown import table
from docevals_mlflow.tracking import diagnostics_layout
from docevals_mlflow.tracking.bundle import BundleWriter, DatasetInput
from docevals_mlflow.tracking.judge_layout import judge_layout
from docevals_mlflow.tracking.keys import KeyMap, legal_key
from docevals_mlflow.tracking.layout_shared import headline, tag_evaluation

AnyEvaluation = EvaluationReport | PipelineEvaluationReport | SuiteReport
HEADLINE_INTERVALS = ("case_pass_rate", "case_fail_rate", "human_review_rate")
"""Headline rates logged with their interval, ``Summary/<rate>_ci_low`` and ``_ci_high``."""


def _stage_reports(report: AnyEvaluation) -> list[EvaluationReport]:
    if isinstance(report, PipelineEvaluationReport):
        return list(report.stage_reports)
    if isinstance(report, EvaluationReport):
        return [report]
    return []


def layout_evaluation(
    writer: BundleWriter,
    report: AnyEvaluation,
    *,
    markdown: str,
    dashboard: str,
    stage_reports: Iterable[EvaluationReport] | None = None,
) -> KeyMap:
    """Fill ``writer`` with a case, pipeline or suite report.

    A suite report holds no stage reports; pass them as ``stage_reports`` to get
    per-operation params, ``results/cases.parquet`` and ``specs/operations.json``.
    """
    keys = KeyMap()
    stages = list(stage_reports) if stage_reports is not None else _stage_reports(report)
    suite = report if isinstance(report, SuiteReport) else build_suite_report([report])
    writer.param("docevals.version", __version__)
    if isinstance(report, PipelineEvaluationReport):
        writer.param("pipeline.id", report.pipeline_id)
    elif isinstance(report, EvaluationReport):
        writer.param("case.id", report.case_id)
    else:
        writer.param("suite.id", report.suite_id)
    _operation_params(writer, stages)
    _suite_metrics(writer, keys, suite)

    tag_evaluation(
        writer,
        report.kind,
        verdict=None if isinstance(report, SuiteReport) else report.verdict,
        note=evaluation_summary(report, suite),
    )

    writer.json("report/report.json", report.model_dump(mode="json"))
    writer.text("report/report.md", markdown)
    writer.text("report/dashboard.html", dashboard)
    if stages:
        _cases_table(writer, stages)
        writer.json("specs/operations.json", operations_document(stages))
        _ground_truth_dataset(writer, report, stages)
        judge_layout(writer, keys, stages)
    writer.json("metrics_index.json", keys.index())
    return keys


def _suite_metrics(writer: BundleWriter, keys: KeyMap, suite: SuiteReport) -> None:
    """The headline (``Summary/{cases,case_<verdict>_rate,human_review_rate}`` and the
    intervals of :data:`HEADLINE_INTERVALS`), then per stage, cascade, disagreement,
    metric and usage."""
    headline(
        writer,
        [
            ("cases", suite.case_count),
            *(
                (
                    f"case_{verdict}_rate",
                    suite.case_verdict_counts[verdict] / suite.case_count
                    if suite.case_count
                    else None,
                )
                for verdict in VERDICTS
            ),
            ("human_review_rate", suite.human_review_rate),
        ],
    )
    # Beside the headline rates, their intervals (the cases as clusters); every other
    # rate's interval is in report/report.json.
    for name in HEADLINE_INTERVALS:
        found = suite.ci.get(name)
        if found is not None:
            writer.metric(f"Summary/{name}_ci_low", found.low)
            writer.metric(f"Summary/{name}_ci_high", found.high)
    writer.metric("overall/stages", suite.stage_count)
    for stage_id, summary in suite.stages.items():
        segment = keys.named("stage", stage_id)
        prefix = legal_key(f"stage/{segment}")
        for name in ("pass_rate", "fail_rate", "uncertain_rate", "not_applicable_rate"):
            writer.metric(f"{prefix}/{name}", getattr(summary, name))
        writer.metric(f"{prefix}/human_review_rate", summary.human_review_rate)
        # Every base context, and the counterfactual ones where reruns made them.
        for context, count in summary.failure_contexts.items():
            writer.metric(legal_key(f"{prefix}/failure/{context}"), count / summary.count)
        diagnostics_layout.counterfactual_metrics(writer, segment, summary.counterfactual)
    diagnostics_layout.cascade_metrics(writer, keys, suite.cascades)
    diagnostics_layout.disagreement_metrics(writer, suite.disagreement)
    for name, metric in suite.metrics.items():
        segment = keys.named("metric", name)
        writer.metric(legal_key(f"metric/{segment}/pass_rate"), metric.pass_rate)
        writer.metric(legal_key(f"metric/{segment}/human_review_rate"), metric.human_review_rate)
        writer.metric(legal_key(f"metric/{segment}/errors"), metric.error_count)
        for score, value in metric.score_means.items():
            writer.metric(legal_key(f"metric/{segment}/{score}"), value)
    for name, value in suite.usage.items():
        writer.metric(legal_key(f"usage/{name}"), value)


def _operation_params(writer: BundleWriter, stages: list[EvaluationReport]) -> None:
    values: dict[str, set[str]] = {}
    for stage in stages:
        fp = stage.fingerprints
        prefix = f"op.{legal_key(stage.operation).replace('/', '_')}"
        for suffix, value in (
            ("spec_id", fp.operation_spec_id),
            ("version", fp.operation_spec_version),
            ("action_sha256", fp.action_instruction_sha256),
            ("eval_spec_sha256", fp.evaluation_spec_sha256),
            ("eval_spec_status", fp.evaluation_spec_status),
            ("operation_spec_sha256", fp.operation_spec_sha256),
        ):
            if value is not None:
                values.setdefault(f"{prefix}.{suffix}", set()).add(value)
    for key, seen in sorted(values.items()):
        # Stages of one operation normally share their spec; if not, the param says
        # so and specs/operations.json holds every variant.
        writer.param(key, next(iter(seen)) if len(seen) == 1 else f"mixed ({len(seen)} variants)")


def operations_document(stages: Iterable[EvaluationReport]) -> dict[str, Any]:
    """``specs/operations.json``: full prompt and spec texts per operation, for diffs."""
    operations: dict[str, dict[str, Any]] = {}
    for stage in stages:
        entry = operations.setdefault(stage.operation, {"variants": {}})
        variant = {
            "operation_spec_id": stage.fingerprints.operation_spec_id,
            "operation_spec_version": stage.fingerprints.operation_spec_version,
            "action_instruction": stage.action_instruction,
            "evaluation_spec": (
                stage.evaluation_spec.model_dump(mode="json") if stage.evaluation_spec else None
            ),
            "rubric": stage.rubric,
            "judge_instruction": stage.judge_instruction,
            "judge_instruction_mode": stage.judge_instruction_mode,
            "fingerprints": stage.fingerprints.model_dump(mode="json"),
        }
        key = stage.fingerprints.operation_spec_sha256
        stored = entry["variants"].setdefault(key, {**variant, "stages": []})
        stored["stages"].append({"case_id": stage.case_id, "stage_id": stage.stage_id})
    return {"package_version": __version__, "operations": operations}


def _cases_table(writer: BundleWriter, stages: list[EvaluationReport]) -> None:
    import pandas as pd

    rows = []
    for stage in stages:
        row: dict[str, Any] = {
            "case_id": stage.case_id,
            "stage_id": stage.stage_id,
            "operation": stage.operation,
            "verdict": stage.verdict,
            "failure_context": stage.failure_context,
            "requires_human_review": stage.requires_human_review,
            "upstream_failed": ",".join(
                name for name, verdict in stage.upstream_verdicts.items() if verdict == "fail"
            ),
        }
        for result in stage.metric_results:
            row[f"{result.name}.verdict"] = result.verdict
            for score, value in result.scores.items():
                row[f"{result.name}.{score}"] = value
        if stage.counterfactual is not None:
            row["counterfactual.outcome"] = stage.counterfactual.outcome
            row["counterfactual.verdict"] = stage.counterfactual.verdict
        rows.append(row)
    writer.parquet("results/cases.parquet", pd.DataFrame(rows))


def _ground_truth_dataset(
    writer: BundleWriter, report: AnyEvaluation, stages: list[EvaluationReport]
) -> None:
    import pandas as pd

    records = [
        {
            "case_id": stage.case_id,
            "stage_id": stage.stage_id,
            "reference_id": reference.id,
            "path": Path(reference.path).name,
            "sha256": reference.sha256,
        }
        for stage in stages
        for reference in stage.reference_summary
        if reference.authority == "ground_truth"
    ]
    if not records:
        return
    if isinstance(report, PipelineEvaluationReport):
        name = report.pipeline_id
    elif isinstance(report, EvaluationReport):
        name = report.case_id
    else:
        name = report.suite_id
    dataset = DatasetInput(
        name=f"{name}-ground-truth",
        digest=sha256_json(sorted((r["reference_id"], r["sha256"] or "") for r in records))[:32],
        source=name,
        records="inputs/ground_truth.parquet",
    )
    writer.dataset(dataset, pd.DataFrame(records))


def evaluation_summary(report: AnyEvaluation, suite: SuiteReport) -> str:
    """The Markdown run description for a case, pipeline or suite evaluation."""
    if isinstance(report, PipelineEvaluationReport):
        head = f"**docevals pipeline** `{report.pipeline_id}`: verdict **{report.verdict}**"
    elif isinstance(report, EvaluationReport):
        head = (
            f"**docevals case** `{report.case_id}` / `{report.stage_id}`: verdict "
            f"**{report.verdict}** ({report.failure_context})"
        )
    else:
        head = f"**docevals suite** `{report.suite_id}`: {suite.case_count} cases"
    lines = [head, ""]
    lines += table(
        ["stage", "evaluated", "pass", "fail", "uncertain", "attribution"],
        (
            (
                stage_id,
                summary.count,
                percent_text(summary.pass_rate),
                percent_text(summary.fail_rate),
                percent_text(summary.uncertain_rate),
                ", ".join(
                    f"{context}: {count}"
                    for context, count in summary.failure_contexts.items()
                    if count and context != "none"
                )
                or "none",
            )
            for stage_id, summary in suite.stages.items()
        ),
    )
    return "\n".join(lines) + "\n"
