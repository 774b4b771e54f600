"""``evaluate-case``, ``evaluate-pipeline`` and ``suite``.

The two evaluation commands take the judge options of
:mod:`docevals_mlflow.cli.judge_options`: ``evaluate-case`` judges next to the exact
comparison; ``evaluate-pipeline`` (:mod:`docevals_mlflow.cli.pipeline`) adds the judge
to every stage's configured metrics (which stay).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docevals_mlflow.cli import pipeline
from docevals_mlflow.cli.annotations import add_run_annotations
from docevals_mlflow.cli.common import check_number
from docevals_mlflow.cli.datasets import add_dataset_option, dataset_references
from docevals_mlflow.cli.judge_options import add_judge_options
from docevals_mlflow.cli.options import (
    add_dashboard_option,
    add_fail_on,
    add_output_options,
    add_traces_option,
    add_tracking_options,
)
from docevals_mlflow.cli.paths import Input, check_paths, inputs_of, report_outputs
from docevals_mlflow.core.literals import Authority
from docevals_mlflow.errors import InputError

if TYPE_CHECKING:
    from docevals_mlflow.core.artifacts import ReferenceArtifact
    from docevals_mlflow.core.reports import EvaluationReport, PipelineEvaluationReport
    from docevals_mlflow.evaluation.metrics import Metric


def register(commands: Any) -> None:
    """Add the three subcommands."""
    _register_case(commands)
    pipeline.register(commands)
    _register_suite(commands)


def _register_case(commands: Any) -> None:
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
    add_dashboard_option(case)
    add_fail_on(case)
    add_judge_options(case)
    add_dataset_option(case)
    add_tracking_options(case)
    add_traces_option(case, what="case")
    add_run_annotations(case)
    case.set_defaults(handler=_run_case)


def _register_suite(commands: Any) -> None:
    suite = commands.add_parser("suite", help="aggregate case and pipeline reports")
    suite.add_argument("reports", nargs="+", type=Path, help="report JSON files")
    suite.add_argument("--suite-id", default="suite")
    add_output_options(suite)
    add_dashboard_option(suite)
    add_fail_on(suite, default="never", subject="any case's verdict")
    add_tracking_options(suite)
    add_traces_option(suite, what="case")
    add_run_annotations(suite)
    suite.set_defaults(handler=_run_suite)


def _unique_id(stem: str, taken: set[str]) -> str:
    candidate, number = stem, 2
    while candidate in taken:
        candidate, number = f"{stem}-{number}", number + 1
    taken.add(candidate)
    return candidate


def _references(args: argparse.Namespace) -> list[ReferenceArtifact]:
    from docevals_mlflow.core.artifacts import artifact_from_path

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
    from docevals_mlflow.cli.case_results import finish_report
    from docevals_mlflow.cli.judge_repeats import (
        repeat_case_judge,
        repeats_of,
        with_repeat_figures,
    )
    from docevals_mlflow.cli.judging import announce, judge_metric, judge_paths, judge_runtime

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
    repeats_of(args)
    judge = judge_metric(args, judge_runtime(args))
    if judge is not None:
        announce(judge)
    judge = repeat_case_judge(args, judge)
    return finish_report(args, with_repeat_figures(_evaluate_case(args, judge)))


def _evaluate_case(args: argparse.Namespace, judge: Metric | None = None) -> EvaluationReport:
    from docevals_mlflow.core.cases import EvaluationCase
    from docevals_mlflow.core.datafiles import check_file, load_json_file
    from docevals_mlflow.evaluation.evaluator import Evaluator
    from docevals_mlflow.evaluation.exact import ExactStructuredMetric

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


def _run_suite(args: argparse.Namespace) -> int:
    from docevals_mlflow.cli.case_results import finish_report, gate_reports
    from docevals_mlflow.core.reports import EvaluationReport, PipelineEvaluationReport
    from docevals_mlflow.evaluation.suite import build_suite_report
    from docevals_mlflow.reports.files import load_report

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
    code = finish_report(args, suite, stages=stages)
    return gate_reports(args, reports, code)
