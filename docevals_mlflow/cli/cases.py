"""``evaluate-case``, ``evaluate-pipeline`` and ``suite``.

The two evaluation commands take the judge options of :mod:`docevals_mlflow.cli.judging`:
``evaluate-case`` judges next to the exact comparison; ``evaluate-pipeline`` adds the
judge to every stage's configured metrics (which stay).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from docevals_mlflow.cli.annotations import add_run_annotations
from docevals_mlflow.cli.common import (
    EXIT_BELOW_THRESHOLD,
    EXIT_OK,
    FAILING,
    Input,
    Output,
    add_fail_on,
    add_output_options,
    add_tracking_options,
    check_number,
    check_paths,
    inputs_of,
    log_evaluation,
    report_outputs,
)
from docevals_mlflow.cli.datasets import (
    add_dataset_option,
    apply_dataset_to_pipeline,
    dataset_references,
)
from docevals_mlflow.cli.diagnostics import add_counterfactual_options, counterfactual_from_args
from docevals_mlflow.cli.judging import (
    add_judge_options,
    add_to_every_stage,
    announce,
    judge_metric,
    judge_paths,
    judge_runtime,
    stage_reports,
    usage_line,
)
from docevals_mlflow.cli.progress import ProgressDisplay
from docevals_mlflow.core.artifacts import ReferenceArtifact, artifact_from_path
from docevals_mlflow.core.cases import EvaluationCase
from docevals_mlflow.core.datafiles import check_file, load_data_file, load_json_file
from docevals_mlflow.core.literals import Authority
from docevals_mlflow.core.reports import EvaluationReport, PipelineEvaluationReport
from docevals_mlflow.errors import InputError
from docevals_mlflow.evaluation.config import load_pipelines_config
from docevals_mlflow.evaluation.evaluator import Evaluator
from docevals_mlflow.evaluation.exact import ExactStructuredMetric
from docevals_mlflow.evaluation.metrics import Metric
from docevals_mlflow.evaluation.pipeline import pipeline_file_names
from docevals_mlflow.evaluation.suite import build_suite_report
from docevals_mlflow.reports.files import AnyReport, load_report, write_report


def register(commands: Any) -> None:
    """Add the three subcommands."""
    case = commands.add_parser(
        "evaluate-case",
        help="evaluate one prediction against evidence and ground truth",
        description="Evaluate one JSON prediction with deterministic metrics against "
        "ground-truth files (JSON, CSV/TSV path tables). Evidence files (PDF, images, "
        "text) are recorded; judging them needs an LLM judge (--judge or --panel), "
        "which runs next to the exact comparison.",
    )
    case.add_argument("--prediction", required=True, type=Path, help="prediction JSON file")
    case.add_argument("--evidence", action="append", default=[], type=Path, metavar="FILE")
    case.add_argument("--ground-truth", action="append", default=[], type=Path, metavar="FILE")
    case.add_argument(
        "--generated",
        action="append",
        default=[],
        type=Path,
        metavar="FILE",
        help="a provisional AI-generated reference (used only without ground truth)",
    )
    case.add_argument("--case-id", help="defaults to the prediction file name")
    case.add_argument("--stage-id", default="output")
    case.add_argument("--operation", default="generic")
    case.add_argument("--rubric", help="the success rule for this operation")
    case.add_argument("--relative-tolerance", type=float, default=1e-6)
    case.add_argument("--absolute-tolerance", type=float, default=1e-6)
    case.add_argument("--case-sensitive", action="store_true", help="compare text with case")
    add_output_options(case)
    add_fail_on(case)
    add_judge_options(case)
    add_dataset_option(case)
    add_tracking_options(case)
    add_run_annotations(case)
    case.set_defaults(handler=_run_case)

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
    add_fail_on(pipeline)
    add_judge_options(pipeline, pipeline=True)
    add_counterfactual_options(pipeline)
    add_dataset_option(pipeline, pipeline=True)
    add_tracking_options(pipeline)
    add_run_annotations(pipeline)
    pipeline.set_defaults(handler=_run_pipeline)

    suite = commands.add_parser("suite", help="aggregate case and pipeline reports")
    suite.add_argument("reports", nargs="+", type=Path, help="report JSON files")
    suite.add_argument("--suite-id", default="suite")
    add_output_options(suite)
    add_fail_on(suite, default="never", subject="any case's verdict")
    add_tracking_options(suite)
    add_run_annotations(suite)
    suite.set_defaults(handler=_run_suite)


def _unique_id(stem: str, taken: set[str]) -> str:
    candidate, number = stem, 2
    while candidate in taken:
        candidate, number = f"{stem}-{number}", number + 1
    taken.add(candidate)
    return candidate


def _references(args: argparse.Namespace) -> list[ReferenceArtifact]:
    taken: set[str] = set()
    groups: list[tuple[Authority, list[Path]]] = [
        ("evidence", args.evidence),
        ("ground_truth", args.ground_truth),
        ("generated", args.generated),
    ]
    return [
        artifact_from_path(path, authority=authority, artifact_id=_unique_id(path.stem, taken))
        for authority, paths in groups
        for path in paths
    ]


def _run_case(args: argparse.Namespace) -> int:
    # Options and paths first, then judge settings: a typo, an output that would
    # replace an input or a missing key should stop the run before any work.
    check_number("--relative-tolerance", args.relative_tolerance, minimum=0)
    check_number("--absolute-tolerance", args.absolute_tolerance, minimum=0)
    judge_inputs, judge_outputs = judge_paths(args)
    check_paths(
        [
            Input("--prediction", args.prediction),
            *inputs_of("--evidence", args.evidence),
            *inputs_of("--ground-truth", args.ground_truth),
            *inputs_of("--generated", args.generated),
            *judge_inputs,
        ],
        [*report_outputs(args), *judge_outputs],
    )
    judge = judge_metric(args, judge_runtime(args))
    if judge is not None:
        announce(judge)
    return _run(args, _evaluate_case(args, judge))


def _pipelines_folder(output: Path) -> Path:
    return output.with_name(f"{output.stem}.pipelines")


def _config_inputs(config: Path) -> list[Input]:
    """The configuration file and every file it names (predictions, inputs,
    references, schemas and panels), read again once loading it has validated it."""
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


def _run_pipeline(args: argparse.Namespace) -> int:
    runtime = judge_runtime(args)
    judge = judge_metric(args, runtime)
    pipelines, evaluator = load_pipelines_config(args.config, judges=runtime)
    # Several pipelines write a report each, named after their ids: ids that make
    # the same file name are refused before anything is evaluated.
    batch = len(pipelines) > 1
    if batch:
        pipeline_file_names(pipeline.pipeline_id for pipeline in pipelines)
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
    pipelines = [apply_dataset_to_pipeline(args, pipeline) for pipeline in pipelines]
    evaluator.counterfactual = counterfactual_from_args(args, args.config.parent)
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
    if judge is not None:
        add_to_every_stage(evaluator, judge)
        announce(judge)
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
        return _run(args, report)
    # Several pipelines (one per document, say): evaluated together, reported as a
    # suite, each pipeline's own report kept next to it.
    reports = evaluator.evaluate_batch(
        pipelines,
        checkpoint_root=args.checkpoint_dir,
        checkpoint_context=context,
        progress=lambda done, total: progress("evaluating stages", done, total),
    )
    _write_pipeline_reports(args, reports)
    suite = build_suite_report(reports, suite_id=args.config.stem)
    code = _run(args, suite, stages=[stage for r in reports for stage in r.stage_reports])
    return _gate(args, reports, code)


def _write_pipeline_reports(
    args: argparse.Namespace, reports: Sequence[PipelineEvaluationReport]
) -> None:
    """Each pipeline's report in ``<output stem>.pipelines/<file name>.json`` (the
    pipeline id made a file name, see
    :func:`~docevals_mlflow.evaluation.pipeline.pipeline_file_name`)."""
    folder = _pipelines_folder(args.output)
    names = pipeline_file_names(report.pipeline_id for report in reports)
    for report in reports:
        write_report(report, folder / f"{names[report.pipeline_id]}.json")


def _evaluate_case(args: argparse.Namespace, judge: Metric | None = None) -> EvaluationReport:
    check_file(args.prediction, what="prediction file")
    prediction = load_json_file(args.prediction)
    references = [
        *_references(args),
        *dataset_references(args, args.case_id or args.prediction.stem),
    ]
    if not references:
        raise InputError(
            "nothing to evaluate against",
            expected="at least one --evidence, --ground-truth or --generated file, or "
            "--ground-truth-dataset",
        )
    fields: dict[str, Any] = {}
    if args.rubric:
        fields["rubric"] = args.rubric
    case = EvaluationCase(
        case_id=args.case_id or args.prediction.stem,
        stage_id=args.stage_id,
        operation=args.operation,
        prediction=prediction,
        references=references,
        **fields,
    )
    metrics: list[Metric] = [
        ExactStructuredMetric(
            args.relative_tolerance, args.absolute_tolerance, case_sensitive=args.case_sensitive
        )
    ]
    if judge is not None:
        metrics.append(judge)
    return Evaluator(metrics).evaluate(case)


def _context(pairs: Sequence[str]) -> dict[str, str]:
    context: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InputError(f"--checkpoint-context {pair!r}", expected="KEY=VALUE")
        context[key] = value
    return context


def _run_suite(args: argparse.Namespace) -> int:
    check_paths(inputs_of("report", args.reports), report_outputs(args))
    reports: list[EvaluationReport | PipelineEvaluationReport] = []
    seen: dict[tuple[int, int], Path] = {}
    for path in args.reports:
        report = load_report(path)
        # The same file twice (a glob and a name, two spellings) would count its cases
        # twice.
        status = path.stat()
        earlier = seen.setdefault((status.st_dev, status.st_ino), path)
        if earlier is not path:
            raise InputError(
                f"report {path} is the same file as report {earlier}; its cases would count twice",
                expected="each report once",
            )
        if not isinstance(report, (EvaluationReport, PipelineEvaluationReport)):
            raise InputError("a suite report cannot be part of a suite", source=str(path))
        reports.append(report)
    suite = build_suite_report(reports, suite_id=args.suite_id)
    stages = [
        stage
        for report in reports
        for stage in (
            report.stage_reports if isinstance(report, PipelineEvaluationReport) else [report]
        )
    ]
    code = _run(args, suite, stages=stages)
    return _gate(args, reports, code)


def _gate(
    args: argparse.Namespace,
    reports: Sequence[EvaluationReport | PipelineEvaluationReport],
    code: int,
) -> int:
    """Exit 1 when any case's verdict reaches ``--fail-on`` (a suite has no verdict)."""
    if any(report.verdict in FAILING.get(args.fail_on, set()) for report in reports):
        return EXIT_BELOW_THRESHOLD
    return code


def summary_line(report: AnyReport) -> str:
    """The one-line result of a case, pipeline or suite evaluation."""
    if isinstance(report, EvaluationReport):
        return f"verdict: {report.verdict} (failure context: {report.failure_context})"
    if isinstance(report, PipelineEvaluationReport):
        stages = ", ".join(
            f"{s.stage_id}={s.verdict}/{s.failure_context}" for s in report.stage_reports
        )
        return f"verdict: {report.verdict} ({stages})"
    counts = ", ".join(
        f"{verdict}={count}" for verdict, count in report.case_verdict_counts.items()
    )
    return f"cases: {report.case_count} ({counts})"


def _run(
    args: argparse.Namespace,
    report: AnyReport,
    *,
    stages: list[EvaluationReport] | None = None,
) -> int:
    write_report(report, args.output, args.markdown)
    print(summary_line(report))
    print(f"report: {args.output}" + (f" (Markdown: {args.markdown})" if args.markdown else ""))

    def assemble(options: Any) -> Any:
        from docevals_mlflow.tracking.assembly import assemble_evaluation

        return assemble_evaluation(report, options, stage_reports=stages)

    log_evaluation(args, assemble, default_run_name=args.output.stem, anchor=args.output)
    # Last, so that it is the line to look at after a run that cost money.
    usage = usage_line(stage_reports(report, stages))
    if usage is not None:
        print(usage)
    verdict = getattr(report, "verdict", None)
    if verdict in FAILING.get(getattr(args, "fail_on", "never"), set()):
        return EXIT_BELOW_THRESHOLD
    return EXIT_OK
