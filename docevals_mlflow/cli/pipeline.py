"""``evaluate-pipeline``: every stage of a pipeline configuration (or a batch of
pipelines, reported as a suite) evaluated with the metrics it names, and the
``--judge``/``--panel`` judge added to every stage."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docevals_mlflow.cli.annotations import add_run_annotations
from docevals_mlflow.cli.datasets import add_dataset_option, apply_dataset_to_pipeline
from docevals_mlflow.cli.diagnostics import add_counterfactual_options, counterfactual_from_args
from docevals_mlflow.cli.judge_options import add_judge_options
from docevals_mlflow.cli.options import (
    add_dashboard_option,
    add_fail_on,
    add_output_options,
    add_traces_option,
    add_tracking_options,
)
from docevals_mlflow.cli.paths import Input, Output, check_paths, report_outputs
from docevals_mlflow.cli.progress import ProgressDisplay
from docevals_mlflow.errors import InputError

if TYPE_CHECKING:
    from docevals_mlflow.core.cases import PipelineCase
    from docevals_mlflow.core.reports import PipelineEvaluationReport
    from docevals_mlflow.evaluation.pipeline import PipelineEvaluator


def register(commands: Any) -> None:
    """Add the ``evaluate-pipeline`` subcommand."""
    pipeline = commands.add_parser(
        "evaluate-pipeline",
        help="evaluate a multi-stage pipeline described in a JSON/YAML file",
        description="Evaluate every stage of a pipeline configuration with the metrics it "
        "names (exact, function, judge, panel). --judge or --panel adds a judge to every "
        "stage on top of those metrics. A file with a 'pipelines' list is evaluated as a "
        "batch: --output gets the suite report and <output>.pipelines/ each pipeline's.",
    )
    pipeline.add_argument("config", type=Path, help="pipeline configuration (.json, .yaml)")
    pipeline.add_argument("--checkpoint-dir", type=Path, help="reuse and write stage checkpoints")
    pipeline.add_argument(
        "--checkpoint-context",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a setting that invalidates checkpoints when it changes (repeatable)",
    )
    add_output_options(pipeline)
    add_dashboard_option(pipeline)
    add_fail_on(pipeline)
    add_judge_options(pipeline, pipeline=True)
    add_counterfactual_options(pipeline)
    add_dataset_option(pipeline, pipeline=True)
    add_tracking_options(pipeline)
    add_traces_option(pipeline, what="pipeline case")
    add_run_annotations(pipeline)
    pipeline.set_defaults(handler=run_pipeline)


def run_pipeline(args: argparse.Namespace) -> int:
    """Evaluate the pipeline (or the batch), write the reports, log, and gate."""
    from docevals_mlflow.cli.case_results import finish_report, gate_reports
    from docevals_mlflow.cli.judge_repeats import (
        repeat_pipeline_judges,
        repeats_of,
        with_repeat_figures,
    )
    from docevals_mlflow.cli.judging import (
        add_to_every_stage,
        announce,
        judge_metric,
        judge_runtime,
    )
    from docevals_mlflow.evaluation.config import load_pipelines_config
    from docevals_mlflow.evaluation.pipeline import pipeline_file_names
    from docevals_mlflow.evaluation.suite import build_suite_report

    repeats_of(args)
    runtime = judge_runtime(args)
    judge = judge_metric(args, runtime)
    pipelines, evaluator = load_pipelines_config(args.config, judges=runtime)
    # Several pipelines write a report each, named after their ids: ids that make
    # the same file name are refused before anything is evaluated.
    batch = len(pipelines) > 1
    if batch:
        pipeline_file_names(pipeline.pipeline_id for pipeline in pipelines)
    _check_pipeline_paths(args, batch=batch)
    pipelines = [apply_dataset_to_pipeline(args, pipeline) for pipeline in pipelines]
    evaluator.counterfactual = counterfactual_from_args(args, args.config.parent)
    _check_references(args, evaluator, pipelines)
    if judge is not None:
        add_to_every_stage(evaluator, judge)
        announce(judge)
    repeat_pipeline_judges(args, evaluator)
    # A bar on a terminal only: judged stages take seconds each, while redirected
    # output (CI logs) keeps exactly the lines it always had.
    progress = ProgressDisplay(sys.stderr, command="evaluate-pipeline", milestones=False)
    context = _context(args.checkpoint_context)
    if len(pipelines) == 1:
        report = evaluator.evaluate(
            pipelines[0],
            checkpoint_dir=args.checkpoint_dir,
            checkpoint_context=context,
            progress=lambda done, total: progress("evaluating stages", done, total),
        )
        return finish_report(args, with_repeat_figures(report))
    # Several pipelines (one per document, say): evaluated together, reported as a
    # suite, each pipeline's own report kept next to it.
    reports = evaluator.evaluate_batch(
        pipelines,
        checkpoint_root=args.checkpoint_dir,
        checkpoint_context=context,
        progress=lambda done, total: progress("evaluating stages", done, total),
    )
    reports = [with_repeat_figures(report) for report in reports]
    _write_pipeline_reports(args, reports)
    suite = build_suite_report(reports, suite_id=args.config.stem)
    code = finish_report(args, suite, stages=[stage for r in reports for stage in r.stage_reports])
    return gate_reports(args, reports, code)


def _check_pipeline_paths(args: argparse.Namespace, *, batch: bool) -> None:
    from docevals_mlflow.cli.judging import judge_paths

    judge_inputs, judge_outputs = judge_paths(args)
    check_paths(
        [
            *_config_inputs(args.config),
            Input("--reruns", args.reruns) if args.reruns is not None else None,
            *judge_inputs,
        ],
        [
            *report_outputs(args),
            Output("--checkpoint-dir", args.checkpoint_dir, "owned")
            if args.checkpoint_dir is not None
            else None,
            Output("the pipeline reports folder", _pipelines_folder(args.output), "owned")
            if batch
            else None,
            *judge_outputs,
        ],
    )


def _check_references(
    args: argparse.Namespace, evaluator: PipelineEvaluator, pipelines: list[PipelineCase]
) -> None:
    try:
        evaluator.check_references(pipelines)
    except InputError as exc:
        # Say which file the reference is in: a rerun is a record of --reruns, metrics
        # are configured in the configuration (an --action is named on the command line).
        if exc.record is not None and exc.record.startswith("rerun"):
            raise exc.located(source=str(args.reruns)) from None
        if exc.path is not None and exc.path.startswith("metrics."):
            raise exc.located(source=str(args.config)) from None
        raise


def _pipelines_folder(output: Path) -> Path:
    return output.with_name(f"{output.stem}.pipelines")


def _config_inputs(config: Path) -> list[Input]:
    """The configuration file and every file it names (predictions, inputs,
    references, schemas and panels), read again once loading it has validated it."""
    from docevals_mlflow.core.datafiles import load_data_file

    base = config.parent
    found = [Input("the configuration", config)]
    data = load_data_file(config)
    if not isinstance(data, dict):
        return found
    entries = data["pipelines"] if isinstance(data.get("pipelines"), list) else [data]
    for entry in entries:
        stages = entry.get("stages") if isinstance(entry, dict) else None
        for stage in stages if isinstance(stages, list) else []:
            if not isinstance(stage, dict):
                continue
            where = f"stage {stage.get('stage_id')!r}"
            for key in ("prediction_file", "input_file"):
                if isinstance(stage.get(key), str):
                    found.append(Input(f"{where} {key}", base / stage[key]))
            references = stage.get("references")
            for reference in references if isinstance(references, list) else []:
                if isinstance(reference, dict) and isinstance(reference.get("path"), str):
                    found.append(Input(f"{where} reference", base / reference["path"]))
    metrics = data.get("metrics")
    if isinstance(metrics, dict):
        lists: list[Any] = [metrics.get("default")]
        for section in ("operations", "stages"):
            named = metrics.get(section)
            lists.extend(named.values() if isinstance(named, dict) else [])
        for metric in (item for given in lists if isinstance(given, list) for item in given):
            for key in ("schema", "panel"):
                if isinstance(metric, dict) and isinstance(metric.get(key), str):
                    found.append(Input(f"metric {key} file", base / metric[key]))
    return found


def _write_pipeline_reports(
    args: argparse.Namespace, reports: Sequence[PipelineEvaluationReport]
) -> None:
    """Each pipeline's report in ``<output stem>.pipelines/<file name>.json`` (the
    pipeline id made a file name, see
    :func:`~docevals_mlflow.evaluation.pipeline.pipeline_file_name`)."""
    from docevals_mlflow.evaluation.pipeline import pipeline_file_names
    from docevals_mlflow.reports.files import write_report

    folder = _pipelines_folder(args.output)
    names = pipeline_file_names(report.pipeline_id for report in reports)
    for report in reports:
        write_report(report, folder / f"{names[report.pipeline_id]}.json")


def _context(pairs: Sequence[str]) -> dict[str, str]:
    context: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InputError(f"--checkpoint-context {pair!r}", expected="KEY=VALUE")
        context[key] = value
    return context
