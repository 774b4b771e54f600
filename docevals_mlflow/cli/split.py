"""``docevals split``: page split and classification of document packets."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docevals_mlflow.cli.annotations import add_run_annotations, annotation_inputs
from docevals_mlflow.cli.options import (
    add_dashboard_option,
    add_output_options,
    add_tracking_options,
    write_dashboard,
)
from docevals_mlflow.cli.paths import Input, Output, check_paths, report_outputs
from docevals_mlflow.cli.run_logging import log_evaluation
from docevals_mlflow.cli.thresholds import (
    add_threshold_option,
    breaches,
    gate,
    gate_verdict,
    parse_thresholds,
)
from docevals_mlflow.core.formatting import metric_text
from docevals_mlflow.errors import InputError

if TYPE_CHECKING:
    from docevals_mlflow.split.report import SplitReport

SPLIT_FAIL_UNDER: dict[str, Callable[[SplitReport], float | None]] = {
    "page_accuracy": lambda report: report.page_level_accuracy.accuracy,
    "accuracy_without_order": lambda report: report.split_accuracy_without_order.accuracy,
    "accuracy_with_order": lambda report: report.split_accuracy_with_order.accuracy,
    "boundary_f1": lambda report: report.boundaries.f1,
    "section_f1": lambda report: report.matching.exact.f1,
    "class_macro_f1": lambda report: report.classes.macro_f1,
    "packet_score": lambda report: report.graded.packet_score,
}
"""Metrics ``docevals split --fail-under`` accepts (micro over packets; packet score is
the mean over packets)."""


def register(commands: Any) -> None:
    """Add the ``split`` subcommand."""
    split = commands.add_parser(
        "split",
        help="evaluate how document packets are split into documents and classified",
        description="Compare predicted page splits and classes of document packets with "
        "ground truth: the seed's page-level accuracy and split accuracy (with and without "
        "page order), per-class and boundary scores, one-to-one section matching and graded "
        "clustering/ordering scores. Inputs are folders of <packet id>.json files, JSON "
        'Lines files of {"id", "sections"|"pages"} records, or single JSON packets '
        '({"sections": [{"section_id", "document_class", "page_indices"}]}); packets are '
        "paired by id.",
    )
    split.add_argument("--expected", required=True, type=Path, help="ground truth (file/folder)")
    split.add_argument("--predicted", required=True, type=Path, help="predictions (file/folder)")
    add_output_options(split)
    add_dashboard_option(split)
    split.add_argument(
        "--heatmap", type=Path, help="also write the confusion-matrix heatmap (HTML) here"
    )
    split.add_argument(
        "--max-packets",
        type=int,
        default=20,
        metavar="N",
        help="packets with mistakes that get a section table in the Markdown report "
        "(weakest first; default 20)",
    )
    split.add_argument(
        "--intervals",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="95%% intervals of the micro accuracies and of boundary and section precision, "
        "recall and F1 from resampling packets (default on; see docs/statistics.md)",
    )
    split.add_argument(
        "--seed",
        type=int,
        default=0,
        metavar="N",
        help="seed of the intervals' resampling (default 0; same seed, same intervals)",
    )
    add_threshold_option(split, "--fail-under", tuple(SPLIT_FAIL_UNDER), subject="a metric")
    add_tracking_options(split)
    add_run_annotations(split, prompt=True)
    split.set_defaults(handler=run)


def split_summary_line(report: SplitReport) -> str:
    """One line for the terminal."""
    pages = report.page_level_accuracy
    unordered = report.split_accuracy_without_order
    ordered = report.split_accuracy_with_order
    unpaired = report.unpaired
    return (
        f"packets: {report.packet_count}; page-level accuracy {metric_text(pages.accuracy)} "
        f"({pages.correct_pages}/{pages.total_pages}); split accuracy without order "
        f"{metric_text(unordered.accuracy)} ({unordered.correct_sections}/"
        f"{unordered.total_sections}), with order {metric_text(ordered.accuracy)} "
        f"({ordered.correct_sections}/{ordered.total_sections}); boundary F1 "
        f"{metric_text(report.boundaries.f1)}; section F1 {metric_text(report.matching.exact.f1)}; "
        f"unpaired: {len(unpaired.expected_only)} expected only, "
        f"{len(unpaired.predicted_only)} predicted only"
    )


def run(args: argparse.Namespace) -> int:
    """Evaluate, write the reports, log the run, and gate on thresholds."""
    from docevals_mlflow.reports.split_markdown import render_split_markdown
    from docevals_mlflow.reports.split_plot import render_split_heatmap

    thresholds = parse_thresholds("--fail-under", args.fail_under, tuple(SPLIT_FAIL_UNDER))
    if args.max_packets < 0:
        raise InputError(f"--max-packets {args.max_packets}", expected="a count >= 0")
    check_paths(
        [
            Input("--expected", args.expected),
            Input("--predicted", args.predicted),
            *annotation_inputs(args),
        ],
        [
            *report_outputs(args),
            Output("--heatmap", args.heatmap) if args.heatmap is not None else None,
        ],
    )
    report = _evaluate(args)
    # Render everything before writing anything: a failure leaves old files untouched.
    json_text = report.to_json()
    markdown_text = render_split_markdown(report, max_packets=args.max_packets)
    heatmap_text = render_split_heatmap(report) if args.heatmap is not None else None
    _write_and_print(args, report, json_text, markdown_text, heatmap_text)
    write_dashboard(args, lambda: _dashboard(report))
    breached = breaches(lambda name: SPLIT_FAIL_UNDER[name](report), under=thresholds)

    def assemble(options: Any) -> Any:
        from docevals_mlflow.tracking.assembly import assemble_split

        # The texts just written are the run's too, so they are not rendered twice.
        return assemble_split(
            report,
            options,
            verdict=gate_verdict(breached, gated=bool(thresholds)),
            markdown=markdown_text,
            heatmap=heatmap_text,
            report_json=json_text,
        )

    log_evaluation(
        args,
        assemble,
        default_run_name=args.output.stem,
        anchor=args.output,
        ground_truth=args.expected,
    )
    return gate(breached)


def _dashboard(report: SplitReport) -> str:
    from docevals_mlflow.reports.split_dashboard import render_split_dashboard

    return render_split_dashboard(report)


def _evaluate(args: argparse.Namespace) -> SplitReport:
    """Pair the packets by id and evaluate them (none on both sides is an error)."""
    from docevals_mlflow.split.batch import evaluate_split_batch
    from docevals_mlflow.split.inputs import pair_packets

    paired = pair_packets(args.expected, args.predicted)
    if not paired.pairs:
        raise InputError(
            "no packet is on both sides "
            f"({len(paired.expected_only)} expected, {len(paired.predicted_only)} predicted)",
            source=str(args.predicted),
            expected="packet ids (file names or 'id's) that match the expected side's",
        )
    from docevals_mlflow.core.statistics.cluster_intervals import IntervalSettings

    return evaluate_split_batch(
        paired.pairs,
        expected_only=paired.expected_only,
        predicted_only=paired.predicted_only,
        intervals=args.intervals and IntervalSettings(seed=args.seed),
    )


def _write_and_print(
    args: argparse.Namespace,
    report: SplitReport,
    json_text: str,
    markdown_text: str,
    heatmap_text: str | None,
) -> None:
    """Write the rendered reports, then the summary line and where they went."""
    from docevals_mlflow.core.atomic import atomic_write_text

    atomic_write_text(args.output, json_text)
    if args.markdown is not None:
        atomic_write_text(args.markdown, markdown_text)
    if args.heatmap is not None and heatmap_text is not None:
        atomic_write_text(args.heatmap, heatmap_text)
    print(split_summary_line(report))
    written = [f"report: {args.output}"]
    if args.markdown is not None:
        written.append(f"Markdown: {args.markdown}")
    if args.heatmap is not None:
        written.append(f"heatmap: {args.heatmap}")
    print(" · ".join(written))


__all__ = ["SPLIT_FAIL_UNDER", "register", "run", "split_summary_line"]
