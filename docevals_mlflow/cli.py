"""The ``docevals`` command.

Exit codes: 0 success; 1 an evaluation reached the ``--fail-on`` level, or (for
``fields``) a ``--fail-under``/``--fail-over`` threshold was breached (CI gating);
2 bad input or usage. Expected errors print one line to stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from docevals_mlflow._version import __version__
from docevals_mlflow.core.artifacts import ReferenceArtifact, artifact_from_path
from docevals_mlflow.core.atomic import atomic_write_text
from docevals_mlflow.core.cases import EvaluationCase
from docevals_mlflow.core.datafiles import load_json_file
from docevals_mlflow.core.literals import Authority, Verdict
from docevals_mlflow.core.reports import EvaluationReport, PipelineEvaluationReport
from docevals_mlflow.errors import DocEvalsError, InputError, InputFileNotFoundError
from docevals_mlflow.evaluation.config import load_pipeline_config
from docevals_mlflow.evaluation.evaluator import Evaluator
from docevals_mlflow.evaluation.exact import ExactStructuredMetric
from docevals_mlflow.evaluation.suite import build_suite_report
from docevals_mlflow.fields.batch import compare_documents
from docevals_mlflow.fields.inputs import pair_records
from docevals_mlflow.fields.schema import DocumentSchema
from docevals_mlflow.reports.fields_markdown import render_fields_markdown
from docevals_mlflow.reports.files import AnyReport, load_report, write_report

EXIT_OK = 0
EXIT_BELOW_THRESHOLD = 1
EXIT_BAD_INPUT = 2

_FAILING: dict[str, set[Verdict]] = {
    "fail": {"fail"},
    "uncertain": {"fail", "uncertain"},
    "never": set(),
}


FAIL_UNDER_METRICS = ("precision", "recall", "f1", "accuracy", "macro_f1")
"""Metrics ``docevals fields --fail-under`` accepts (higher is better)."""
FAIL_OVER_METRICS = ("far", "fdr")
"""Metrics ``docevals fields --fail-over`` accepts (lower is better)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse's own usage errors: exit 2, one line
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def _add_output_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", required=True, type=Path, help="JSON report to write")
    parser.add_argument("--markdown", type=Path, help="also write a Markdown report here")


def _add_fail_on(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--fail-on",
        choices=sorted(_FAILING),
        default="fail",
        help="exit 1 when the verdict is 'fail' (default), 'fail' or 'uncertain' "
        "('uncertain'), or never ('never')",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``docevals`` command."""
    parser = _Parser(
        prog="docevals",
        description="Evaluate document-AI outputs: cases, pipelines and suites.",
    )
    parser.add_argument("--version", action="version", version=f"docevals-mlflow {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    case = commands.add_parser(
        "evaluate-case",
        help="evaluate one prediction against evidence and ground truth",
        description="Evaluate one JSON prediction with deterministic metrics against "
        "ground-truth files (JSON, CSV/TSV path tables). Evidence files (PDF, images, "
        "text) are recorded; judging them needs an LLM judge.",
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
    _add_output_options(case)
    _add_fail_on(case)

    pipeline = commands.add_parser(
        "evaluate-pipeline",
        help="evaluate a multi-stage pipeline described in a JSON/YAML file",
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
    _add_output_options(pipeline)
    _add_fail_on(pipeline)

    suite = commands.add_parser("suite", help="aggregate case and pipeline reports")
    suite.add_argument("reports", nargs="+", type=Path, help="report JSON files")
    suite.add_argument("--suite-id", default="suite")
    _add_output_options(suite)

    fields = commands.add_parser(
        "fields",
        help="compare extracted fields of many documents with ground truth",
        description="Compare predicted documents with expected ones field by field "
        "(TP/FA/FD/FN/TN per leaf, precision, recall, F1, FAR, FDR). Inputs are JSON Lines "
        'files of {"id", "class"?, "data", "confidence"?, "explainability_info"?} records '
        "or folders of <id>.json files; documents are paired by id.",
    )
    fields.add_argument(
        "--schema", type=Path, help="schema (.json, .yaml); without it every field is inferred"
    )
    fields.add_argument("--expected", required=True, type=Path, help="ground truth (file/folder)")
    fields.add_argument("--predicted", required=True, type=Path, help="predictions (file/folder)")
    _add_output_options(fields)
    fields.add_argument(
        "--fail-under",
        action="append",
        default=[],
        metavar="METRIC=VALUE",
        help=f"exit 1 when an overall metric is below VALUE or undefined; METRIC is one of "
        f"{', '.join(FAIL_UNDER_METRICS)} (repeatable)",
    )
    fields.add_argument(
        "--fail-over",
        action="append",
        default=[],
        metavar="METRIC=VALUE",
        help=f"exit 1 when an overall rate is above VALUE or undefined; METRIC is one of "
        f"{', '.join(FAIL_OVER_METRICS)} (repeatable)",
    )
    fields.add_argument(
        "--no-rows",
        action="store_true",
        help="keep per-document cells only, not one row per attribute (less memory)",
    )
    fields.add_argument(
        "--no-mlflow",
        action="store_true",
        help="do not log to MLflow (accepted now; this command does not log yet)",
    )
    return parser


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


def _evaluate_case(args: argparse.Namespace) -> AnyReport:
    if not args.prediction.is_file():
        raise InputFileNotFoundError("prediction file not found", source=str(args.prediction))
    prediction = load_json_file(args.prediction)
    references = _references(args)
    if not references:
        raise InputError(
            "nothing to evaluate against",
            expected="at least one --evidence, --ground-truth or --generated file",
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
    metric = ExactStructuredMetric(
        args.relative_tolerance, args.absolute_tolerance, case_sensitive=args.case_sensitive
    )
    return Evaluator([metric]).evaluate(case)


def _context(pairs: Sequence[str]) -> dict[str, str]:
    context: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InputError(f"--checkpoint-context {pair!r}", expected="KEY=VALUE")
        context[key] = value
    return context


def _evaluate_pipeline(args: argparse.Namespace) -> AnyReport:
    pipeline, evaluator = load_pipeline_config(args.config)
    return evaluator.evaluate(
        pipeline,
        checkpoint_dir=args.checkpoint_dir,
        checkpoint_context=_context(args.checkpoint_context),
    )


def _suite(args: argparse.Namespace) -> AnyReport:
    reports: list[EvaluationReport | PipelineEvaluationReport] = []
    for path in args.reports:
        report = load_report(path)
        if not isinstance(report, (EvaluationReport, PipelineEvaluationReport)):
            raise InputError("a suite report cannot be part of a suite", source=str(path))
        reports.append(report)
    return build_suite_report(reports, suite_id=args.suite_id)


def _summary(report: AnyReport) -> str:
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


def _thresholds(option: str, pairs: Sequence[str], allowed: Sequence[str]) -> dict[str, float]:
    thresholds: dict[str, float] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        name = name.strip().lower()
        if not sep or name not in allowed:
            raise InputError(
                f"{option} {pair!r}",
                expected=f"METRIC=VALUE with METRIC one of {', '.join(allowed)}",
            )
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        # Every metric here lies in [0, 1]; a value outside it is a typo (say, 90 for 0.9)
        # that would otherwise pass or fail every run silently.
        if not 0.0 <= value <= 1.0:
            raise InputError(f"{option} {pair!r}", expected="a VALUE between 0 and 1")
        if name in thresholds:
            raise InputError(f"{option} {name} given twice", expected="one threshold per metric")
        thresholds[name] = value
    return thresholds


def _overall_value(report: dict[str, Any], metric: str) -> float | None:
    overall = report["overall"]
    value = overall["macro_f1"] if metric == "macro_f1" else overall["metrics"][metric]
    return None if value is None else float(value)


def _breaches(report: dict[str, Any], under: dict[str, float], over: dict[str, float]) -> list[str]:
    breaches = []
    for metric, limit in under.items():
        value = _overall_value(report, metric)
        if value is None:
            breaches.append(f"{metric} is undefined (required at least {limit:g})")
        elif value < limit:
            breaches.append(f"{metric} {value:.4f} is below {limit:g}")
    for metric, limit in over.items():
        value = _overall_value(report, metric)
        if value is None:
            breaches.append(f"{metric} is undefined (required at most {limit:g})")
        elif value > limit:
            breaches.append(f"{metric} {value:.4f} is above {limit:g}")
    return breaches


def _fields_summary(report: dict[str, Any]) -> str:
    def shown(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.4f}"

    metrics = report["overall"]["metrics"]
    unpaired = report["unpaired"]
    return (
        f"documents: {report['overall']['documents']}; micro precision "
        f"{shown(metrics['precision'])}, recall {shown(metrics['recall'])}, "
        f"F1 {shown(metrics['f1'])}; macro F1 {shown(report['overall']['macro_f1'])}; "
        f"unpaired: {len(unpaired['expected_only'])} expected only, "
        f"{len(unpaired['predicted_only'])} predicted only"
    )


def _fields(args: argparse.Namespace) -> int:
    # Thresholds first: a typo in them should not cost a whole comparison run.
    under = _thresholds("--fail-under", args.fail_under, FAIL_UNDER_METRICS)
    over = _thresholds("--fail-over", args.fail_over, FAIL_OVER_METRICS)
    schema = DocumentSchema.load(args.schema) if args.schema is not None else None
    # Both unpaired lists are complete here (pair_records indexes both sides first),
    # which compare_documents needs since it takes them before the pairs.
    pairs, expected_only, predicted_only = pair_records(args.expected, args.predicted)
    batch = compare_documents(
        pairs,
        schema,
        keep_rows=not args.no_rows,
        expected_only=expected_only,
        predicted_only=predicted_only,
    )
    report = batch.to_report()
    # Render everything before writing anything, so a failure leaves old files as they were.
    json_text = json.dumps(report, ensure_ascii=False, indent=1, default=str) + "\n"
    markdown_text = render_fields_markdown(report) if args.markdown is not None else None
    atomic_write_text(args.output, json_text)
    if args.markdown is not None and markdown_text is not None:
        atomic_write_text(args.markdown, markdown_text)
    print(_fields_summary(report))
    print(f"report: {args.output}" + (f" (Markdown: {args.markdown})" if args.markdown else ""))
    breaches = _breaches(report, under, over)
    for breach in breaches:
        print(f"docevals: threshold: {breach}", file=sys.stderr)
    return EXIT_BELOW_THRESHOLD if breaches else EXIT_OK


_COMMANDS = {
    "evaluate-case": _evaluate_case,
    "evaluate-pipeline": _evaluate_pipeline,
    "suite": _suite,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    args = build_parser().parse_args(argv)
    try:
        if args.command == "fields":
            # Its report is a plain dict (see fields/report.py), written and gated here.
            return _fields(args)
        report = _COMMANDS[args.command](args)
        write_report(report, args.output, args.markdown)
    except DocEvalsError as exc:
        print(f"docevals: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("docevals: interrupted", file=sys.stderr)
        return 130
    print(_summary(report))
    print(f"report: {args.output}" + (f" (Markdown: {args.markdown})" if args.markdown else ""))
    verdict = getattr(report, "verdict", None)
    if verdict in _FAILING.get(getattr(args, "fail_on", "never"), set()):
        return EXIT_BELOW_THRESHOLD
    return EXIT_OK
