"""``docevals fields``: many documents compared field by field with ground truth."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from docevals_mlflow.cli.annotations import add_run_annotations, annotation_inputs
from docevals_mlflow.cli.common import (
    Input,
    add_output_options,
    add_tracking_options,
    check_paths,
    log_evaluation,
    report_outputs,
)
from docevals_mlflow.cli.datasets import add_dataset_option, paired_inputs
from docevals_mlflow.cli.diagnostics import calibration_line
from docevals_mlflow.cli.judging import (
    add_judge_options,
    cost_text,
    judge_config,
    judge_paths,
    judge_runtime,
    options_text,
)
from docevals_mlflow.cli.thresholds import breaches, gate, gate_verdict, parse_thresholds
from docevals_mlflow.core.atomic import atomic_write_text
from docevals_mlflow.core.formatting import metric_text as figure_text
from docevals_mlflow.core.jsontext import report_json_text
from docevals_mlflow.core.secrets import redact_text
from docevals_mlflow.errors import ConfigurationError, InputError
from docevals_mlflow.fields.batch import compare_documents
from docevals_mlflow.fields.parallel import capped_workers
from docevals_mlflow.fields.schema import LIST_PAIRINGS, DocumentSchema
from docevals_mlflow.fields.shapes import DISCOVERED_POLICIES
from docevals_mlflow.reports.fields_markdown import render_fields_markdown

OPENAI_API_ROOT = "https://api.openai.com/v1"
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
    fields.add_argument(
        "--schema", type=Path, help="schema (.json, .yaml); without it every field is inferred"
    )
    expected = fields.add_mutually_exclusive_group(required=True)
    expected.add_argument(
        "--expected", type=Path, help="ground truth (JSON Lines, folder of JSON, or Parquet)"
    )
    add_dataset_option(fields, exclusive=expected)
    fields.add_argument(
        "--predicted",
        required=True,
        type=Path,
        help="predictions (JSON Lines, folder of JSON, or Parquet)",
    )
    add_output_options(fields)
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
    rules = fields.add_argument_group(
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
    fields.add_argument(
        "--no-rows",
        action="store_true",
        help="keep per-document cells only, not one row per attribute (less memory)",
    )
    fields.add_argument(
        "--workers",
        default="1",
        metavar="N",
        help="compare documents in N processes (default 1; 0 or 'auto': one per CPU); "
        "the figures are identical to one process",
    )
    spark = fields.add_argument_group(
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
    add_judge_options(fields, fields=True)
    semantic = fields.add_argument_group(
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
        help=f"an OpenAI-compatible API root (default {OPENAI_API_ROOT})",
    )
    semantic.add_argument(
        "--embeddings-key-env",
        metavar="NAME",
        help="the environment variable holding its key (default OPENAI_API_KEY for OpenAI, "
        "none for another --embeddings-url)",
    )
    add_tracking_options(fields)
    add_run_annotations(fields, prompt=True)
    fields.set_defaults(handler=run)


class FieldMethodProviders:
    """The SEMANTIC and LLM providers the options ask for, and what they used.

    ``cache`` (``--judge-cache``) keeps the LLM method's answers on disk.
    """

    def __init__(self, embeddings: Any = None, llm: Any = None, cache: Any = None) -> None:
        # Imported here: they pull in httpx, which a purely deterministic run skips.
        from docevals_mlflow.evaluation.field_providers import field_providers

        self.embeddings = embeddings
        self.cache = cache
        self.comparators: list[Any] = []
        self.providers = dict(field_providers(embeddings=embeddings, llm=llm, cache=cache))
        for method, build in list(self.providers.items()):
            self.providers[method] = self._tracked(build)

    def _tracked(self, build: Any) -> Any:
        def tracked(spec: Any) -> Any:
            comparator = build(spec)
            self.comparators.append(comparator)
            return comparator

        return tracked

    def pairing_warning(self) -> str | None:
        """A warning when embeddings failed while list items were being paired (they
        were paired by text similarity instead), else ``None``."""
        fallbacks = [
            comparator
            for comparator in self.comparators
            if getattr(comparator, "pairing_fallbacks", 0)
        ]
        if not fallbacks:
            return None
        count = sum(comparator.pairing_fallbacks for comparator in fallbacks)
        return (
            f"docevals: warning: embeddings failed while pairing list items ({count} "
            f"time{'s' if count != 1 else ''}; first: {fallbacks[0].pairing_error}); those "
            "items were paired by text similarity instead, and their SEMANTIC values were "
            "compared as usual"
        )

    def usage_line(self) -> str | None:
        """``field methods: N requests, X input tokens, Y output tokens[, $Z][; K
        answers from the cache]`` or ``None`` when no provider was used.

        ``requests`` counts HTTP requests, failed ones included; the cost appears with
        ``--prices`` (marked partial when a model has no price).
        """
        from docevals_mlflow.judges.usage import total_usage

        usages = [
            comparator.usage for comparator in self.comparators if hasattr(comparator, "usage")
        ]
        if self.embeddings is not None:
            usages.append(self.embeddings.usage)
        if not usages:
            return None
        total = total_usage(usages)
        line = (
            f"field methods: {total.requests} requests, {total.input_tokens} input tokens, "
            f"{total.output_tokens} output tokens"
        ) + cost_text(total.cost_usd, partial=total.cost_is_partial)
        if self.cache is not None and self.cache.hits:
            line += f"; {self.cache.hits} answers from the cache"
        return line


def field_method_providers(
    args: argparse.Namespace, environ: Mapping[str, str] | None = None
) -> FieldMethodProviders:
    """The SEMANTIC and LLM providers the options ask for (none by default).

    Raises:
        ConfigurationError: a key the options need is not in the environment.
    """
    env = os.environ if environ is None else environ
    runtime = judge_runtime(args, environ)
    embeddings = None
    if args.embeddings_model:
        from docevals_mlflow.judges.embeddings import EmbeddingClient

        url = args.embeddings_url or OPENAI_API_ROOT
        from docevals_mlflow.judges.config import check_base_url

        try:
            check_base_url(url)
        except ValueError as exc:
            raise InputError(f"--embeddings-url: {exc}") from None
        # An OpenAI key goes to OpenAI only, never to some other server by default.
        variable = args.embeddings_key_env or (
            "OPENAI_API_KEY" if args.embeddings_url is None else None
        )
        if variable is not None and not env.get(variable):
            raise ConfigurationError(
                f"--embeddings-model needs an API key: set {variable} in the environment"
            )
        embeddings = EmbeddingClient(
            model=args.embeddings_model,
            base_url=url,
            api_key=env.get(variable) if variable else None,
            api_key_env=None,
            prices=runtime.prices,
        )
    elif args.embeddings_url or args.embeddings_key_env:
        given = [
            option
            for option, value in (
                ("--embeddings-url", args.embeddings_url),
                ("--embeddings-key-env", args.embeddings_key_env),
            )
            if value
        ]
        raise InputError(
            f"{options_text(given)} need{'s' if len(given) == 1 else ''} --embeddings-model",
            expected="the embedding model's name",
        )
    config = judge_config(args, environ)
    llm = runtime.judge(config).adapter if config is not None else None
    return FieldMethodProviders(embeddings, llm, cache=runtime.cache if llm is not None else None)


def _overall_value(report: dict[str, Any], metric: str) -> float | None:
    overall = report["overall"]
    value = overall["macro_f1"] if metric == "macro_f1" else overall["metrics"][metric]
    return None if value is None else float(value)


def _fields_summary(report: dict[str, Any]) -> str:
    metrics = report["overall"]["metrics"]
    unpaired = report["unpaired"]
    return (
        f"documents: {report['overall']['documents']}; micro precision "
        f"{figure_text(metrics['precision'])}, recall {figure_text(metrics['recall'])}, "
        f"F1 {figure_text(metrics['f1'])}; macro F1 {figure_text(report['overall']['macro_f1'])}; "
        f"unpaired: {len(unpaired['expected_only'])} expected only, "
        f"{len(unpaired['predicted_only'])} predicted only"
    )


def undecided_warning(report: Mapping[str, Any]) -> str | None:
    """The stderr line for comparisons a provider left undecided, or ``None``."""
    overall = report["overall"]
    count = int(overall.get("undecided") or 0)
    if not count:
        return None
    reasons = overall.get("undecided_reasons") or ["no reason recorded"]
    more = f" (and {len(reasons) - 1} other reasons)" if len(reasons) > 1 else ""
    return (
        f"docevals: warning: {count} field comparison{'s' if count != 1 else ''} "
        f"{'were' if count != 1 else 'was'} not decided ({reasons[0]}{more}); counted as FD, "
        "so the metrics are lower bounds"
    )


def comparison_options(args: argparse.Namespace) -> dict[str, Any]:
    """``list_pairing``, ``discovered`` and ``shape_mismatch`` from the options."""
    return {
        "list_pairing": args.list_pairing,
        "discovered": args.discovered,
        "shape_mismatch": "count" if args.allow_shape_mismatch else "error",
    }


def unparsed_warning(report: Mapping[str, Any]) -> str | None:
    """The stderr line for numeric values that do not read as numbers, or ``None``."""
    count = int(report["overall"].get("unparsed") or 0)
    if not count:
        return None
    fields = sorted(
        (
            entry
            for entry in (*report["fields"], *report.get("discovered", {}).get("fields", []))
            if entry.get("unparsed")
        ),
        key=lambda entry: -int(entry["unparsed"]),
    )
    named = ", ".join(f"{entry['template']} ({entry['unparsed']})" for entry in fields[:3])
    more = f" and {len(fields) - 3} more fields" if len(fields) > 3 else ""
    return (
        f"docevals: warning: {count} value{'s' if count != 1 else ''} of numeric fields "
        f"{'do' if count != 1 else 'does'} not read as numbers ({named}{more}); such values "
        "match only a value of identical text"
    )


def invalid_expected_warning(report: Mapping[str, Any]) -> str | None:
    """The stderr line for documents left out for wrong-shaped ground truth, or ``None``."""
    invalid = report.get("invalid_expected")
    if not invalid:
        return None
    first = invalid["examples"][0]
    where = ", ".join(str(part) for part in (first.get("source"), first.get("line")) if part)
    count = int(invalid["documents"])
    return (
        f"docevals: warning: {count} document{'s' if count != 1 else ''} left out of the "
        f"figures: ground truth of the wrong shape (first: {where + ', ' if where else ''}"
        f"document {first['id']!r} at {first['path']}: {first['found']} where the schema "
        f"declares {first['schema']}); counted as invalid_expected"
    )


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
    # Thresholds first: a typo in them should not cost a whole comparison run.
    under = parse_thresholds("--fail-under", args.fail_under, FAIL_UNDER_METRICS)
    over = parse_thresholds("--fail-over", args.fail_over, FAIL_OVER_METRICS)
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
    try:
        workers, capped = capped_workers(args.workers)
    except InputError as exc:
        raise exc.located(source="--workers") from None
    if capped is not None:
        print(f"docevals: warning: --workers {capped}", file=sys.stderr)
    schema = DocumentSchema.load(args.schema) if args.schema is not None else None
    providers = field_method_providers(args)
    if args.spark or args.spark_master is not None:
        report = _spark_report(args, schema, workers)
    else:
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
        report = batch.to_report()
    # Render everything before writing anything, so a failure leaves old files as they were.
    # The last guard: a provider's answers are redacted as they arrive, and nothing
    # that holds a key this process sends may reach a file.
    json_text = redact_text(report_json_text(report))
    markdown_text = render_fields_markdown(report) if args.markdown is not None else None
    atomic_write_text(args.output, json_text)
    if args.markdown is not None and markdown_text is not None:
        atomic_write_text(args.markdown, markdown_text)
    print(_fields_summary(report))
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
    breached = breaches(lambda metric: _overall_value(report, metric), under=under, over=over)

    def assemble(options: Any) -> Any:
        from docevals_mlflow.tracking.assembly import assemble_fields

        # The texts just written are the run's too, so they are not rendered twice.
        return assemble_fields(
            report,
            options,
            verdict=gate_verdict(breached, gated=bool(under or over)),
            markdown=markdown_text,
            report_json=json_text,
        )

    log_evaluation(
        args,
        assemble,
        default_run_name=args.output.stem,
        anchor=args.output,
        schema=schema,
        ground_truth=args.expected,
        # As SparkFieldComparison.log records it: the same figures, another engine.
        engine="spark" if args.spark or args.spark_master is not None else None,
    )
    return gate(breached)
