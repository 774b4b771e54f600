"""``docevals fields``: many documents compared field by field with ground truth."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docevals_mlflow.cli.annotations import add_run_annotations, annotation_inputs
from docevals_mlflow.cli.datasets import add_dataset_option, paired_inputs
from docevals_mlflow.cli.diagnostics import calibration_line
from docevals_mlflow.cli.judge_options import add_judge_options
from docevals_mlflow.cli.light_constants import DISCOVERED_POLICIES, LIST_PAIRINGS, OPENAI_BASE_URL
from docevals_mlflow.cli.options import (
    add_dashboard_option,
    add_output_options,
    add_traces_option,
    add_tracking_options,
    write_dashboard,
)
from docevals_mlflow.cli.paths import Input, check_paths, report_outputs
from docevals_mlflow.cli.run_logging import log_evaluation
from docevals_mlflow.cli.thresholds import (
    add_threshold_option,
    breaches,
    gate,
    gate_verdict,
    parse_thresholds,
)
from docevals_mlflow.errors import InputError

if TYPE_CHECKING:
    from docevals_mlflow.cli.field_method_providers import FieldMethodProviders
    from docevals_mlflow.fields.schema import DocumentSchema

FAIL_UNDER_METRICS = ("precision", "recall", "f1", "accuracy", "macro_f1")
"""Metrics ``docevals fields --fail-under`` accepts (higher is better)."""
FAIL_OVER_METRICS = ("far", "fdr")
"""Metrics ``docevals fields --fail-over`` accepts (lower is better)."""


def register(commands: Any) -> None:
    """Add the ``fields`` subcommand."""
    fields = commands.add_parser(
        "fields",
        help="compare extracted fields of many documents with ground truth",
        description="Compare predicted documents with expected ones field by field "
        "(TP/FA/FD/FN/TN per leaf, precision, recall, F1, FAR, FDR). Inputs are JSON Lines "
        'files of {"id", "class"?, "data", "confidence"?, "explainability_info"?} records '
        "folders of <id>.json files, or Parquet with those columns; documents are paired "
        "by id.",
    )
    _add_inputs(fields)
    add_output_options(fields)
    add_dashboard_option(fields)
    add_threshold_option(fields, "--fail-under", FAIL_UNDER_METRICS, subject="an overall metric")
    add_threshold_option(
        fields, "--fail-over", FAIL_OVER_METRICS, subject="an overall rate", breached_when="above"
    )
    add_comparison_rules(fields)
    _add_engine_options(fields)
    add_judge_options(fields, fields=True)
    _add_embedding_options(fields)
    add_tracking_options(fields)
    add_traces_option(fields)
    add_run_annotations(fields, prompt=True)
    fields.set_defaults(handler=run)


def _add_inputs(parser: argparse.ArgumentParser) -> None:
    """``--schema``, ``--expected`` (or ``--ground-truth-dataset``) and ``--predicted``."""
    parser.add_argument(
        "--schema", type=Path, help="schema (.json, .yaml); without it every field is inferred"
    )
    expected = parser.add_mutually_exclusive_group(required=True)
    expected.add_argument(
        "--expected", type=Path, help="ground truth (JSON Lines, folder of JSON, or Parquet)"
    )
    add_dataset_option(parser, exclusive=expected)
    parser.add_argument(
        "--predicted",
        required=True,
        type=Path,
        help="predictions (JSON Lines, folder of JSON, or Parquet)",
    )
    parser.add_argument(
        "--evaluation-dataset",
        nargs="?",
        const="",
        metavar="NAME",
        help="also publish --expected as the MLflow evaluation dataset NAME (the Datasets "
        "page; default name: the file's, without extension) and make it the run's dataset "
        "input",
    )


def add_comparison_rules(parser: argparse.ArgumentParser) -> None:
    """The ``comparison rules`` group: ``--list-pairing``, ``--discovered`` and
    ``--allow-shape-mismatch`` (read back by :func:`comparison_options`)."""
    rules = parser.add_argument_group(
        "comparison rules",
        "How lists are paired, which fields count, and what wrong-shaped ground truth does.",
    )
    rules.add_argument(
        "--list-pairing",
        choices=LIST_PAIRINGS,
        help="pair list items as Stickler 1.0 does (stickler: min(m, n) pairs, a pair below "
        "the match threshold is one FD) or only pairs at or above it (strict: the rest FN + "
        "FA); default: each list's own 'pairing' in the schema (stickler unless set)",
    )
    rules.add_argument(
        "--discovered",
        choices=DISCOVERED_POLICIES,
        default="exclude",
        help="fields in the data but not in the schema: reported apart (exclude, the default) "
        "or counted in the overall, class and document figures (include)",
    )
    rules.add_argument(
        "--allow-shape-mismatch",
        action="store_true",
        help="ground truth whose shape contradicts the schema (a list where a single value is "
        "declared, ...) is left out of the figures and counted as invalid_expected, instead "
        "of stopping with exit 2",
    )


def _add_engine_options(parser: argparse.ArgumentParser) -> None:
    """Where and how the documents are compared: ``--no-rows``, ``--workers`` and the
    ``Spark`` group."""
    parser.add_argument(
        "--no-rows",
        action="store_true",
        help="keep per-document cells only, not one row per attribute (less memory)",
    )
    parser.add_argument(
        "--workers",
        default="1",
        metavar="N",
        help="compare documents in N processes (default 1; 0 or 'auto': one per CPU); "
        "the figures are identical to one process",
    )
    parser.add_argument(
        "--intervals",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="95%% intervals of precision, recall, F1 and accuracy from resampling "
        "documents (default on; see docs/statistics.md)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        metavar="N",
        help="seed of the intervals' resampling (default 0; same seed, same intervals)",
    )
    spark = parser.add_argument_group(
        "Spark",
        "Read the inputs (JSON Lines files or Parquet) and compare them on Apache Spark "
        "(pip install 'docevals-mlflow[spark]'; Java 17). The figures are identical to "
        "one machine's.",
    )
    spark.add_argument("--spark", action="store_true", help="compare with Spark")
    spark.add_argument(
        "--spark-master",
        metavar="URL",
        help="the Spark master (default local[*]: every core of this machine); implies --spark",
    )


def _add_embedding_options(parser: argparse.ArgumentParser) -> None:
    """The ``embeddings`` group: the model of SEMANTIC fields."""
    semantic = parser.add_argument_group(
        "embeddings",
        "The embedding model for fields whose schema method is SEMANTIC (cosine "
        "similarity against the field's threshold; each distinct text is embedded once).",
    )
    semantic.add_argument(
        "--embeddings-model", metavar="NAME", help="embedding model; enables SEMANTIC fields"
    )
    semantic.add_argument(
        "--embeddings-url",
        metavar="URL",
        help=f"an OpenAI-compatible API root (default {OPENAI_BASE_URL})",
    )
    semantic.add_argument(
        "--embeddings-key-env",
        metavar="NAME",
        help="the environment variable holding its key (default OPENAI_API_KEY for OpenAI, "
        "none for another --embeddings-url)",
    )


def _overall_value(report: dict[str, Any], metric: str) -> float | None:
    overall = report["overall"]
    value = overall["macro_f1"] if metric == "macro_f1" else overall["metrics"][metric]
    return None if value is None else float(value)


def comparison_options(args: argparse.Namespace) -> dict[str, Any]:
    """``list_pairing``, ``discovered`` and ``shape_mismatch`` from the options."""
    return {
        "list_pairing": args.list_pairing,
        "discovered": args.discovered,
        "shape_mismatch": "count" if args.allow_shape_mismatch else "error",
    }


def _spark_report(
    args: argparse.Namespace, schema: DocumentSchema | None, workers: int
) -> dict[str, Any]:
    """``--spark``: pair and compare the inputs on Spark; the same report dict."""
    if workers != 1:
        raise InputError(
            "--workers is for one machine; with --spark, the Spark master decides",
            expected="--spark-master local[N] (N cores) or a cluster's master URL",
        )
    if args.expected is None:
        raise InputError(
            "--spark reads files: give --expected, not --ground-truth-dataset",
            expected="--expected FILE (JSON Lines or Parquet)",
        )
    from docevals_mlflow.spark.inputs import compare_files_spark
    from docevals_mlflow.spark.session import DEFAULT_MASTER, session_scope

    with session_scope(args.spark_master or DEFAULT_MASTER) as session:
        comparison = compare_files_spark(
            session,
            args.expected,
            args.predicted,
            schema,
            keep_rows=not args.no_rows,
            **comparison_options(args),
        )
        report = comparison.to_report()
        comparison.unpersist()
    return report


def run(args: argparse.Namespace) -> int:
    """Compare, write the reports, log the run, and gate on thresholds."""
    from docevals_mlflow.cli.field_method_providers import field_method_providers
    from docevals_mlflow.core.atomic import atomic_write_text
    from docevals_mlflow.core.jsontext import report_json_text
    from docevals_mlflow.core.secrets import redact_text
    from docevals_mlflow.fields.schema import DocumentSchema
    from docevals_mlflow.reports.fields_markdown import render_fields_markdown

    # Thresholds first: a typo in them should not cost a whole comparison run.
    under = parse_thresholds("--fail-under", args.fail_under, FAIL_UNDER_METRICS)
    over = parse_thresholds("--fail-over", args.fail_over, FAIL_OVER_METRICS)
    _check_fields_paths(args)
    workers = _workers(args)
    dataset_name = _evaluation_dataset(args)
    schema = DocumentSchema.load(args.schema) if args.schema is not None else None
    providers = field_method_providers(args)
    if _on_spark(args):
        report = _spark_report(args, schema, workers)
    else:
        report = _local_report(args, schema, workers, providers)
    # Render everything before writing anything, so a failure leaves old files as they were.
    # The last guard: a provider's answers are redacted as they arrive, and nothing
    # that holds a key this process sends may reach a file.
    json_text = redact_text(report_json_text(report))
    markdown_text = render_fields_markdown(report) if args.markdown is not None else None
    atomic_write_text(args.output, json_text)
    if args.markdown is not None and markdown_text is not None:
        atomic_write_text(args.markdown, markdown_text)
    _print_outcome(args, report, providers)
    dashboard_text = write_dashboard(args, lambda: _dashboard(report))
    breached = breaches(lambda metric: _overall_value(report, metric), under=under, over=over)

    def assemble(options: Any) -> Any:
        from docevals_mlflow.tracking.assembly import assemble_fields

        # The texts just written are the run's too, so they are not rendered twice.
        run = assemble_fields(
            report,
            options,
            verdict=gate_verdict(breached, gated=bool(under or over)),
            markdown=markdown_text,
            dashboard=dashboard_text,
            report_json=json_text,
        )
        _use_dataset(run.writer, dataset_name, args.expected)
        return run

    logged = log_evaluation(
        args,
        assemble,
        default_run_name=args.output.stem,
        anchor=args.output,
        schema=schema,
        ground_truth=args.expected,
        # As SparkFieldComparison.log records it: the same figures, another engine.
        engine="spark" if _on_spark(args) else None,
    )
    _publish_dataset(logged, dataset_name, args.expected)
    return gate(breached)


def _use_dataset(writer: Any, name: str | None, expected: Path) -> None:
    """``--evaluation-dataset``: the dataset ``name`` is the run's ground-truth input."""
    if name is None:
        return
    from docevals_mlflow.tracking.dataset_evaluation import use_evaluation_dataset

    use_evaluation_dataset(writer, name, expected)


def _publish_dataset(logged: Any, name: str | None, expected: Path) -> None:
    """Publish the logged run's evaluation dataset; say where it is, or why it is not."""
    if logged is None or name is None:
        return
    from docevals_mlflow.tracking.dataset_evaluation import publish_for_run

    line, warning = publish_for_run(logged, name, expected)
    if line is not None:
        print(line)
    if warning is not None:
        print(f"docevals: warning: {warning}", file=sys.stderr)


def _evaluation_dataset(args: argparse.Namespace) -> str | None:
    """The name of the evaluation dataset ``--evaluation-dataset`` asks for, if any."""
    if args.evaluation_dataset is None:
        return None
    if args.expected is None:
        raise InputError(
            "--evaluation-dataset publishes the --expected file; a registered dataset "
            "(--ground-truth-dataset) is on the Datasets page already",
            source="--evaluation-dataset",
            expected="--expected FILE",
        )
    from docevals_mlflow.tracking.dataset_evaluation import default_name

    return args.evaluation_dataset.strip() or default_name(args.expected)


def _dashboard(report: Any) -> str:
    # Its own module: reports.dashboard also imports the evaluation and split pages.
    from docevals_mlflow.reports.fields_dashboard import render_fields_dashboard

    return render_fields_dashboard(report)


def _on_spark(args: argparse.Namespace) -> bool:
    return bool(args.spark or args.spark_master is not None)


def _check_fields_paths(args: argparse.Namespace) -> None:
    from docevals_mlflow.cli.judging import judge_paths

    judge_inputs, judge_outputs = judge_paths(args)
    check_paths(
        [
            Input("--schema", args.schema) if args.schema is not None else None,
            Input("--expected", args.expected) if args.expected is not None else None,
            Input("--predicted", args.predicted),
            *annotation_inputs(args),
            *judge_inputs,
        ],
        [*report_outputs(args), *judge_outputs],
    )


def _workers(args: argparse.Namespace) -> int:
    """``--workers`` as a number of processes (a warning when it had to be capped)."""
    from docevals_mlflow.fields.parallel import capped_workers

    try:
        workers, capped = capped_workers(args.workers)
    except InputError as exc:
        raise exc.located(source="--workers") from None
    if capped is not None:
        print(f"docevals: warning: --workers {capped}", file=sys.stderr)
    return workers


def _local_report(
    args: argparse.Namespace,
    schema: DocumentSchema | None,
    workers: int,
    providers: FieldMethodProviders,
) -> dict[str, Any]:
    """Pair and compare the inputs on this machine; the report dict."""
    from docevals_mlflow.fields.batch import compare_documents

    # Both unpaired lists are complete here (both sides are indexed first), which
    # compare_documents needs since it takes them before the pairs.
    pairs, expected_only, predicted_only = paired_inputs(args)
    batch = compare_documents(
        pairs,
        schema,
        keep_rows=not args.no_rows,
        providers=providers.providers,
        expected_only=expected_only,
        predicted_only=predicted_only,
        workers=workers,
        **comparison_options(args),
    )
    report: dict[str, Any] = batch.to_report(intervals=_interval_settings(args))
    return report


def _interval_settings(args: argparse.Namespace) -> Any:
    """``--intervals``/``--no-intervals`` and ``--seed`` as ``to_report``'s ``intervals``."""
    from docevals_mlflow.core.statistics.cluster_intervals import IntervalSettings

    return args.intervals and IntervalSettings(seed=args.seed)


def _print_outcome(
    args: argparse.Namespace, report: dict[str, Any], providers: FieldMethodProviders
) -> None:
    """The summary, calibration and usage lines, where the reports went, and warnings."""
    from docevals_mlflow.cli.fields_messages import (
        fields_summary,
        invalid_expected_warning,
        undecided_warning,
        unparsed_warning,
    )

    print(fields_summary(report))
    calibration = calibration_line(report)
    if calibration is not None:
        print(calibration)
    usage = providers.usage_line()
    if usage is not None:
        print(usage)
    print(f"report: {args.output}" + (f" (Markdown: {args.markdown})" if args.markdown else ""))
    for warning in (
        undecided_warning(report),
        unparsed_warning(report),
        invalid_expected_warning(report),
        providers.pairing_warning(),
    ):
        if warning is not None:
            print(warning, file=sys.stderr)
